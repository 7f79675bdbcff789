--[[
  Puts a message in its final state exactly once, counts it, and publishes it on the
  outcome stream (in this same call: no final state without its event, nor the reverse).

  KEYS[1]  the message record
  KEYS[2]  the campaign hash, or the record key again when there is no campaign
  KEYS[3]  the tenant's suppression list, or the record key again to suppress nothing
  KEYS[4]  the outcome stream
  ARGV[1]  final state
  ARGV[2]  now, epoch ms
  ARGV[3]  record TTL, seconds
  ARGV[4]  address to suppress ('' for none)
  ARGV[5]  suppression entry, `reply|<now ms>|<provider>|<outcome>: <reply>` (see `encodeSuppression`, feedback/suppressions.ts)
  ARGV[6]  states it may be finalized from, comma-separated ('' for any non-final one)
  ARGV[7]  the final state to end in instead when the record counts an ambiguous attempt
           (`ambiguous` > 0: a copy may have been delivered), '' for none; the suppression
           and campaign count follow the state written
  ARGV[8]  the message id (for the event)
  ARGV[9..] extra field, value pairs for the record

  Returns { code, state }: 1 finalized now (state is the one written); 0 already final
  (state is that one); -1 no record; 2 not in one of the ARGV[6] states (state is the
  current one).
]]
-- One read of everything the call needs, one write of the record.
local r = redis.call('HMGET', KEYS[1], 'state', 'ambiguous', 'heldBy', 'campaignId', 'tenantId', 'key',
  'providerMessageId', 'lastOutcome')
local prev = r[1]
if not prev then
  return { -1, '' }
end
if prev == 'sent' or prev == 'rejected' or prev == 'suppressed' or prev == 'expired' or prev == 'cancelled'
  or prev == 'unconfirmed' then
  return { 0, prev }
end
if ARGV[6] ~= '' and not string.find(',' .. ARGV[6] .. ',', ',' .. prev .. ',', 1, true) then
  return { 2, prev }
end
local state = ARGV[1]
if ARGV[7] ~= '' and tonumber(r[2] or '0') > 0 then
  state = ARGV[7]
end
local providerMessageId, family = r[7], r[8]
local fields = { 'state', state, 'updatedAt', ARGV[2], 'finalAt', ARGV[2] }
for i = 9, #ARGV, 2 do
  fields[#fields + 1] = ARGV[i]
  fields[#fields + 1] = ARGV[i + 1]
  if ARGV[i] == 'providerMessageId' then providerMessageId = ARGV[i + 1] end
  if ARGV[i] == 'lastOutcome' then family = ARGV[i + 1] end
end
redis.call('HSET', KEYS[1], unpack(fields))
-- A final message waits for nothing: the scheduler's held note goes.
if r[3] then
  redis.call('HDEL', KEYS[1], 'heldBy', 'heldKey', 'heldUntil', 'heldReason')
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
if KEYS[2] ~= KEYS[1] then
  redis.call('HINCRBY', KEYS[2], 'n:' .. state, 1)
end
if ARGV[4] ~= '' and KEYS[3] ~= KEYS[1] and state == ARGV[1] then
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
end
-- Always the same fields in the same order: a stream node then stores their names once.
redis.call('XADD', KEYS[4], '*', 'id', ARGV[8], 'state', state, 'campaign', r[4] or '', 'tenant', r[5] or '',
  'key', r[6] or '', 'providerMessageId', providerMessageId or '', 'family', family or '', 'at', ARGV[2])
return { 1, state }
