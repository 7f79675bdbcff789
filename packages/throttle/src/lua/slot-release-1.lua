--[[
  Gives back connection slots.

  KEYS[1]  the provider's slot set
  ARGV     lease ids

  Returns the number of leases removed.
]]
return redis.call('ZREM', KEYS[1], unpack(ARGV))
