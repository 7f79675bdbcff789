--[[
  Notes an ESP event on its message's record: only a record that exists, and only an event
  later than the one it shows (ESPs deliver out of order), so the record says what happened
  last. Applying the same event again changes nothing, so it runs for every delivery of the
  event, also one apply-event-3.lua found applied before (a crash between the two).

  KEYS[1]  the message record
  ARGV[1]  the event kind
  ARGV[2]  the event's time, epoch ms

  Returns 1 when the record took it, 0 when not (no record, or a later event shown).
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local last = tonumber(redis.call('HGET', KEYS[1], 'eventAt') or '0')
if tonumber(ARGV[2]) < last then
  return 0
end
redis.call('HSET', KEYS[1], 'event', ARGV[1], 'eventAt', ARGV[2])
return 1
