--[[
  Puts a message in its final state exactly once, counts it, and publishes it on its home's
  outcome stream (in this same call: no final state without its event, nor the reverse).
  Every key is in the message's home. A suppression that goes with it is written before this
  call, under the tenant's tag (`finalize` in records/store.ts).

  KEYS[1]  the message record
  KEYS[2]  its campaign's counters in this home, or the record key again when there is no campaign
  KEYS[3]  the home's outcome stream
  ARGV[1]  final state
  ARGV[2]  now, epoch ms
  ARGV[3]  record TTL, seconds
  ARGV[4]  states it may be finalized from, comma-separated ('' for any non-final one)
  ARGV[5]  the final state to end in instead when the record counts an ambiguous attempt
           (`ambiguous` > 0: a copy may have been delivered), '' for none; the campaign
           count follows the state written
  ARGV[6]  the message id (for the event)
  ARGV[7..] extra field, value pairs for the record

  Returns { code, state }: 1 finalized now (state is the one written); 0 already final
  (state is that one); -1 no record; 2 not in one of the ARGV[4] states (state is the
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
if ARGV[4] ~= '' and not string.find(',' .. ARGV[4] .. ',', ',' .. prev .. ',', 1, true) then
  return { 2, prev }
end
local state = ARGV[1]
if ARGV[5] ~= '' and tonumber(r[2] or '0') > 0 then
  state = ARGV[5]
end
local providerMessageId, family = r[7], r[8]
local fields = { 'state', state, 'updatedAt', ARGV[2], 'finalAt', ARGV[2] }
for i = 7, #ARGV, 2 do
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
-- Always the same fields in the same order: a stream node then stores their names once.
redis.call('XADD', KEYS[3], '*', 'id', ARGV[6], 'state', state, 'campaign', r[4] or '', 'tenant', r[5] or '',
  'key', r[6] or '', 'providerMessageId', providerMessageId or '', 'family', family or '', 'at', ARGV[2])
return { 1, state }
