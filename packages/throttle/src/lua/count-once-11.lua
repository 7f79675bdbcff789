--[[
  Counts one signal for up to five keys, once per marker: the first call with a marker
  counts, a later one (an ESP's redelivery of the same event) changes nothing. The marker
  and the counts are written in one step, so a process killed around it never leaves an
  event counted twice or marked but not counted.

  KEYS[1]      the marker (string, TTL)
  KEYS[2..6]   the buckets (hash field -> count); KEYS[1] again for an unused slot
  KEYS[7..11]  each slot's index (sorted set of names, scored by when last seen)
  ARGV[1]      marker TTL, seconds
  ARGV[2]      the field counted
  ARGV[3]      bucket TTL, ms
  ARGV[4]      now, epoch ms (the index's score)
  ARGV[5..9]   each slot's name, for its index

  Returns 1 counted now, 0 counted before.
]]
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[1])) then
  return 0
end
for i = 2, 6 do
  if KEYS[i] ~= KEYS[1] then
    redis.call('HINCRBY', KEYS[i], ARGV[2], 1)
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[3]))
    redis.call('ZADD', KEYS[i + 5], tonumber(ARGV[4]), ARGV[i + 3])
  end
end
return 1
