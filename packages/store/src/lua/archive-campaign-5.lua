--[[
  Archives a finished campaign's own keys in one step: its hash becomes its record (who, when,
  a summary of its content, its launch and cursor, with a TTL), and its content, cursor and
  launch go. Every key is under the campaign's hash tag, its queue's too: the fleet-wide
  indexes (active, archived, with work, archiving, launches) are changed after, by the caller
  (`archiveCampaign`), and the leader's archive chore finishes them if a crash came between.

  KEYS[1]  the campaign hash
  KEYS[2]  its content (string)
  KEYS[3]  its injection cursor (string)
  KEYS[4]  its launch (hash)
  KEYS[5]  its queue's job counter (BullMQ's `id`: every add of a job raises it)
  ARGV[1]  now (epoch ms)
  ARGV[2]  the retention (ms)
  ARGV[3]  who archives
  ARGV[4]  the content summary (JSON, or '')
  ARGV[5]  the launch record (JSON, or '')
  ARGV[6]  the job counter as the caller found the campaign finished

  Returns 1 archived, 0 archived already, -1 no such campaign, -3 a job was added to its queue
  since the caller looked. (A record accepted meanwhile whose job comes after is ended by its
  writer, which reads `archivedAt` again after writing, as it does `cancelled`.)
]]
if redis.call('HEXISTS', KEYS[1], 'createdAt') == 0 then
  return -1
end
if redis.call('HEXISTS', KEYS[1], 'archivedAt') == 1 then
  return 0
end
if (redis.call('GET', KEYS[5]) or '0') ~= ARGV[6] then
  return -3
end
local cursor = redis.call('GET', KEYS[3]) or ''
redis.call('HSET', KEYS[1], 'archivedAt', ARGV[1], 'archivedBy', ARGV[3], 'archive:content', ARGV[4],
  'archive:launch', ARGV[5], 'archive:cursor', cursor)
redis.call('HDEL', KEYS[1], 'win:ready', 'win:max', 'win:rate', 'win:blocks', 'finishedAt', 'finishedAccepted')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return 1
