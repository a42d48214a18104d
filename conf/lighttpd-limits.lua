-- postern's cap on connections per client address for lighttpd (run by
-- mod_magnet for every /api/ request: lighttpd-postern.conf). lighttpd
-- 1.4.65 removed mod_evasive ("evasive.max-conns-per-ip") in favour of
-- a few lines of Lua like these, which count the same way: when a
-- request arrives, the address's open connections (its event streams
-- apart: pushd caps those per session and address itself, and a school
-- behind one NAT address holds one per open browser). Past max_conns
-- the request is a JSON 429; the others of that address go on.
--
-- Connections still sending their request head are counted too, but
-- lighttpd runs this only once a head is complete: it cannot close a
-- connection that trickles its head (see docs/SECURITY.md, "Denial of
-- service", for that gap and the firewall rule that closes it).
--
-- A browser opens about six connections to a site, plus its event
-- stream; 128 is twenty browsers loading at once from one address. A
-- bigger school or office behind one address: raise it, or give its
-- address a lighttpd condition that skips this script.
local max_conns = 128

local r = lighty.r
local addr = r.req_attr["request.remote-addr"]
local n = 0
for other in lighty.server.irequests() do
  if other.req_attr["request.remote-addr"] == addr then
    local path = other.req_attr["uri.path"] or ""
    if path:sub(1, 11) ~= "/api/events" then
      n = n + 1
    end
  end
end
if n > max_conns then
  r.resp_header["Content-Type"] = "application/json; charset=utf-8"
  r.resp_header["Retry-After"] = "10"
  r.resp_body:set({ '{"error":"rate_limited","message":"Too many ' ..
    'connections from your address. Please wait and try again."}' })
  return 429
end
