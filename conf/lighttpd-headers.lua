-- The security headers of an API answer on what lighttpd answers itself
-- under /api/ (its errors from www/api-errors/, a responder not running,
-- a body over server.max-request-size, the per-address 429), run by
-- mod_magnet as each answer starts (lighttpd-postern.conf). postern's
-- own answers already carry them (shared/req.c): those are left as they
-- are, so a blob keeps its second, sandbox, policy.
local h = lighty.r.resp_header
if h["X-Content-Type-Options"] == nil then
  h["X-Content-Type-Options"] = "nosniff"
  h["X-Frame-Options"] = "DENY"
  h["Referrer-Policy"] = "no-referrer"
  h["Content-Security-Policy"] = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  h["Cross-Origin-Resource-Policy"] = "same-origin"
  h["Cache-Control"] = "no-store"
end
