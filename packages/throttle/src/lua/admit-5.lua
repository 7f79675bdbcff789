--[[
  Admits one message through every quota layer at once: all or nothing, on Redis time.

  Each layer is a GCRA bucket split into slices: slice 1 is shared by every class, the
  others are reserves that only their class and the classes above it may use. A slice
  keeps one number, its theoretical arrival time (TAT, integer microseconds).

  If every layer grants now, all are charged. If some layer is busy but can grant within
  the caller's horizon, the slot is *booked*: the binding layer(s) are charged at the slot
  time, the others are not charged, and the caller returns at the slot with those layers
  marked paid (ARGV[3]). Beyond the horizon nothing is charged; if the binding layer is
  in ARGV[5], the caller gets a waitlist ticket instead: the time it should come back,
  paced at the layer's rate (field w<slice>), so a deep backlog returns one by one rather
  than all at once.

  KEYS[1..5]  layer buckets (hashes): provider, receiver, pool, campaign, tenant
  ARGV[1]     number of slices S
  ARGV[2]     allowed slices, bitmask (bit s-1 = slice s), tried lowest first
  ARGV[3]     paid layers, bitmask (bit l-1 = layer l): booked earlier, not charged again
  ARGV[4]     horizon, microseconds: how far ahead a slot may be booked
  ARGV[5]     layers whose denial hands out a waitlist ticket, bitmask
  ARGV[6..]   per layer l, per slice s, two numbers at 5 + ((l-1)*S + (s-1))*2 + 1:
              emission interval T (us; 0 = no limit) and burst tolerance (us, burst*T)

  Returns { code, waitMs, layer, slice, paidMask }
    code 0 granted now; 1 booked: go in waitMs, layers in paidMask are paid;
    code 2 denied: beyond the horizon, ask again in waitMs; layer = the binding layer.
]]
local S = tonumber(ARGV[1])
local allowed = tonumber(ARGV[2])
local paid = tonumber(ARGV[3])
local horizon = tonumber(ARGV[4])
local ticketLayers = tonumber(ARGV[5])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function bit(mask, i)
  return math.floor(mask / 2 ^ (i - 1)) % 2 == 1
end

local function param(l, s, k)
  return tonumber(ARGV[5 + ((l - 1) * S + (s - 1)) * 2 + k])
end

local bestAt, bestSlice, bestLayer
local bestTats, bestAllow
for s = 1, S do
  if bit(allowed, s) then
    local at, layer = now, 0
    local tats, allow = {}, {}
    for l = 1, 5 do
      local T = param(l, s, 1)
      if T > 0 and not bit(paid, l) then
        local tat = tonumber(redis.call('HGET', KEYS[l], tostring(s))) or 0
        if tat < now then tat = now end
        tats[l] = tat
        allow[l] = tat + T - param(l, s, 2)
        if allow[l] > at then
          at = allow[l]
          layer = l
        end
      end
    end
    if bestAt == nil or at < bestAt then
      bestAt, bestSlice, bestLayer, bestTats, bestAllow = at, s, layer, tats, allow
    end
    if at <= now then break end
  end
end

if bestAt == nil then
  return { 2, 0, 0, 0, 0 }
end

local wait = bestAt - now
if wait > horizon then
  local back = bestAt - horizon
  if bestLayer > 0 and bit(ticketLayers, bestLayer) then
    local field = 'w' .. bestSlice
    local T = param(bestLayer, bestSlice, 1)
    local w = tonumber(redis.call('HGET', KEYS[bestLayer], field)) or 0
    if w > back then back = w end
    redis.call('HSET', KEYS[bestLayer], field, back + T)
    local ttl = math.ceil((back + T - now) / 1000) + 1000
    if redis.call('PTTL', KEYS[bestLayer]) < ttl then
      redis.call('PEXPIRE', KEYS[bestLayer], ttl)
    end
  end
  return { 2, math.ceil((back - now) / 1000), bestLayer, bestSlice, 0 }
end

-- Charge: everything when granted now; only the binding layers when booked.
local newPaid = paid
for l = 1, 5 do
  local tat = bestTats[l]
  if tat ~= nil and (wait <= 0 or bestAllow[l] >= bestAt) then
    local T = param(l, bestSlice, 1)
    local newTat = tat + T
    redis.call('HSET', KEYS[l], tostring(bestSlice), newTat)
    -- An expired bucket is a full one, so expiry is lossless once TAT has passed.
    local ttl = math.ceil((newTat - now) / 1000) + 1000
    if redis.call('PTTL', KEYS[l]) < ttl then
      redis.call('PEXPIRE', KEYS[l], ttl)
    end
    newPaid = newPaid + (bit(newPaid, l) and 0 or 2 ^ (l - 1))
  end
end

if wait <= 0 then
  return { 0, 0, 0, bestSlice, newPaid }
end
return { 1, math.ceil(wait / 1000), bestLayer, bestSlice, newPaid }
