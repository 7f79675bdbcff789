--[[
  The textbook single-bucket token bucket (limiter-anchors.md §3.1): the baseline the
  five-layer script is measured against, one EVAL per layer.

  KEYS[1]  the bucket (hash: t = tokens, ts = last refill, ms)
  ARGV[1]  rate per second
  ARGV[2]  burst
  ARGV[3]  cost

  Returns { allowed, tokens left, wait ms }
]]
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local st = redis.call('HMGET', KEYS[1], 't', 'ts')
local tokens, ts = tonumber(st[1]), tonumber(st[2])
if tokens == nil then tokens = burst; ts = now end
if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate / 1000); ts = now end
local allowed, wait = 0, 0
if tokens >= cost then tokens = tokens - cost; allowed = 1
else wait = math.ceil((cost - tokens) * 1000 / rate) end
redis.call('HSET', KEYS[1], 't', tokens, 'ts', ts)
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return { allowed, math.floor(tokens), wait }
