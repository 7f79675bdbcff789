--[[
  Admits one message through every quota layer at once: all or nothing, on Redis time.

  Each layer is a GCRA bucket split into slices: slice 1 is shared by every class, the
  others are reserves that only their class and the classes above it may use. A slice
  keeps one number, its theoretical arrival time (TAT, integer microseconds), in field
  "<slice>" of the layer's hash. Field "x" is when the hash expires (us): it outlives every
  TAT and line in it by at least a second, and is pushed 10 s further only when a new one
  would come too close, so most decisions need no PEXPIRE.

  The message goes at t = the earliest time every layer can take it (in the first allowed
  slice that grants now, else the slice with the earliest t). If t is now, every layer is
  charged and the answer is "granted". If t is within the caller's horizon, every layer
  is charged at t and the answer is "booked": the slot is the caller's, come back at t,
  no second call needed. Beyond the horizon nothing is charged.

  Lending. A reserve the caller may not use is lent to it for one slot when, after that slot,
  the classes it is kept for could still go within ARGV[20] at every layer: its idle
  part is used, and room for them within lendAhead is kept. So a lower class fills what a
  quiet critical class leaves, and a critical message arriving later waits at most
  lendAhead for its own slice.

  The line. A layer in ARGV[3] that is busy beyond the horizon hands out tickets instead of
  a bare wait: numbered places in a line per (layer, slice), kept as "n<s>" (the last
  number handed out), "v<s>" (the head: place p's slot is (p - v) intervals from now) and
  "u<s>" (when v was last moved, us). The head moves at the layer's rate in effect at each call, so when the
  governor lowers or raises a rate, every place in the line is due later or sooner at
  once: nobody keeps the pace of the moment they were turned away. The line only decides
  how long a caller waits when the bucket is busy beyond the horizon: then a message
  without a ticket goes to the end of the line, and a ticket holder keeps its number. A
  holder is told to come back a horizon before its slot at the current rate, but never
  more than half of its wait ahead when that is over 2 s, so a rate rise is noticed within
  half the wait (a handful of calls per message even in a deep backlog). Whoever finds
  room within the horizon books it, so no slot idles while a holder is late.

  KEYS[1..5]  layer buckets (hashes): provider, receiver, pool, campaign, tenant
  ARGV[1]     allowed slices, bitmask (bit s-1 = slice s), tried lowest first
  ARGV[2]     horizon, microseconds: how far ahead a slot may be booked
  ARGV[3]     layers with a line, bitmask (bit l-1 = layer l)
  ARGV[4..6]  share of each slice (slice 1, 2, 3), 0 for a slice that is off
  ARGV[7..16] per layer l: emission interval at the full rate (us; 0 = no limit) at 5+2l,
              and burst at 6+2l
  ARGV[17..19] the caller's ticket: layer (0 = none), slice, number
  ARGV[20]    lendAhead, microseconds (-1: reserves are never lent)

  Returns { code, waitMs, layer, slice, ticketLayer, ticketSlice, ticketNumber }
    code 0 granted now; 1 booked: go in waitMs; 2 denied: ask again in waitMs.
    layer: the binding layer (1..5) when not granted.
    ticket: the place the caller holds after this call (layer 0: none); present it next time.
]]
local allowed = tonumber(ARGV[1])
local horizon = tonumber(ARGV[2])
local lineLayers = tonumber(ARGV[3])
local share = { tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]) }
local tLayer, tSlice, tNumber = tonumber(ARGV[17]), tonumber(ARGV[18]), tonumber(ARGV[19])
local lendAhead = tonumber(ARGV[20])

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local function bit(mask, i)
  return math.floor(mask / 2 ^ (i - 1)) % 2 == 1
end

