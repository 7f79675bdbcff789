--[[
  Admits one message through every quota layer at once: all or nothing, on Redis time.

  Each layer is a GCRA bucket split into slices: slice 1 is shared by every class, the
  others are reserves that only their class and the classes above it may use. A slice
  keeps one number, its theoretical arrival time (TAT, integer microseconds), in field
  "<slice>" of the layer's hash. Field "x" is when the hash expires (us): it outlives every
  TAT and ticket in it by at least a second, and is pushed 10 s further only when a new
  one would come too close, so most decisions need no PEXPIRE.

  The message goes at t = the earliest time every layer can take it (in the first allowed
  slice that grants now, else the slice with the earliest t). If t is now, every layer is
  charged and the answer is "granted". If t is within the caller's horizon, every layer
  is charged at t and the answer is "booked": the slot is the caller's, come back at t,
  no second call needed. Beyond the horizon nothing is charged; if the binding layer is
  in ARGV[3], the caller gets a waitlist ticket instead (field "w<slice>"): its own turn
  to come back, paced at that layer's rate, so a deep backlog returns one by one rather
  than all at once.

  KEYS[1..5]  layer buckets (hashes): provider, receiver, pool, campaign, tenant
  ARGV[1]     allowed slices, bitmask (bit s-1 = slice s), tried lowest first
  ARGV[2]     horizon, microseconds: how far ahead a slot may be booked
  ARGV[3]     layers whose denial hands out a waitlist ticket, bitmask (bit l-1 = layer l)
  ARGV[4..6]  share of each slice (slice 1, 2, 3), 0 for a slice that is off
  ARGV[7..16] per layer l: emission interval at the full rate (us; 0 = no limit) at 5+2l,
              and burst at 6+2l

  Returns { code, waitMs, layer, slice }
    code 0 granted now; 1 booked: go in waitMs; 2 denied: ask again in waitMs.
    layer: the binding layer (1..5) when not granted.
]]
local allowed = tonumber(ARGV[1])
local horizon = tonumber(ARGV[2])
local ticketLayers = tonumber(ARGV[3])
local share = { tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]) }

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function bit(mask, i)
  return math.floor(mask / 2 ^ (i - 1)) % 2 == 1
end

-- Read every limited layer once: its three slice TATs and its expiry.
local limited, fields, interval, burst = {}, {}, {}, {}
for l = 1, 5 do
  local T0 = tonumber(ARGV[5 + 2 * l])
  if T0 > 0 then
    limited[#limited + 1] = l
    interval[l] = T0
    burst[l] = tonumber(ARGV[6 + 2 * l])
    fields[l] = redis.call('HMGET', KEYS[l], '1', '2', '3', 'x')
  end
end

-- A slice s of a layer runs at share[s] of its rate: interval T0/share, burst*share at once.
local function slot(l, s)
  local T = interval[l] / share[s]
  local dvt = math.max(1, burst[l] * share[s]) * T
  local tat = math.max(tonumber(fields[l][s]) or 0, now)
  return tat, T, tat + T - dvt
end

local bestAt, bestSlice, bestLayer
for s = 1, 3 do
  if bit(allowed, s) and share[s] > 0 then
    local at, layer = now, 0
    for _, l in ipairs(limited) do
      local _, _, allowAt = slot(l, s)
      if allowAt > at then
        at, layer = allowAt, l
      end
    end
    if bestAt == nil or at < bestAt then
      bestAt, bestSlice, bestLayer = at, s, layer
    end
    if at <= now then break end
  end
end

if bestAt == nil then
  return { 2, 1000, 0, 0 }
end

-- Writes a TAT or ticket. An expired hash is a full bucket, so expiry loses nothing and
-- idle receivers and campaigns cost no memory; the hash must only outlive what it holds.
local function store(l, field, value)
  local x = tonumber(fields[l][4]) or 0
  if value + 1000000 > x then
    x = value + 10000000
    redis.call('HSET', KEYS[l], field, value, 'x', x)
    redis.call('PEXPIRE', KEYS[l], math.ceil((x - now) / 1000))
  else
    redis.call('HSET', KEYS[l], field, value)
  end
end

local wait = bestAt - now
if wait > horizon then
  local back = bestAt - horizon
  if bestLayer > 0 and bit(ticketLayers, bestLayer) then
    local _, T = slot(bestLayer, bestSlice)
    local field = 'w' .. bestSlice
    back = math.max(back, tonumber(redis.call('HGET', KEYS[bestLayer], field)) or 0)
    store(bestLayer, field, math.floor(back + T))
  end
  return { 2, math.max(1, math.ceil((back - now) / 1000)), bestLayer, bestSlice }
end

-- Charge every limited layer at the slot time.
for _, l in ipairs(limited) do
  local tat, T = slot(l, bestSlice)
  store(l, bestSlice, math.floor(math.max(tat, bestAt) + T))
end

if wait <= 0 then
  return { 0, 0, 0, bestSlice }
end
return { 1, math.ceil(wait / 1000), bestLayer, bestSlice }
