--[[
  Takes, renews or gives back one holder's connection slots: leases in a sorted set
  scored by expiry (Redis time, ms). Expired leases (their holder died) are reaped
  first. A holder gets at most its fair share, ceil(limit / live holders), so the first
  process to start cannot keep every slot from the ones that start after it.

  KEYS[1]  the provider's slot set
  KEYS[2]  the provider's live holders (sorted set by expiry)
  ARGV[1]  limit: slots in all
  ARGV[2]  lease length, ms
  ARGV[3]  holder id
  ARGV[4]  slots this holder wants

  Returns the number of slots the holder holds now.
]]
local limit = tonumber(ARGV[1])
local leaseMs = tonumber(ARGV[2])
local holder = ARGV[3]
local want = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + leaseMs, holder)
local share = math.ceil(limit / redis.call('ZCARD', KEYS[2]))
local target = math.min(want, share)

local held = 0
for i = 0, want - 1 do
  local id = holder .. '#' .. i
  if i < target and (redis.call('ZSCORE', KEYS[1], id) or redis.call('ZCARD', KEYS[1]) < limit) then
    redis.call('ZADD', KEYS[1], now + leaseMs, id)
    held = held + 1
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
redis.call('PEXPIRE', KEYS[1], leaseMs * 2)
redis.call('PEXPIRE', KEYS[2], leaseMs * 2)
return held
