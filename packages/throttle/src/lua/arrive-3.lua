--[[
  The arrival gate: a send goes only if, at every layer it passes (provider, receiver, IP
  pool), it keeps at most N sends in any window of W microseconds, N being the layer's
  rate + burst and W a second (plus the jitter slack). That is what a receiver counting
  arrivals sees, whatever slots admission booked: a message late for its slot fills the
  room its own missed slot left, and never a room that is not there.

  Exact, not estimated: each layer keeps the times of its last M sends (M >= N) in a ring
  of hash fields "w<k>", with "wi" (sends so far: the next goes in w<wi mod M>) and "wm"
  (M). The N-th latest send must be at least W old. Times only grow along the ring (a send
  never goes before the one placed last), so the N-th latest by place is the N-th latest by
  time. A ring that is too small for a new N (the rate went up) is rebuilt larger, its
  times kept in order. Field "x" is when the hash expires (us), shared with admit-n.

  KEYS[1..3]  layer buckets (hashes, the limiter's): provider, receiver, pool
  ARGV[1]     how far ahead a send may be placed, us (0: now only)
  ARGV[2..7]  per layer l: N at 2l, W (us) at 2l + 1; N = 0: the layer is not gated

  Returns { code, waitMs, layer }
    code 0 placed: go in waitMs (0: now); every gated layer counts the send at that time.
    code 1 beyond: the earliest time is waitMs away, past ARGV[1]; nothing was written.
    layer: the binding layer (1..3), 0 when none.
]]
local ahead = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local gated, n, w, ring = {}, {}, {}, {}
local at, binding = now, 0
for l = 1, 3 do
  local N = tonumber(ARGV[2 * l])
  if N > 0 then
    gated[#gated + 1] = l
    n[l], w[l] = N, tonumber(ARGV[2 * l + 1])
    local f = redis.call('HMGET', KEYS[l], 'wi', 'wm', 'x')
    local r = { i = tonumber(f[1]) or 0, m = tonumber(f[2]) or 0, x = tonumber(f[3]) or 0 }
    ring[l] = r
    if r.i > 0 and r.m > 0 then
      local last = redis.call('HMGET', KEYS[l], 'w' .. ((r.i - 1) % r.m), 'w' .. ((r.i - N) % r.m))
      local earliest = tonumber(last[1]) or 0
      -- The N-th latest send, when the ring holds that many.
      if r.i >= N and N <= r.m then
        earliest = math.max(earliest, (tonumber(last[2]) or 0) + w[l])
      end
      if earliest > at then
        at, binding = earliest, l
      end
    end
  end
end

if at - now > ahead then
  return { 1, math.ceil((at - now) / 1000), binding }
end

for _, l in ipairs(gated) do
  local r, key, N = ring[l], KEYS[l], n[l]
  if r.m < N then
    -- Rebuild the ring larger: the last min(i, m) times, oldest first, at their new places.
    local m = math.max(N, math.ceil(r.m * 1.25))
    local kept = math.min(r.i, r.m)
    -- Read all, then write (old and new places overlap), in chunks of 500: unpack has a limit.
    local times = {}
    for from = r.i - kept, r.i - 1, 500 do
      local names = {}
      for p = from, math.min(from + 499, r.i - 1) do names[#names + 1] = 'w' .. (p % r.m) end
      for _, v in ipairs(redis.call('HMGET', key, unpack(names))) do times[#times + 1] = v or 0 end
    end
    -- The places before those kept hold 0 (a send long gone: the old ring's limit kept more
    -- than a window's sends from being dropped), not what the old layout left there.
    local first = math.max(0, r.i - m)
    for from = first, r.i - 1, 500 do
      local moved = {}
      for p = from, math.min(from + 499, r.i - 1) do
        moved[#moved + 1] = 'w' .. (p % m)
        moved[#moved + 1] = p < r.i - kept and 0 or times[p - (r.i - kept) + 1]
      end
      redis.call('HSET', key, unpack(moved))
    end
    r.m = m
  end
  redis.call('HSET', key, 'w' .. (r.i % r.m), at, 'wi', r.i + 1, 'wm', r.m)
  -- The ring must outlive its window: pushed 10 s further only when it comes too close.
  if at + w[l] + 1000000 > r.x then
    local x = at + w[l] + 10000000
    redis.call('HSET', key, 'x', x)
    redis.call('PEXPIRE', key, math.ceil((x - now) / 1000))
  end
end

return { 0, math.ceil((at - now) / 1000), binding }
