--[[
  Lowers one key's effective rate after a throttle (HTTP 429, SMTP 421 4.7.28…).

  The entry is "factor,until,lastCut" in field ARGV[1] of the adjustments hash: the rate
  runs at factor × configured until `until` (ms, Redis time), then doubles every `hold` ms
  back to full. A throttle multiplies the current factor by ARGV[2] (not below ARGV[3]),
  unless the last cut was less than ARGV[4] ms ago: the refusals of one burst arrive
  together and are one signal, so they cut once (the hold is still extended).

  KEYS[1]  the adjustments hash
  ARGV[1]  field: "slow:<layer key>"
  ARGV[2]  factor per throttle (0 < f < 1)
  ARGV[3]  minimum factor
  ARGV[4]  cooldown, ms
  ARGV[5]  hold, ms

  Returns { cut, factor × 1e6, until, lastCut }: cut 1 when the rate was lowered, 0 when
  only the hold moved.
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local step, floor, cooldown, hold = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])

local factor, untilMs, lastCut = 1, 0, 0
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local a, b, c = string.match(raw, '^([^,]+),([^,]+),([^,]+)$')
  factor, untilMs, lastCut = tonumber(a), tonumber(b), tonumber(c)
  if now > untilMs then
    -- Recovering: doubled once per hold period since the hold ended.
    factor = math.min(1, factor * 2 ^ (math.floor((now - untilMs) / hold) + 1))
  end
end

local cut = 0
if now - lastCut >= cooldown then
  factor = math.max(floor, factor * step)
  lastCut = now
  cut = 1
end
untilMs = now + hold
redis.call('HSET', KEYS[1], ARGV[1], string.format('%.6f,%d,%d', factor, untilMs, lastCut))
return { cut, math.floor(factor * 1000000), untilMs, lastCut }
