--[[
  Moves a message to a non-final state, unless it is already final (final states never
  change) or missing; a first deferral is published on the outcome stream in the same call.
  Every key is in the message's home.

  KEYS[1]  the message record
  KEYS[2]  its campaign's part in its home (the pause flag's copy), or the record key again
           when there is none
  KEYS[3]  its home's outcome stream
  ARGV[1]  the new state
  ARGV[2]  'attempt' to count an attempt: attempts + 1, and report whether the previous
           attempt was submitted in full but never recorded an outcome (its worker died
           waiting for the answer: ambiguous; one that died before submitting is not);
           an attempt is held, changing nothing, while the campaign is paused;
           'from:<state>[,<state>…]' to move only from one of those states (else code 3,
           nothing changed); 'ambiguous' to count an attempt whose answer was lost after it
           was submitted in full, only from `submitted` (else code 3); 'deferred:<message id>' to move and publish the
           message's first deferral (state `deferred`, family = the record's lastOutcome);
           'submit' for the worker's mark before a request's final bytes: counts the
           attempt like 'attempt' (held while the campaign is paused), and refuses (code 3)
           a record already `submitted`: another run's request is out, or its worker died
           after it was (found ambiguous by the next run's own check)
  ARGV[3]  now, epoch ms
  ARGV[4..] extra field, value pairs

  A 'submit' clears the scheduler's held note (heldBy, heldKey, heldUntil, heldReason) when
  the record has one: whatever held the message no longer does. A move to `dispatched` clears
  it too; only an older fleet's admission made that move (markDispatched keeps it for tests).

  Returns { code, state, attempts, ambiguous }: code 1 moved, 0 final already (state is
  the final one), -1 no record, 2 held (campaign paused), 3 not in the 'from' state (or,
  for 'submit', `submitted` already; for 'ambiguous', not `submitted`).
]]
local read = redis.call('HMGET', KEYS[1], 'state', 'heldBy', 'attempts')
local prev, heldBy = read[1], read[2]
local attempts = tonumber(read[3] or '0')
if not prev then
  return { -1, '', 0, 0 }
end
if prev == 'sent' or prev == 'rejected' or prev == 'suppressed' or prev == 'expired' or prev == 'cancelled'
  or prev == 'unconfirmed' then
  return { 0, prev, attempts, 0 }
end
local mode = ARGV[2]
if string.sub(mode, 1, 5) == 'from:' and not string.find(',' .. string.sub(mode, 6) .. ',', ',' .. prev .. ',', 1, true) then
  return { 3, prev, attempts, 0 }
end
local submit = mode == 'submit'
if (submit and prev == 'submitted') or (mode == 'ambiguous' and prev ~= 'submitted') then
  return { 3, prev, attempts, 0 }
end
if (submit or mode == 'attempt') and KEYS[2] ~= KEYS[1] and redis.call('HGET', KEYS[2], 'paused') == '1' then
  return { 2, prev, attempts, 0 }
end
local ambiguous = 0
if mode == 'ambiguous' or (mode == 'attempt' and prev == 'submitted') then
  ambiguous = 1
  redis.call('HINCRBY', KEYS[1], 'ambiguous', 1)
end
if mode == 'attempt' or submit then
  attempts = attempts + 1
  redis.call('HSET', KEYS[1], 'state', ARGV[1], 'updatedAt', ARGV[3], 'attempts', attempts)
else
  redis.call('HSET', KEYS[1], 'state', ARGV[1], 'updatedAt', ARGV[3])
end
if heldBy and (ARGV[1] == 'dispatched' or submit) then
  redis.call('HDEL', KEYS[1], 'heldBy', 'heldKey', 'heldUntil', 'heldReason')
end
if #ARGV > 3 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 4))
end
if string.sub(mode, 1, 9) == 'deferred:' then
  local r = redis.call('HMGET', KEYS[1], 'campaignId', 'tenantId', 'key', 'lastOutcome')
  redis.call('XADD', KEYS[3], '*', 'id', string.sub(mode, 10), 'state', 'deferred', 'campaign', r[1] or '',
    'tenant', r[2] or '', 'key', r[3] or '', 'providerMessageId', '', 'family', r[4] or '', 'at', ARGV[3])
end
return { 1, prev, attempts, ambiguous }
