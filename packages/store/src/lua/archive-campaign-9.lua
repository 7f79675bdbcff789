--[[
  Archives a finished campaign in one step, so a crash leaves it active or archived, never
  half: the compact record is written on the campaign hash (its counters stay where they
  are), its content, cursor and launch keys go, it leaves the active set and the launches,
  enters the archived index, and its queue is listed for removal (the caller removes it
  next; the leader's archive chore finishes any a crash left). The hash expires after the
  retention; a work mark left by the last poll goes. Message records are not touched: each keeps its own TTL.

  KEYS[1]  the campaign hash
  KEYS[2]  its content (string)
  KEYS[3]  its injection cursor (string)
  KEYS[4]  its launch (hash)
  KEYS[5]  the active campaigns (set)
  KEYS[6]  the archived campaigns (sorted set id → archived at)
  KEYS[7]  the campaigns with work (sorted set)
  KEYS[8]  the archived campaigns whose queue is not removed yet (set)
  KEYS[9]  the campaigns whose launch the leader decides (set)
  ARGV[1]  the campaign id
  ARGV[2]  now (epoch ms)
  ARGV[3]  the retention (ms)
  ARGV[4]  who archives
  ARGV[5]  the content summary (JSON, or '')
  ARGV[6]  the launch record (JSON, or '')
  ARGV[7]  `n:accepted` as the caller found it finished

  Returns 1 archived, 0 archived already, -1 no such campaign, -3 it accepted a message since
  the caller looked. (A job added meanwhile whose record comes after is ended by its writer,
  which reads `archivedAt` again after writing, as it does `cancelled`.)
]]
if redis.call('HEXISTS', KEYS[1], 'createdAt') == 0 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], 'archivedAt') == 1 then
  return 0
end
if (redis.call('HGET', KEYS[1], 'n:accepted') or '0') ~= ARGV[7] then
  return -3
end
local cursor = redis.call('GET', KEYS[3]) or ''
redis.call('HSET', KEYS[1], 'archivedAt', ARGV[2], 'archivedBy', ARGV[4], 'archive:content', ARGV[5],
  'archive:launch', ARGV[6], 'archive:cursor', cursor)
redis.call('HDEL', KEYS[1], 'win:ready', 'win:max', 'win:rate', 'finishedAt', 'finishedAccepted')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
redis.call('SREM', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[9], ARGV[1])
redis.call('ZREM', KEYS[7], ARGV[1])
redis.call('ZADD', KEYS[6], tonumber(ARGV[2]), ARGV[1])
redis.call('SADD', KEYS[8], ARGV[1])
return 1
