--[[
  Deletes a campaign's own keys (archived, or active and found finished) in one step: its
  hash, content, cursor and launch go. Under the campaign's hash tag like archive-campaign-5.lua;
  the caller then takes it off the fleet-wide indexes and lists its queue for removal.
  Message records are not touched: each keeps its own TTL.

  KEYS[1..5]  as archive-campaign-5.lua
  ARGV[1]  the job counter as the caller found it finished ('' for an archived campaign)

  Returns 1 deleted (an active one), 0 deleted (an archived one), -1 no such campaign, -3 a job
  was added to its queue since the caller looked.
]]
if redis.call('HEXISTS', KEYS[1], 'createdAt') == 0 then
  return -1
end
local archived = redis.call('HEXISTS', KEYS[1], 'archivedAt') == 1
if not archived and (redis.call('GET', KEYS[5]) or '0') ~= ARGV[1] then
  return -3
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
if archived then
  return 0
end
return 1
