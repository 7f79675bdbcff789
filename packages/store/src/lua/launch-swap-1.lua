--[[
  Writes a campaign's launch (its record and the gate the injection reads) only if nobody
  wrote it since the writer read it: the leader's decision, an operator's approval and a
  new launch request never overwrite one another.

  KEYS[1]  the launch hash (`keys.launch(id)`): fields v, record, gate, summary

  ARGV[1]  the version the writer read (`0`: there was no launch)
  ARGV[2]  the record (JSON)
  ARGV[3]  the gate (JSON)
  ARGV[4]  the summary the status shows (JSON)

  Returns the new version, or 0 when the version moved (nothing written).
]]
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'v', v + 1, 'record', ARGV[2], 'gate', ARGV[3], 'summary', ARGV[4])
return v + 1
