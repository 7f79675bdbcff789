--[[
  Takes an idle campaign out of the campaigns with work, unless its mark moved since the
  scheduler read it: whoever added a job meanwhile bumped the mark after the add, so a
  campaign that got work while the scheduler found its queue empty stays.

  KEYS[1]  the campaigns with work (sorted set id → mark)
  ARGV[1]  the campaign id
  ARGV[2]  its mark as the scheduler read it

  Returns 1 pruned, 0 kept (its mark moved, or it was gone already).
]]
local mark = redis.call('ZSCORE', KEYS[1], ARGV[1])
if mark and tonumber(mark) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
