--[[
  Takes or renews a lease: one holder at a time (the governor's leader).

  KEYS[1]  the lease key
  ARGV[1]  the holder asking
  ARGV[2]  lease length, ms

  Returns 1 when the holder has the lease (taken now or renewed), 0 when another holds it.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
