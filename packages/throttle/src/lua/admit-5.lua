--[[
  Admits one message through every quota layer at once: all or nothing, on Redis time.

  Each layer is a GCRA bucket split into slices: slice 1 is shared by every class, the
  others are reserves that only their class and the classes above it may use. A slice
  keeps one number, its theoretical arrival time (TAT, integer microseconds).

  The message goes at t = the earliest time every layer can take it (in the first allowed
  slice that grants now, else the slice with the earliest t). If t is now, every layer is
  charged and the answer is "granted". If t is within the caller's horizon, every layer
  is charged at t and the answer is "booked": the slot is the caller's, come back at t,
  no second call needed. Beyond the horizon nothing is charged; if the binding layer is
  in ARGV[4], the caller gets a waitlist ticket instead: its own turn to come back, paced
  at that layer's rate (field w<slice>), so a deep backlog returns one by one rather than
  all at once.

  KEYS[1..5]  layer buckets (hashes): provider, receiver, pool, campaign, tenant
  ARGV[1]     number of slices S
  ARGV[2]     allowed slices, bitmask (bit s-1 = slice s), tried lowest first
  ARGV[3]     horizon, microseconds: how far ahead a slot may be booked
  ARGV[4]     layers whose denial hands out a waitlist ticket, bitmask (bit l-1 = layer l)
  ARGV[5..]   per layer l, per slice s, two numbers at 4 + ((l-1)*S + (s-1))*2 + 1:
              emission interval T (us; 0 = no limit) and burst tolerance (us, burst*T)

  Returns { code, waitMs, layer, slice }
    code 0 granted now; 1 booked: go in waitMs; 2 denied: ask again in waitMs.
    layer: the binding layer (1..5) when not granted.
]]
local S = tonumber(ARGV[1])
local allowed = tonumber(ARGV[2])
local horizon = tonumber(ARGV[3])
local ticketLayers = tonumber(ARGV[4])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function bit(mask, i)
  return math.floor(mask / 2 ^ (i - 1)) % 2 == 1
end

local function param(l, s, k)
  return tonumber(ARGV[4 + ((l - 1) * S + (s - 1)) * 2 + k])
end

local bestAt, bestSlice, bestLayer, bestTats
for s = 1, S do
  if bit(allowed, s) then
    local at, layer, tats = now, 0, {}
    for l = 1, 5 do
      local T = param(l, s, 1)
      if T > 0 then
        -- A TAT in the past is an idle bucket: max() also keeps a clock step back from minting tokens.
        local tat = math.max(tonumber(redis.call('HGET', KEYS[l], tostring(s))) or 0, now)
        tats[l] = tat
        local allowAt = tat + T - param(l, s, 2)
        if allowAt > at then
          at, layer = allowAt, l
        end
      end
    end
    if bestAt == nil or at < bestAt then
      bestAt, bestSlice, bestLayer, bestTats = at, s, layer, tats
    end
    if at <= now then break end
  end
end

if bestAt == nil then
  return { 2, 1000, 0, 0 }
end

local wait = bestAt - now
if wait > horizon then
  local back = bestAt - horizon
  if bestLayer > 0 and bit(ticketLayers, bestLayer) then
    local field = 'w' .. bestSlice
    local w = tonumber(redis.call('HGET', KEYS[bestLayer], field)) or 0
    if w > back then back = w end
    redis.call('HSET', KEYS[bestLayer], field, back + param(bestLayer, bestSlice, 1))
    local ttl = math.ceil((back - now) / 1000) + 2000
    if redis.call('PTTL', KEYS[bestLayer]) < ttl then
      redis.call('PEXPIRE', KEYS[bestLayer], ttl)
    end
  end
  return { 2, math.max(1, math.ceil((back - now) / 1000)), bestLayer, bestSlice }
end

-- Charge every limited layer at the slot time.
for l = 1, 5 do
  local tat = bestTats[l]
  if tat ~= nil then
    local newTat = math.max(tat, bestAt) + param(l, bestSlice, 1)
    redis.call('HSET', KEYS[l], tostring(bestSlice), newTat)
    -- An expired bucket is a full one, so expiry is lossless once TAT has passed.
    local ttl = math.ceil((newTat - now) / 1000) + 1000
    if redis.call('PTTL', KEYS[l]) < ttl then
      redis.call('PEXPIRE', KEYS[l], ttl)
    end
  end
end

if wait <= 0 then
  return { 0, 0, 0, bestSlice }
end
return { 1, math.ceil(wait / 1000), bestLayer, bestSlice }
