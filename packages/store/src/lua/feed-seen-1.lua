--[[
  Records when the suppression feed last carried an event from a provider: the newest event
  time seen, so a retry of an event (same time) or an older one arriving late changes nothing.

  KEYS[1]  the feed hash (provider → epoch ms)
  ARGV[1]  the provider
  ARGV[2]  the event's own time, epoch ms

  Returns 1 when it moved the time forward, else 0.
]]
local seen = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if tonumber(ARGV[2]) > seen then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
