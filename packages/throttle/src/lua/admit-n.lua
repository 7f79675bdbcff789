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
  the classes it is kept for could still go within lendAhead at every layer: its idle
  part is used, and room for them within lendAhead is kept. So a lower class fills what a
  quiet critical class leaves, and a critical message arriving later waits at most
  lendAhead for its own slice. A caller denied beyond the horizon is also told when to come
  back for such a reserve (lendWaitMs): the last moment it is still busy, once it is lendable
  again. A caller that comes back then, instead of after its own wait, keeps the reserve
  from idling, with as few calls as that takes.

  The line. A layer in the line mask that is busy beyond the horizon hands out tickets
  instead of a bare wait: numbered places in a line per (layer, slice), kept as "n<s>" (the
  last number handed out), "v<s>" (the head: place p's slot is (p - v) intervals from now)
  and "u<s>" (when v was last moved, us). The head moves at the layer's rate in effect at
  each call, so when the governor lowers or raises a rate, every place in the line is due
  later or sooner at once: nobody keeps the pace of the moment they were turned away. The
  line only decides how long a caller waits when the bucket is busy beyond the horizon:
  then a message without a ticket goes to the end of the line, and a ticket holder keeps
  its number. A holder is told to come back a horizon before its slot at the current rate,
  but never more than half of its wait ahead when that is over 2 s, so a rate rise is
  noticed within half the wait (a handful of calls per message even in a deep backlog).
  Whoever finds room within the horizon books it, so no slot idles while a holder is late.

  Cost. A request is one HMGET per limited layer and, when it takes a slot, one HSET per
  limited layer, and a call one TIME: nothing else on the common path. A request comes as one
  JSON array (one argument to encode, send and unpack instead of twenty) and TATs are written as
  integers formatted in Lua (a Lua number handed to redis.call is printed with %.17g, which
  costs about as much as the HSET itself).

  A call decides a batch of requests, one after the other as if each were its own call (each
  reads what the ones before it wrote) on one Redis time: a process's decisions in flight
  together cost one script call, not one each. One request's error is its own answer.

  KEYS[7i-6..7i-2]  request i's layer buckets (hashes): provider, receiver, pool, campaign, tenant
  KEYS[7i-1], KEYS[7i]  its tenant's and its API key's plan-cap counters (hashes; any key when
                    it has no such caps: not read)
  ARGV[1]     the requests, a JSON array with one JSON array of numbers per request:
                [1] allowed slices, bitmask (bit s-1 = slice s; slice 1 always), tried lowest first
                [2] horizon, microseconds: how far ahead a slot may be booked
                [3] layers with a line, bitmask (bit l-1 = layer l)
                [4] share of slice 2 (high's reserve), [5] share of slice 3 (critical's);
                    slice 1 has the rest, a reserve of 0 is off
                [6] lendAhead, microseconds (-1: reserves are never lent)
                [5 + 2l], [6 + 2l] layer l's rate (messages a second; 0 = no limit) and burst
                [17..19] the caller's ticket, when it holds one: layer, slice, number (0s: none)
                [20] the caller's group (a string: its campaign queue; false: none), when it has one
                [21..24] the tenant's plan caps per UTC minute, hour, day, month (0: none), and
                [25..28] its API key's, when it has any (counted in KEYS[7i-1] and KEYS[7i])

  Returns one reply per request, in order:
    { 0 }                          granted now
    { 1, waitMs, layer }           booked: go in waitMs (layer: the binding one)
    { 2, waitMs, layer, ticketLayer, ticketSlice, ticketNumber, lendWaitMs }
                                   denied: ask again in waitMs. ticket: the place the caller
                                   holds after this call (layer 0: none); show it next time.
                                   lendWaitMs: come back then for a reserve the caller may
                                   borrow: lendable, and busy until then (0: never lent, as
                                   things stand); it may be later than waitMs.
    { 3, waitMs, layer, 0, 0, 0, lendWaitMs }
                                   denied without being decided: an earlier request of its
                                   group in this call was denied at a layer other than the
                                   receiver (the whole group is held); the answer is that one's.
    { 2, waitMs, 5, 0, 0, 0, 0, cap }
                                   denied by a plan cap at its slot (cap 1-4: the tenant's
                                   minute, hour, day or month; 5-8: its key's): ask again when
                                   that window ends, in waitMs. Nothing is charged.
    { -1, message }                this request failed (nothing after its error was written)

  Plan caps: plan-caps.lua, run before this file in the same script (capsAt, chargeCaps).
]]
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

