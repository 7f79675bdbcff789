--[[
  Gives back all of one holder's connection slots and leaves the holders' list.

  KEYS[1]  the provider's slot set
  KEYS[2]  the provider's live holders
  ARGV[1]  holder id
  ARGV[2]  how many slots it may hold (ids holder#0 .. holder#n-1)

  Returns the number of leases removed.
]]
local removed = 0
for i = 0, tonumber(ARGV[2]) - 1 do
  removed = removed + redis.call('ZREM', KEYS[1], ARGV[1] .. '#' .. i)
end
redis.call('ZREM', KEYS[2], ARGV[1])
return removed