-- Read every limited layer once: its three slice TATs and its expiry. A line is read only
-- when it is needed (busy beyond the horizon, or a ticket shown).
local FIELDS = { '1', '2', '3', 'x' }
local limited, fields, interval, burst = {}, {}, {}, {}
for l = 1, 5 do
  local T0 = tonumber(ARGV[5 + 2 * l])
  if T0 > 0 then
    limited[#limited + 1] = l
    interval[l] = T0
    burst[l] = tonumber(ARGV[6 + 2 * l])
    fields[l] = redis.call('HMGET', KEYS[l], unpack(FIELDS))
  end
end
if tLayer > 0 and not fields[tLayer] then tLayer = 0 end

-- A slice s of a layer runs at share[s] of its rate: interval T0/share, burst*share at once.
local function slot(l, s)
  local T = interval[l] / share[s]
  local dvt = math.max(1, burst[l] * share[s]) * T
  local tat = math.max(tonumber(fields[l][s]) or 0, now)
  return tat, T, tat + T - dvt
end

-- The line of (l, s) now: last number, head (moved on at the current rate, never past the
-- last number) and the emission interval.
local lines = {}
local function line(l, s)
  local id = l * 10 + s
  if lines[id] then return lines[id] end
  local f = redis.call('HMGET', KEYS[l], 'n' .. s, 'v' .. s, 'u' .. s)
  local T = interval[l] / share[s]
  local n = tonumber(f[1]) or 0
  local v = tonumber(f[2]) or n
  local u = tonumber(f[3]) or now
  local moved = math.min(n, v + math.max(0, now - u) / T)
  lines[id] = { n = n, v = moved, T = T, moved = moved ~= v }
  return lines[id]
end

-- Is the caller's ticket for (l, s) still a place in that line?
local function holds(l, s)
  return tLayer == l and tSlice == s and tNumber <= line(l, s).n
end

-- The earliest time every layer's slice s can take the message, and the layer that binds.
local function earliest(s)
  local at, layer = now, 0
  for _, l in ipairs(limited) do
    local _, _, allowAt = slot(l, s)
    if allowAt > at then
      at, layer = allowAt, l
    end
  end
  return at, layer
end

-- May the reserve s be lent for a slot at `at`? Only within the horizon, and only if after
-- it its own class could still go within lendAhead at every layer.
local function lends(s, at)
  if lendAhead < 0 or at > now + horizon then return false end
  for _, l in ipairs(limited) do
    local tat, T, allowAt = slot(l, s)
    if math.max(tat, at) + T + (allowAt - tat) > now + lendAhead then return false end
  end
  return true
end

local bestAt, bestSlice, bestLayer
for s = 1, 3 do
  if share[s] > 0 then
    local at, layer = earliest(s)
    if not bit(allowed, s) then
      -- A higher class's reserve: lent for one slot within lendAhead, never lined for.
      if not lends(s, at) then at = nil end
    elseif at > now + horizon then
      -- Busy beyond the horizon: the line decides how long. Place p's slot is (p - head)
      -- intervals from now (the head is the place whose slot is now); a holder has its own
      -- place, a newcomer the one after the last, while anybody is still waiting. Within the
      -- horizon the bucket alone decides, so no slot idles while a holder is late.
      for _, l in ipairs(limited) do
        if bit(lineLayers, l) then
          local q = line(l, s)
          local place = holds(l, s) and tNumber or (q.n > q.v and q.n + 1 or nil)
          if place then
            local slotAt = now + (place - q.v) * q.T
            if slotAt > at then
              at, layer = slotAt, l
            end
          end
        end
      end
    end
    if at and (bestAt == nil or at < bestAt) then
      bestAt, bestSlice, bestLayer = at, s, layer
    end
    if at and at <= now then break end
  end
end

if bestAt == nil then
  return { 2, 1000, 0, 0, 0, 0, 0 }
end

-- Pushes the hash's expiry past `untilUs` when it comes too close.
local function keep(l, untilUs)
  local x = tonumber(fields[l][4]) or 0
  if untilUs + 1000000 > x then
    x = untilUs + 10000000
    fields[l][4] = x
    redis.call('HSET', KEYS[l], 'x', x)
    redis.call('PEXPIRE', KEYS[l], math.ceil((x - now) / 1000))
  end
end

-- Writes the lines whose head moved (or that got a new number) back.
local function saveLines()
  for id, q in pairs(lines) do
    if q.moved or q.issued then
      local l, s = math.floor(id / 10), id % 10
      redis.call('HSET', KEYS[l], 'n' .. s, q.n, 'v' .. s, q.v, 'u' .. s, now)
      keep(l, now + math.ceil((q.n - q.v) * q.T))
    end
  end
end

local wait = bestAt - now
if wait > horizon then
  local back = bestAt - horizon
  local keptLayer, keptSlice, keptNumber = 0, 0, 0
  if tLayer > 0 and holds(tLayer, tSlice) then
    keptLayer, keptSlice, keptNumber = tLayer, tSlice, tNumber
  end
  if bestLayer > 0 and bit(lineLayers, bestLayer) and not (keptLayer == bestLayer and keptSlice == bestSlice) then
    -- A place at the end of the binding layer's line. A line that has run dry restarts
    -- where the bucket is busy up to: its first place's slot is the bucket's first free one.
    local q = line(bestLayer, bestSlice)
    if q.v >= q.n then q.v = q.n + 1 - (bestAt - now) / q.T end
    q.n = q.n + 1
    q.issued = true
    keptLayer, keptSlice, keptNumber = bestLayer, bestSlice, q.n
    back = math.max(back, now + (q.n - q.v) * q.T - horizon)
  end
  saveLines()
  local waitUs = back - now
  if keptLayer > 0 and waitUs > 2000000 then waitUs = math.max(2000000, waitUs / 2) end
  return { 2, math.max(1, math.ceil(waitUs / 1000)), bestLayer, bestSlice, keptLayer, keptSlice, keptNumber }
end

-- Charge every limited layer at the slot time.
for _, l in ipairs(limited) do
  local tat, T = slot(l, bestSlice)
  local value = math.floor(math.max(tat, bestAt) + T)
  redis.call('HSET', KEYS[l], bestSlice, value)
  keep(l, value)
end
saveLines()

if wait <= 0 then
  return { 0, 0, 0, bestSlice, 0, 0, 0 }
end
return { 1, math.ceil(wait / 1000), bestLayer, bestSlice, 0, 0, 0 }
