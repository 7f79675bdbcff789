--[[
  Removes an operator override and writes its audit entry in the same step, so an
  override is cleared or expired exactly once: two sweepers (or a sweeper and an operator)
  racing for it write one entry between them, and an override set again meanwhile is
  never taken for the old one.

  KEYS[1]  the adjustments hash (field `ovr:<layerKey>`, value JSON: scope, name, kind,
           rate, untilMs, actor, reason, setAt)
  KEYS[2]  the audit stream
  ARGV[1]  the field
  ARGV[2]  'expired' to remove it only if its untilMs <= ARGV[5] (the sweep); 'live' only if
           it is still in force (an operator's clear: an expired one is the sweep's to record)
  ARGV[3]  the entry's action (`clear`, `expire`)
  ARGV[4]  the entry's actor
  ARGV[5]  now, epoch ms
  ARGV[6]  the entry's reason
  ARGV[7]  the stream's approximate maximum length

  Returns { 1, value } removed (value: what it held); { 0, '' } nothing there, or not in
  the state ARGV[2] asks for.
]]
local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then
  return { 0, '' }
end
local ok, o = pcall(cjson.decode, value)
if not ok or type(o) ~= 'table' then
  o = {}
end
local untilMs = tonumber(o.untilMs) or 0
if (ARGV[2] == 'expired') == (untilMs > tonumber(ARGV[5])) then
  return { 0, '' }
end
redis.call('HDEL', KEYS[1], ARGV[1])
local entry = {
  'action', ARGV[3],
  'at', ARGV[5],
  'scope', tostring(o.scope or ''),
  'name', tostring(o.name or ''),
  'kind', tostring(o.kind or ''),
  'untilMs', string.format('%.0f', untilMs),
  'actor', ARGV[4],
  'reason', ARGV[6],
}
if type(o.rate) == 'number' then
  entry[#entry + 1] = 'rate'
  entry[#entry + 1] = tostring(o.rate)
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[7], '*', unpack(entry))
return { 1, value }
