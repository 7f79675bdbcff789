--[[
  Adds settled signal buckets to the outcome totals, once: only if the totals still stop
  where the caller read them. Two folders that summed the same buckets cannot both add
  them; the second finds the mark moved and adds nothing.

  KEYS[1]  the totals hash (`<prefix>:ops:outcomes`); field `upTo` is where it stops
  ARGV[1]  the `upTo` the caller read ('0' when there was none)
  ARGV[2]  the new `upTo`
  ARGV[3…] field, count, field, count, …

  Returns 1 when added, 0 when another folder had moved the mark.
]]
local current = redis.call('HGET', KEYS[1], 'upTo') or '0'
if current ~= ARGV[1] then
  return 0
end
for i = 3, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'upTo', ARGV[2])
return 1
