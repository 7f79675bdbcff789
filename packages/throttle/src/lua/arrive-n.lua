--[[
  The arrival gate: a send goes only if, at every layer it passes (provider, receiver, IP
  pool), it keeps at most N sends in any window of W microseconds, N being the layer's
  rate + burst and W a second (plus the jitter slack). That is what a receiver counting
  arrivals sees, whatever slots admission booked: a message late for its slot fills the
  room its own missed slot left, and never a room that is not there.

  A batch arrives at once: its recipients count at their layers together (the provider and
  the pool all of them, each receiver its own), placed all at one time or none. One send is
  a batch of one at its three layers.

  Exact, not estimated: each layer keeps the times of its last M sends (M >= N) in a ring
  of hash fields "w<k>", with "wi" (sends so far: the next goes in w<wi mod M>) and "wm"
  (M). After k sends at time T the window ending at T holds at most N when the
  (N-k+1)-th latest send is at least W older than T. Times only grow along the ring (a send
  never goes before the one placed last), so the j-th latest by place is the j-th latest by
  time. A ring that is too small for a new N (the rate went up) is rebuilt larger, its
  times kept in order. Field "x" is when the hash expires (us), shared with admit-n.

  KEYS[1..n]  layer buckets (hashes, the limiter's), each once
  ARGV[1]     how far ahead the sends may be placed, us (0: now only)
  ARGV[3l-1], ARGV[3l], ARGV[3l+1]  per layer l: N, W (us) and k, the sends counted there;
              N = 0: the layer is not gated

  Returns { code, waitMs, layer }
    code 0 placed: go in waitMs (0: now); every gated layer counts its k sends at that time.
    code 1 beyond: the earliest time is waitMs away, past ARGV[1]; nothing was written.
    code 2 too many: layer's k is above its N, so they never fit at once; nothing was written.
    layer: the binding layer (1..n), 0 when none.
]]
local ahead = tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local gated, n, w, k, ring = {}, {}, {}, {}, {}
local at, binding = now, 0
for l = 1, #KEYS do
  local N = tonumber(ARGV[3 * l - 1])
  if N > 0 then
    local count = tonumber(ARGV[3 * l + 1])
    if count > N then
      return { 2, 0, l }
    end
    gated[#gated + 1] = l
    n[l], w[l], k[l] = N, tonumber(ARGV[3 * l]), count
    local f = redis.call('HMGET', KEYS[l], 'wi', 'wm', 'x')
    local r = { i = tonumber(f[1]) or 0, m = tonumber(f[2]) or 0, x = tonumber(f[3]) or 0 }
    ring[l] = r
    if r.i > 0 and r.m > 0 then
      local j = N - count + 1
      local last = redis.call('HMGET', KEYS[l], 'w' .. ((r.i - 1) % r.m), 'w' .. ((r.i - j) % r.m))
      local earliest = tonumber(last[1]) or 0
      -- The j-th latest send, when the ring holds that many.
      if r.i >= j and j <= r.m then
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
  -- The k sends at `at`, in chunks of 500 places (k <= N <= m: no place written twice); the
  -- last chunk moves "wi" too.
  local last = r.i + k[l] - 1
  for from = r.i, last, 500 do
    local placed = {}
    for p = from, math.min(from + 499, last) do
      placed[#placed + 1] = 'w' .. (p % r.m)
      placed[#placed + 1] = at
    end
    if from + 499 >= last then
      placed[#placed + 1] = 'wi'
      placed[#placed + 1] = last + 1
      placed[#placed + 1] = 'wm'
      placed[#placed + 1] = r.m
    end
    redis.call('HSET', key, unpack(placed))
  end
  -- The ring must outlive its window: pushed 10 s further only when it comes too close.
  if at + w[l] + 1000000 > r.x then
    local x = at + w[l] + 10000000
    redis.call('HSET', key, 'x', x)
    redis.call('PEXPIRE', key, math.ceil((x - now) / 1000))
  end
end

return { 0, math.ceil((at - now) / 1000), binding }
