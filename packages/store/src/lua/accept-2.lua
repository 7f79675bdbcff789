--[[
  Creates a message's record when Sluice accepts it, unless one exists (a repeated
  idempotency key): the first message wins.

  KEYS[1]  the message record (hash)
  KEYS[2]  the campaign hash, or the record key again when there is no campaign
  ARGV     field, value pairs of the new record (must include state and createdAt)

  Returns { created (1|0), state }
]]
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  return { 0, state }
end
redis.call('HSET', KEYS[1], unpack(ARGV))
if KEYS[2] ~= KEYS[1] then
  redis.call('HINCRBY', KEYS[2], 'n:accepted', 1)
end
return { 1, redis.call('HGET', KEYS[1], 'state') }