-- One request: its numbers (a) and its seven keys (K): five buckets, two cap counters.
local function admit(a, K)
  local allowed, horizon, lineLayers, lendAhead = a[1], a[2], a[3], a[6]
  local share = { 1 - a[5] - a[4], a[4], a[5] }
  local tLayer, tSlice, tNumber = a[17] or 0, a[18] or 0, a[19] or 0

  -- The slices this call may take: its own (bit s-1 of `allowed`; slice 1 always), and the
  -- reserves it may borrow. Only their TATs are read, with the expiry.
  local own = { true, allowed % 4 >= 2, allowed >= 4 }
  local use = { true, share[2] > 0 and (own[2] or lendAhead >= 0), share[3] > 0 and (own[3] or lendAhead >= 0) }
  local names
  if use[2] then
    names = use[3] and { '1', '2', '3', 'x' } or { '1', '2', 'x' }
  else
    names = use[3] and { '1', '3', 'x' } or { '1', 'x' }
  end
  local pos = { 1, use[2] and 2 or 0, use[3] and #names - 1 or 0 }
  local X = #names

  -- Every limited layer is read once.
  local limited, n, fields = { 0, 0, 0, 0, 0 }, 0, {}
  for l = 1, 5 do
    if a[5 + 2 * l] > 0 then
      n = n + 1
      limited[n] = l
      fields[l] = redis.call('HMGET', K[l], unpack(names))
    end
  end
  if tLayer > 0 and not fields[tLayer] then tLayer = 0 end

  -- Slice s of layer l runs at share[s] of its rate: interval T0/share, burst*share at once.
  -- Worked out once a call per slice and layer, at k = 5(s-1) + l: the TAT (at least now) at
  -- k, the interval at 15 + k, and allowAt - TAT (<= 0: how much sooner than its TAT the burst
  -- lets a message go) at 30 + k. One table, sized at once: this runs on every call.
  local m = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
  }
  -- Per slice: the earliest time every layer can take it.
  local free = { now, now, now }

  -- Lines are read only when needed (busy beyond the horizon, or a ticket shown), and the
  -- functions for them made only for a caller that uses them.
  local lines, lined, line, saveLines
  if lineLayers > 0 or tLayer > 0 then
    lined = {}
    local mask = lineLayers
    for l = 1, 5 do
      lined[l] = mask % 2 == 1
      mask = (mask - mask % 2) / 2
    end
    lines = {}
    -- The line of (l, s) now: last number, head (moved on at the current rate, never past
    -- the last number) and the emission interval.
    line = function(l, s)
      local id = l * 10 + s
      if lines[id] then return lines[id] end
      local f = redis.call('HMGET', K[l], 'n' .. s, 'v' .. s, 'u' .. s)
      local T = 1000000 / a[5 + 2 * l] / share[s]
      local last = tonumber(f[1]) or 0
      local v = tonumber(f[2]) or last
      local u = tonumber(f[3]) or now
      local moved = math.min(last, v + math.max(0, now - u) / T)
      lines[id] = { n = last, v = moved, T = T, moved = moved ~= v }
      return lines[id]
    end
    -- Writes the lines whose head moved (or that got a new number) back, and pushes the
    -- hash's expiry past the last place when it comes too close.
    saveLines = function()
      for id, q in pairs(lines) do
        if q.moved or q.issued then
          local l, s = math.floor(id / 10), id % 10
          redis.call('HSET', K[l], 'n' .. s, q.n, 'v' .. s, q.v, 'u' .. s, string.format('%d', now))
          local untilUs = now + math.ceil((q.n - q.v) * q.T)
          local x = tonumber(fields[l][X]) or 0
          if untilUs + 1000000 > x then
            x = untilUs + 10000000
            fields[l][X] = x
            redis.call('HSET', K[l], 'x', string.format('%d', x))
            redis.call('PEXPIRE', K[l], math.ceil((x - now) / 1000))
          end
        end
      end
    end
  end

  local bestAt, bestSlice, bestLayer
  for s = 1, 3 do
    if use[s] then
      -- The earliest time every layer's slice s can take the message, and the layer that binds.
      local sh, f, when, layer = share[s], pos[s], now, 0
      for i = 1, n do
        local l = limited[i]
        local T = 1000000 / a[5 + 2 * l] / sh
        local b = a[6 + 2 * l] * sh
        local tat = tonumber(fields[l][f]) or 0
        if tat < now then tat = now end
        local early = T - (b > 1 and b or 1) * T
        local k = 5 * s - 5 + l
        m[k], m[15 + k], m[30 + k] = tat, T, early
        if tat + early > when then when, layer = tat + early, l end
      end
      free[s] = when
      if not own[s] then
        -- A higher class's reserve: lent for one slot within lendAhead, never lined for.
        -- Only if after that slot its own class could still go within lendAhead everywhere.
        if lendAhead < 0 or when > now + horizon then
          when = nil
        else
          for i = 1, n do
            local k = 5 * s - 5 + limited[i]
            local tat = m[k]
            if (tat > when and tat or when) + m[15 + k] + m[30 + k] > now + lendAhead then
              when = nil
              break
            end
          end
        end
      elseif when > now + horizon and lineLayers > 0 then
        -- Busy beyond the horizon: the line decides how long. Place p's slot is (p - head)
        -- intervals from now (the head is the place whose slot is now); a holder has its own
        -- place, a newcomer the one after the last, while anybody is still waiting. Within the
        -- horizon the bucket alone decides, so no slot idles while a holder is late.
        for i = 1, n do
          local l = limited[i]
          if lined[l] then
            local q = line(l, s)
            local place = (tLayer == l and tSlice == s and tNumber <= q.n) and tNumber or (q.n > q.v and q.n + 1 or nil)
            if place then
              local slotAt = now + (place - q.v) * q.T
              if slotAt > when then when, layer = slotAt, l end
            end
          end
        end
      end
      if when and (bestAt == nil or when < bestAt) then
        bestAt, bestSlice, bestLayer = when, s, layer
      end
      if when and when <= now then break end
    end
  end

  if bestAt == nil then
    return { 2, 1000, 0, 0, 0, 0, 0 }
  end

  local wait = bestAt - now
  if wait > horizon then
    local back = bestAt - horizon
    local keptLayer, keptSlice, keptNumber = 0, 0, 0
    if tLayer > 0 and tNumber <= line(tLayer, tSlice).n then
      keptLayer, keptSlice, keptNumber = tLayer, tSlice, tNumber
    end
    if bestLayer > 0 and lineLayers > 0 and lined[bestLayer] and not (keptLayer == bestLayer and keptSlice == bestSlice) then
      -- A place at the end of the binding layer's line. A line that has run dry restarts
      -- where the bucket is busy up to: its first place's slot is the bucket's first free one.
      local q = line(bestLayer, bestSlice)
      if q.v >= q.n then q.v = q.n + 1 - (bestAt - now) / q.T end
      q.n = q.n + 1
      q.issued = true
      keptLayer, keptSlice, keptNumber = bestLayer, bestSlice, q.n
      back = math.max(back, now + (q.n - q.v) * q.T - horizon)
    end
    if lines then saveLines() end
    local waitUs = back - now
    if keptLayer > 0 and waitUs > 2000000 then waitUs = math.max(2000000, waitUs / 2) end

    -- When to come back for a reserve the caller may borrow (never lined for). It is lent from
    -- the first time the lending test above holds: its slot within the horizon (free -
    -- horizon), and after it the reserve's own class still going within lendAhead at every
    -- layer (TAT + T + early <= then + lendAhead, and the same from the slot itself); a reserve
    -- whose one slot alone takes longer than lendAhead is never lent. It idles from its next
    -- slot (free) on. The answer is the later of the two: busy until then, the reserve loses
    -- nothing, and a call then takes every slot lendAhead allows, where one at the first time
    -- would take one slot and need another call (a denial) for the next.
    local lendAt
    if lendAhead >= 0 then
      for s = 2, 3 do
        if use[s] and not own[s] then
          local from, longest = free[s] - horizon, 0
          for i = 1, n do
            local k = 5 * s - 5 + limited[i]
            local after = m[15 + k] + m[30 + k]
            if after > longest then longest = after end
            if m[k] + after - lendAhead > from then from = m[k] + after - lendAhead end
          end
          if longest <= lendAhead then
            if free[s] + longest - lendAhead > from then from = free[s] + longest - lendAhead end
            if free[s] > from then from = free[s] end
            if lendAt == nil or from < lendAt then lendAt = from end
          end
        end
      end
    end
    local lendWaitMs = lendAt and math.max(1, math.ceil((lendAt - now) / 1000)) or 0
    return { 2, math.max(1, math.ceil(waitUs / 1000)), bestLayer, keptLayer, keptSlice, keptNumber, lendWaitMs }
  end

  -- The plan caps at the slot time: at one, nothing is charged.
  local cap, capEnd, windows, capReads = capsAt(a, K, bestAt)
  if cap then
    return { 2, math.max(1, math.ceil((capEnd - now) / 1000)), 5, 0, 0, 0, 0, cap }
  end
  if capReads then chargeCaps(a, K, windows, capReads) end

  -- Charge every limited layer at the slot time, pushing the hash's expiry in the same HSET
  -- when the new TAT comes too close to it.
  local field = names[pos[bestSlice]]
  for i = 1, n do
    local l = limited[i]
    local k = 5 * bestSlice - 5 + l
    local tat = m[k]
    local value = math.floor((tat > bestAt and tat or bestAt) + m[15 + k])
    local x = tonumber(fields[l][X]) or 0
    if value + 1000000 > x then
      x = value + 10000000
      fields[l][X] = x
      redis.call('HSET', K[l], field, string.format('%d', value), 'x', string.format('%d', x))
      redis.call('PEXPIRE', K[l], math.ceil((x - now) / 1000))
    else
      redis.call('HSET', K[l], field, string.format('%d', value))
    end
  end
  if lines then saveLines() end

  if wait <= 0 then
    return { 0 }
  end
  return { 1, math.ceil(wait / 1000), bestLayer }
end

local requests = cjson.decode(ARGV[1])
local replies = {}
-- A group denied at a layer other than the receiver (provider, pool, campaign, tenant) is held
-- whole by its caller: its later requests in this call are answered so, and read nothing.
local stopped = {}
for i = 1, #requests do
  local b = 7 * i - 7
  local group = requests[i][20]
  local held = group and stopped[group]
  if held then
    replies[i] = { 3, held[2], held[3], 0, 0, 0, held[7] }
  else
    local ok, reply = pcall(admit, requests[i], { KEYS[b + 1], KEYS[b + 2], KEYS[b + 3], KEYS[b + 4], KEYS[b + 5], KEYS[b + 6], KEYS[b + 7] })
    if ok then
      replies[i] = reply
      if group and reply[1] == 2 and reply[3] ~= 2 then stopped[group] = reply end
    else
      replies[i] = { -1, type(reply) == 'table' and reply.err or tostring(reply) }
    end
  end
end
return replies
