--[[
  Settles an Idempotency-Key its request claimed: keeps the answer to replay, or lets the key
  go (an answer that must not be replayed: a server error, a refusal that may change).

  KEYS[1]  the key's hash (see idem-claim-1.lua)
  ARGV[1]  the claiming request's token
  ARGV[2]  `keep` or `drop`
  ARGV[3]  the answer's status (keep)
  ARGV[4]  the answer's body (keep)
  ARGV[5]  how long the answer is kept, ms (keep)

  Returns 1 when settled; 0 when the key is not this request's any more (its claim ran out
  and another request claimed it): nothing changed.
]]
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then
  return 0
end
if ARGV[2] == 'drop' then
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'body', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
