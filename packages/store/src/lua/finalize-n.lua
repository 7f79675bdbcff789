--[[
  Puts messages of one home in their final state exactly once each, counts them, and publishes
  each on the home's outcome stream (in this same call: no final state without its event, nor
  the reverse). One message, or a batch's recipients of one campaign (docs/design/batches.md).
  Every key is in the home. A suppression that goes with one is written before this call, under
  the tenant's tag (`finalize` in records/store.ts).

  KEYS[1]     the campaign's counters in this home, or the outcome stream again when none
  KEYS[2]     the home's outcome stream
  KEYS[3..]   the message records, one per message
  ARGV[1]  final state
  ARGV[2]  now, epoch ms
  ARGV[3]  record TTL, seconds
  ARGV[4]  states one may be finalized from, comma-separated ('' for any non-final one)
  ARGV[5]  the final state to end in instead when a record counts an ambiguous attempt
           (`ambiguous` > 0: a copy may have been delivered), '' for none; the campaign
           count follows the state written
  ARGV[6..] per message, in KEYS order: its id, the count of its extra fields and values, then
           those field, value pairs for its record

  Returns { code, state } per message, flat: 1 finalized now (state is the one written); 0
  already final (state is that one); -1 no record; 2 not in one of the ARGV[4] states (state is
  the current one).
]]
local out = {}
local at = 6
for k = 3, #KEYS do
  local id, n = ARGV[at], tonumber(ARGV[at + 1])
  local first, last = at + 2, at + 1 + n
  at = last + 1
  -- One read of everything the message needs, one write of its record.
  local r = redis.call('HMGET', KEYS[k], 'state', 'ambiguous', 'heldBy', 'campaignId', 'tenantId', 'key',
    'providerMessageId', 'lastOutcome')
  local prev = r[1]
  if not prev then
    out[#out + 1] = -1
    out[#out + 1] = ''
  elseif prev == 'sent' or prev == 'rejected' or prev == 'suppressed' or prev == 'expired' or prev == 'cancelled'
    or prev == 'unconfirmed' then
    out[#out + 1] = 0
    out[#out + 1] = prev
  elseif ARGV[4] ~= '' and not string.find(',' .. ARGV[4] .. ',', ',' .. prev .. ',', 1, true) then
    out[#out + 1] = 2
    out[#out + 1] = prev
  else
    local state = ARGV[1]
    if ARGV[5] ~= '' and tonumber(r[2] or '0') > 0 then
      state = ARGV[5]
    end
    local providerMessageId, family = r[7], r[8]
    local fields = { 'state', state, 'updatedAt', ARGV[2], 'finalAt', ARGV[2] }
    for i = first, last, 2 do
      fields[#fields + 1] = ARGV[i]
      fields[#fields + 1] = ARGV[i + 1]
      if ARGV[i] == 'providerMessageId' then providerMessageId = ARGV[i + 1] end
      if ARGV[i] == 'lastOutcome' then family = ARGV[i + 1] end
    end
    redis.call('HSET', KEYS[k], unpack(fields))
    -- A final message waits for nothing: the scheduler's held note goes.
    if r[3] then
      redis.call('HDEL', KEYS[k], 'heldBy', 'heldKey', 'heldUntil', 'heldReason')
    end
    redis.call('EXPIRE', KEYS[k], tonumber(ARGV[3]))
    if KEYS[1] ~= KEYS[2] then
      redis.call('HINCRBY', KEYS[1], 'n:' .. state, 1)
    end
    -- Always the same fields in the same order: a stream node then stores their names once.
    redis.call('XADD', KEYS[2], '*', 'id', id, 'state', state, 'campaign', r[4] or '', 'tenant', r[5] or '',
      'key', r[6] or '', 'providerMessageId', providerMessageId or '', 'family', family or '', 'at', ARGV[2])
    out[#out + 1] = 1
    out[#out + 1] = state
  end
end
return out
