--[[
  Claims an HTTP request's Idempotency-Key for it, or says what the key holds already
  (docs/design/tenants-and-keys.md).

  KEYS[1]  the key's hash: `fp` (the body's fingerprint), `token` (the claiming request's),
           then `status` and `body` once answered
  ARGV[1]  this request's fingerprint
  ARGV[2]  this request's token
  ARGV[3]  how long the claim lasts unanswered, ms (a request that died lets go of it then)

  Returns { 1 } claimed for this request;
          { 2, status, body } answered before for the same body: the answer to replay;
          { 3 } held for another body (answered or not);
          { 4 } claimed by another request with the same body, not answered yet.
]]
local fp = redis.call('HGET', KEYS[1], 'fp')
if not fp then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'token', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return { 1 }
end
if fp ~= ARGV[1] then
  return { 3 }
end
local answered = redis.call('HMGET', KEYS[1], 'status', 'body')
if not answered[1] then
  return { 4 }
end
return { 2, answered[1], answered[2] }
