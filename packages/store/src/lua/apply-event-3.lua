--[[
  Applies one ESP event (bounce, complaint, unsubscribe, delivery…) to its tenant exactly
  once. Every key is under the tenant's tag; the event's note on the message's record is
  record-event-1.lua's, in the message's home.

  KEYS[1]  the event's dedupe key (string, TTL), or KEYS[2] again to apply without one
  KEYS[2]  the tenant's suppression list (hash address -> entry)
  KEYS[3]  the address's soft bounces (sorted set event id -> event ms), or KEYS[2] again
  ARGV[1]  dedupe TTL, seconds
  ARGV[2]  action: 'suppress', 'soft' (count; suppress at the threshold) or 'none'
  ARGV[3]  the address, lower-cased
  ARGV[4]  the suppression entry to write (`source|at|provider|reason`)
  ARGV[5]  the event's time, epoch ms
  ARGV[6]  now, epoch ms
  ARGV[7]  soft-bounce window, ms
  ARGV[8]  soft bounces that suppress
  ARGV[9]  the soft bounce's member (event id)

  Returns { code, softBounces }: 0 seen before (nothing changed); 1 applied; 2 applied and
  the address suppressed now; 3 applied, the address was suppressed already.
]]
if KEYS[1] ~= KEYS[2] and not redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[1])) then
  return { 0, 0 }
end
local code, n = 1, 0
local function suppress()
  if redis.call('HSETNX', KEYS[2], ARGV[3], ARGV[4]) == 1 then
    code = 2
  else
    code = 3
  end
end
if ARGV[2] == 'suppress' then
  suppress()
elseif ARGV[2] == 'soft' then
  local window = tonumber(ARGV[7])
  redis.call('ZADD', KEYS[3], tonumber(ARGV[5]), ARGV[9])
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', tonumber(ARGV[6]) - window)
  n = redis.call('ZCARD', KEYS[3])
  if n >= tonumber(ARGV[8]) then
    suppress()
    -- Counted out: a lifted suppression starts from zero.
    redis.call('DEL', KEYS[3])
  elseif n > 0 then
    redis.call('PEXPIRE', KEYS[3], window)
  end
end
return { code, n }
