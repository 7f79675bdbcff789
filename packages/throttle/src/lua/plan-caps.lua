--[[
  Plan caps (docs/design/tenants-and-keys.md), the part of admit-n.lua that counts a message
  against its tenant's and its API key's caps: loaded before it, as one script.

  A message granted or booked at t is counted in the UTC minute, hour, day and month
  of t, for its tenant and its key, where those have caps; at a cap it is denied until the window
  ends, and nothing is charged anywhere, so a capped message is never half-admitted. A counter
  hash keeps two fields per window kind, the window's index and count for even and odd indexes
  ("m0"/"m1", "h0"/"h1", "d0"/"d1", "M0"/"M1", each "<index>:<count>"), so the current window and
  the next (a slot booked past a window's end) are both kept, and a field of an older window
  reads as 0; field "x" is when the hash expires (ms), past the last window counted.
]]
-- The month of day `day` (days since 1970-01-01, UTC) as months since year 0, and the day the
-- next month starts (the civil-from-days and days-from-civil algorithms, proleptic Gregorian).
local function monthOf(day)
  local z = day + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400 + (m <= 2 and 1 or 0)
  local ny, nm = y, m + 1
  if nm > 12 then ny, nm = y + 1, 1 end
  ny = nm <= 2 and ny - 1 or ny
  local era2 = math.floor(ny / 400)
  local yoe2 = ny - era2 * 400
  local doy2 = math.floor((153 * (nm > 2 and nm - 3 or nm + 9) + 2) / 5)
  return y * 12 + m - 1, era2 * 146097 + yoe2 * 365 + math.floor(yoe2 / 4) - math.floor(yoe2 / 100) + doy2 - 719468
end

-- The UTC minute, hour, day and month of a time (us): each its index and its end (us).
local function windowsAt(us)
  local sec = math.floor(us / 1000000)
  local mi, h, d = math.floor(sec / 60), math.floor(sec / 3600), math.floor(sec / 86400)
  local month, nextDay = monthOf(d)
  return {
    { mi, (mi + 1) * 60000000 },
    { h, (h + 1) * 3600000000 },
    { d, (d + 1) * 86400000000 },
    { month, nextDay * 86400000000 },
  }
end

local CAP_FIELDS = { 'm0', 'm1', 'h0', 'h1', 'd0', 'd1', 'M0', 'M1', 'x' }

-- A window's count in a counter hash's fields (f), 0 when its field holds another window.
local function counted(f, k, index)
  local v = f[2 * k - 1 + index % 2]
  if not v then return 0 end
  local i, n = string.match(v, '^(%d+):(%d+)$')
  return tonumber(i) == index and tonumber(n) or 0
end

-- The plan caps of request a at time `at` (us). At a cap: the cap (1-8) and its window's end.
-- Else nil, the windows and the counters read (by counter, 1 the tenant's, 2 the key's), for
-- chargeCaps.
local function capsAt(a, K, at)
  local w, reads
  for c = 1, 2 do
    local base = 16 + 4 * c
    if (a[base + 1] or 0) + (a[base + 2] or 0) + (a[base + 3] or 0) + (a[base + 4] or 0) > 0 then
      w = w or windowsAt(at)
      local f = redis.call('HMGET', K[5 + c], unpack(CAP_FIELDS))
      reads = reads or {}
      reads[c] = f
      for k = 1, 4 do
        local limit = a[base + k]
        if limit > 0 and counted(f, k, w[k][1]) >= limit then return 4 * c - 4 + k, w[k][2] end
      end
    end
  end
  return nil, nil, w, reads
end

-- Counts the message in every capped window of its tenant and key, and keeps the counters past
-- the last of those windows.
local function chargeCaps(a, K, w, reads)
  for c = 1, 2 do
    local f = reads and reads[c]
    if f then
      local base, args, last = 16 + 4 * c, {}, 0
      for k = 1, 4 do
        if a[base + k] > 0 then
          local index = w[k][1]
          args[#args + 1] = CAP_FIELDS[2 * k - 1 + index % 2]
          args[#args + 1] = string.format('%d:%d', index, counted(f, k, index) + 1)
          if w[k][2] > last then last = w[k][2] end
        end
      end
      -- Kept a day past the end of the last window counted (ms).
      local x = math.floor(last / 1000) + 86400000
      if x > (tonumber(f[9]) or 0) then
        args[#args + 1] = 'x'
        args[#args + 1] = string.format('%d', x)
        redis.call('HSET', K[5 + c], unpack(args))
        redis.call('PEXPIREAT', K[5 + c], x)
      else
        redis.call('HSET', K[5 + c], unpack(args))
      end
    end
  end
end
