--[[
  Clears a campaign's pause flag, unless the campaign was cancelled: cancelling cannot be
  undone, and a cancel that lands while a resume runs must win (its flags are set first).

  KEYS[1]  the campaign hash

  Returns 1 cleared (or not set), 0 cancelled (nothing changed), -1 no such campaign.
]]
if redis.call('HEXISTS', KEYS[1], 'createdAt') == 0 then
  return -1
end
if redis.call('HGET', KEYS[1], 'cancelled') == '1' then
  return 0
end
redis.call('HDEL', KEYS[1], 'paused')
return 1
