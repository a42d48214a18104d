-- postern's cap on connections per client address for lighttpd (run by
-- mod_magnet for every /api/ request: lighttpd-postern.conf). lighttpd
-- 1.4.65 removed mod_evasive ("evasive.max-conns-per-ip") in favour of
-- a few lines of Lua like these, which count the same way: when a
-- request arrives, the address's open connections (its event streams
-- apart: pushd caps those per session and address itself, and a school
-- behind one NAT address holds one per open browser). Past max_conns
-- the request is a JSON 429; the others of that address go on.
--
-- As mod_evasive did, only connections with a whole request head count
-- (sending a body, waiting for or reading an answer): those still
-- sending their head or idle between requests have no path yet. A
-- thousand tabs reconnecting at once from one address are not a flood.
-- lighttpd runs this only once a head is complete, so it cannot close a
-- connection that trickles its head either (see docs/SECURITY.md,
-- "Denial of service", for that gap and the firewall rule that closes
-- it).
--
-- A browser opens about six connections to a site, plus its event
-- stream; 1024 is a school's worth of browsers behind one NAT address
-- loading at once, or reconnecting at once after a restart (the suite's
-- 1,000 tabs from one address, reconnecting after pushd was killed, were
-- refused their JMAP calls at 128). Lower it where no such crowd shares
-- an address; a cap far below lighttpd's connections (5,461) is what
-- keeps one address from taking them all.
local max_conns = 1024

-- Counting walks every connection lighttpd has: skipped while there are
-- too few for any address to be past the cap.
if lighty.server.stats["clients_open"] <= max_conns then
  return 0
end
local r = lighty.r
local addr = r.req_attr["request.remote-addr"]
local n = 0
for other in lighty.server.irequests() do
  if other.req_attr["request.remote-addr"] == addr then
    local path = other.req_attr["uri.path"] or ""
    if path ~= "" and path:sub(1, 11) ~= "/api/events" then
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
