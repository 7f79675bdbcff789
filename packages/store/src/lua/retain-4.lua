--[[
  Applies a class's retention to a campaign message whose outcome every consumer group has
  acknowledged: a success (`sent`, `cancelled`, `suppressed`) shrinks or goes; a failure,
  a message not final, a class kept `full`, or a message of no campaign (transactional mail
  keeps its whole record for its TTL) is left alone.

  KEYS[1]  the message record
  KEYS[2]  its block of compact records (hash), or the record key again when the id is
           not an injected one
  KEYS[3]  its attempt log
  KEYS[4]  its campaign's bitmap of records gone, or the record key again when not injected
  ARGV[1..4] retention of critical, high, normal, low: 'full', 'compact', 'until-acknowledged'
  ARGV[5]  its slot in the block (0..63), '' when not injected
  ARGV[6]  record TTL, seconds
  ARGV[7]  its position in the campaign, '' when not injected

  Returns 0 left alone (or no record); 1 moved into the block (field 2·slot
  `<state char><finalAt base 36>|<provider>`, field 2·slot+1 the provider message id);
  2 shrunk in place (a value too long for a listpack, or not injected); 3 deleted (its bit
  set in the bitmap, so a second injection of it is refused).
]]
local h = redis.call('HMGET', KEYS[1], 'state', 'priority', 'provider', 'providerMessageId', 'finalAt', 'ambiguous',
  'campaignId')
local codes = { sent = 's', cancelled = 'c', suppressed = 'x' }
local code = h[1] and codes[h[1]]
if not code or not h[7] or h[7] == '' then
  return 0
end
local retention = ({ critical = ARGV[1], high = ARGV[2], normal = ARGV[3], low = ARGV[4] })[h[2] or 'low'] or 'full'
if retention == 'full' then
  return 0
end
redis.call('DEL', KEYS[3])
if retention == 'until-acknowledged' then
  redis.call('DEL', KEYS[1])
  if ARGV[7] ~= '' and KEYS[4] ~= KEYS[1] then
    redis.call('SETBIT', KEYS[4], tonumber(ARGV[7]), 1)
    redis.call('EXPIRE', KEYS[4], tonumber(ARGV[6]))
  end
  return 3
end
-- `sent` counted so while an attempt was never answered (delivery.onAmbiguous: assume-sent).
if code == 's' and tonumber(h[6] or '0') > 0 then
  code = 'a'
end
local n, digits, at = tonumber(h[5] or '0'), '0123456789abcdefghijklmnopqrstuvwxyz', ''
repeat
  local d = n % 36
  at = string.sub(digits, d + 1, d + 1) .. at
  n = (n - d) / 36
until n < 1
local meta, pmid = code .. at .. '|' .. (h[3] or ''), h[4] or ''
-- Redis keeps a hash a listpack while its values are at most 64 bytes (hash-max-listpack-value).
if ARGV[5] ~= '' and KEYS[2] ~= KEYS[1] and #meta <= 64 and #pmid <= 64 then
  local slot = tonumber(ARGV[5])
  redis.call('HSET', KEYS[2], tostring(slot * 2), meta)
  if pmid ~= '' then
    redis.call('HSET', KEYS[2], tostring(slot * 2 + 1), pmid)
  end
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[6]))
  redis.call('DEL', KEYS[1])
  return 1
end
redis.call('HDEL', KEYS[1], 'to', 'lastReply', 'createdAt', 'updatedAt', 'attempts', 'retryAt', 'heldBy', 'heldKey',
  'heldUntil', 'heldReason')
return 2
