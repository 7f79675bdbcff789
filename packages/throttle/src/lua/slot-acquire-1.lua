--[[
  Takes or renews one connection slot: a lease in a sorted set scored by its expiry
  (Redis time, ms). Expired leases (their holder died) are reaped first.

  KEYS[1]  the provider's slot set
  ARGV[1]  limit: slots in all
  ARGV[2]  lease length, ms
  ARGV[3]  lease id (unique per holder and slot)

  Returns { held, waitMs }: held 1 with waitMs 0, or held 0 and the ms until the
  earliest lease expires (a hint; the holder may release it sooner).
]]
local limit = tonumber(ARGV[1])
local leaseMs = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[3]) or redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], leaseMs * 2)
  return { 1, 0 }
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return { 0, math.max(0, tonumber(first[2]) - now) }
