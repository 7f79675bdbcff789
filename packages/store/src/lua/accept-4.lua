--[[
  Creates a message's record when Sluice accepts it, unless one exists (a repeated
  idempotency key, an injected recipient injected again): the first message wins, also
  when its record has been compacted into its campaign's block. Every key is in the message's
  home.

  KEYS[1]  the message record (hash)
  KEYS[2]  its campaign's part in its home (counters), or the record key again when there is
           no campaign
  KEYS[3]  its block of compact records, or the record key again when not injected
  KEYS[4]  its campaign's bitmap of records gone, or the record key again when not injected
  ARGV[1]  its field in that block (`2·slot`), '' when not injected
  ARGV[2]  its position in the campaign (its bit), '' when not injected
  ARGV[3..] field, value pairs of the new record (must include state and createdAt)

  Returns { created (1|0), state }: state `final` for a record gone once acknowledged.
]]
local state = redis.call('HGET', KEYS[1], 'state')
if state then
  return { 0, state }
end
if KEYS[3] ~= KEYS[1] then
  local compact = redis.call('HGET', KEYS[3], ARGV[1])
  if compact then
    local names = { s = 'sent', a = 'sent', c = 'cancelled', x = 'suppressed' }
    return { 0, names[string.sub(compact, 1, 1)] or 'sent' }
  end
end
if KEYS[4] ~= KEYS[1] and redis.call('GETBIT', KEYS[4], tonumber(ARGV[2])) == 1 then
  return { 0, 'final' }
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
if KEYS[2] ~= KEYS[1] then
  redis.call('HINCRBY', KEYS[2], 'n:accepted', 1)
end
-- The state just written, from the arguments (no read back).
for i = 3, #ARGV, 2 do
  if ARGV[i] == 'state' then return { 1, ARGV[i + 1] } end
end
return { 1, '' }
