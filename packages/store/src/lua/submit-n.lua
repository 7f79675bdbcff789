--[[
  The worker's mark before a batch's final bytes: every recipient's record to `submitted`,
  all or none. One request carries them all, so a recipient that may not go (final already,
  missing, or `submitted` by another run) stops the mark for every one: nothing is written,
  the request is never completed, and the worker sends the others in a request of their own.
  Every key is in the batch's one home (a batch never spans homes).

  KEYS[1]     the campaign's part in the home (the pause flag's copy), or KEYS[2] again when
              the batch has no campaign
  KEYS[2..]   the records, one per recipient
  ARGV[1]     now, epoch ms

  As transition-3's 'submit' for each record: counts the attempt (attempts + 1), clears the
  scheduler's held note, and refuses a record already `submitted`. A paused campaign holds
  the whole batch.

  Returns { code, ... }:
    { 1, attempts1, attempts2, ... } moved, each record's attempt number, in KEYS order;
    { 2 } held: the campaign is paused, nothing changed;
    { 3, i, c, state, ... } refused: for each record i (1-based among the records) that may
      not go, its code c (-1 no record, 0 final already, 3 submitted already) and state.
]]
local n = #KEYS - 1
local read, refused = {}, {}
for i = 1, n do
  local f = redis.call('HMGET', KEYS[i + 1], 'state', 'heldBy', 'attempts')
  local state = f[1]
  read[i] = f
  if not state then
    refused[#refused + 1] = i
    refused[#refused + 1] = -1
    refused[#refused + 1] = ''
  elseif state == 'sent' or state == 'rejected' or state == 'suppressed' or state == 'expired'
    or state == 'cancelled' or state == 'unconfirmed' then
    refused[#refused + 1] = i
    refused[#refused + 1] = 0
    refused[#refused + 1] = state
  elseif state == 'submitted' then
    refused[#refused + 1] = i
    refused[#refused + 1] = 3
    refused[#refused + 1] = state
  end
end
if #refused > 0 then
  return { 3, unpack(refused) }
end
if KEYS[1] ~= KEYS[2] and redis.call('HGET', KEYS[1], 'paused') == '1' then
  return { 2 }
end
local out = { 1 }
for i = 1, n do
  local attempts = tonumber(read[i][3] or '0') + 1
  redis.call('HSET', KEYS[i + 1], 'state', 'submitted', 'updatedAt', ARGV[1], 'attempts', attempts)
  if read[i][2] then
    redis.call('HDEL', KEYS[i + 1], 'heldBy', 'heldKey', 'heldUntil', 'heldReason')
  end
  out[#out + 1] = attempts
end
return out
