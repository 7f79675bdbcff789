--[[
  Deletes a campaign (archived, or active and found finished) in one step: its hash, content,
  cursor and launch go, it leaves every index, and its queue is listed for removal (the caller
  removes it next; the leader's archive chore finishes any a crash left). Message records are
  not touched: each keeps its own TTL.

  KEYS[1..9]  as archive-campaign-9.lua
  ARGV[1]  the campaign id
  ARGV[2]  `n:accepted` as the caller found it finished ('' for an archived campaign)

  Returns 1 deleted, -1 no such campaign, -3 it accepted a message since the caller looked.
]]
if redis.call('HEXISTS', KEYS[1], 'createdAt') == 0 then
  return -1
end
local archived = redis.call('HEXISTS', KEYS[1], 'archivedAt') == 1
if not archived then
  if (redis.call('HGET', KEYS[1], 'n:accepted') or '0') ~= ARGV[2] then
    return -3
  end
  redis.call('SADD', KEYS[8], ARGV[1])
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('SREM', KEYS[5], ARGV[1])
redis.call('SREM', KEYS[9], ARGV[1])
redis.call('ZREM', KEYS[7], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
return 1
