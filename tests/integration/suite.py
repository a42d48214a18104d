"""The foundation's integration checks, run against a real lighttpd with
the postern responders and a real Cyrus. test_fcgi.py and test_cgi.py run
the same suite in each way of running."""

import os
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB, CAROL = "alice@example.test", "bob@example.test", "carol@example.test"
BUDGET = 40
# The budget's window: a minute, longer when the servers run slowed
# (valgrind), so that a burst of BUDGET + 2 calls still fits in one.
BUDGET_WINDOW = int(60 * SLOW)
MAX_REQUEST = 256 * 1024
LOGIN_WINDOW = 3600
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def frame_page(t, c, what):
    """The PDF preview's frame page has a policy of its own: one CSP, which
    sandboxes it (an opaque origin however it is opened), lets it fetch
    nothing and lets the app, and only the app, frame it; the app itself
    stays unframeable. Run on every web server file (install test too)."""
    r = c.request("GET", "/pdfview.html")
    csp = r.header_all("Content-Security-Policy")
    parts = [p.strip() for p in csp[0].split(";")] if len(csp) == 1 else []
    t.ok(r.status == 200 and "sandbox allow-scripts" in parts and "default-src 'none'" in parts
         and "frame-ancestors 'self'" in parts and "script-src 'self'" in parts
         and r.header_all("X-Frame-Options") in ([], ["SAMEORIGIN"]),
         f"{what}: the PDF frame page is sandboxed and framed by the app alone", r.headers)
    r = c.request("GET", "/")
    t.ok(r.header_all("Content-Security-Policy") != [] and all("frame-ancestors 'none'" in v for v in
         r.header_all("Content-Security-Policy")) and r.header("X-Frame-Options") == "DENY",
         f"{what}: the app itself still refuses every frame", r.headers)


def wait_for(pred, timeout, interval=0.25):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    return None


class Suite:
    def __init__(self, tap, stack):
        self.t = tap
        self.s = stack

    def client(self):
        return Client(self.s.url)

    def signed_in(self, user):
        c = self.client()
        r = c.login(user, USERS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        return c

    # -- sign-in ---------------------------------------------------------------

    def sign_in(self):
        t, c = self.t, self.client()
        r = c.login(ALICE, USERS[ALICE])
        t.eq(r.status, 200, "sign-in with the right password")
        doc = r.json()
        t.eq(doc.get("apiUrl"), "/api/jmap", "session apiUrl rewritten to /api/jmap")
        t.eq(doc.get("downloadUrl"), "/api/blob/{accountId}/{blobId}/{name}?accept={type}",
             "downloadUrl rewritten")
        t.eq(doc.get("uploadUrl"), "/api/upload/{accountId}", "uploadUrl rewritten")
        t.ok(doc.get("eventSourceUrl", "").startswith("/api/events?"), "eventSourceUrl rewritten")
        t.ok(ALICE in doc.get("accounts", {}), "the session lists alice's account")
        cookie = r.header("Set-Cookie") or ""
        t.ok("HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie,
             "session cookie is HttpOnly, SameSite, Path=/", cookie)
        t.ok("Max-Age" not in cookie, "without remember the cookie ends with the browser")
        t.ok(USERS[ALICE] not in r.body.decode(), "the password is not in the answer")
        for k, v in SECURITY_HEADERS.items():
            t.eq(r.header(k), v, f"sign-in answer carries {k}")
        t.ok("frame-ancestors 'none'" in (r.header("Content-Security-Policy") or ""),
             "CSP forbids framing")
        r = c.request("GET", "/api/auth/session")
        t.eq(r.status, 200, "GET /api/auth/session with the cookie")
        t.eq(r.json().get("apiUrl"), "/api/jmap", "cached session document is the rewritten one")
        r2 = self.client().login(ALICE, USERS[ALICE], remember=True)
        t.ok("Max-Age=" in (r2.header("Set-Cookie") or ""), "remember gives a lasting cookie")

    def bad_sign_in(self):
        t, c = self.t, self.client()
        r = c.login(ALICE, "wrong-password")
        t.eq(r.status, 401, "wrong password refused with 401")
        t.eq(r.json().get("error"), "invalid_credentials", "error code invalid_credentials")
        t.eq(r.header("WWW-Authenticate"), None, "no WWW-Authenticate reaches the browser")
        t.eq(c.cookie, None, "no cookie after a failed sign-in")
        r = c.request("GET", "/api/auth/session")
        t.eq(r.status, 401, "no session without sign-in")
        t.eq(r.json().get("error"), "unauthenticated", "error code unauthenticated")
        r = c.request("POST", "/api/auth/login", b'{"username": "x"', {"Content-Type": "application/json"})
        t.eq(r.status, 400, "broken sign-in JSON is 400")
        r = c.request("POST", "/api/auth/login", b"username=x", {"Content-Type": "application/x-www-form-urlencoded"})
        t.eq(r.status, 415, "a form-encoded sign-in is 415")

    def login_rate_limit(self):
        t, c = self.t, self.client()
        window = time.time() // LOGIN_WINDOW
        statuses = [c.login(BOB, f"wrong-{i}").status for i in range(10)]
        if time.time() // LOGIN_WINDOW != window:
            # The counts of a fixed window began again mid-burst: what
            # follows would test nothing. Rare (one hour, a second's burst).
            t.ok(True, "# SKIP the burst straddled a sign-in window")
            return
        t.eq(statuses, [401] * 10, "ten quick wrong passwords are each 401")
        r = c.login(BOB, "wrong-10")
        t.eq(r.status, 429, "the 11th quick wrong password is 429")
        t.eq(r.json().get("error"), "rate_limited", "error code rate_limited")
        ra = r.header("Retry-After") or ""
        t.ok(ra.isdigit() and 0 < int(ra) <= LOGIN_WINDOW, "429 carries Retry-After", ra)
        r = c.login(BOB, USERS[BOB])
        t.eq(r.status, 429, "even the right password waits out the limit")
        r = self.client().login(CAROL, USERS[CAROL])
        t.eq(r.status, 200, "another user from the same address still signs in")

    # -- the relay -------------------------------------------------------------

    def jmap_calls(self):
        t, c = self.t, self.signed_in(ALICE)
        r = c.jmap([["Mailbox/get", {"accountId": ALICE}, "0"]])
        t.eq(r.status, 200, "Mailbox/get through /api/jmap")
        boxes = r.json()["methodResponses"][0][1]["list"]
        roles = {b.get("role") for b in boxes}
        t.ok({"inbox", "sent", "drafts", "trash"} <= roles, "mailboxes with roles", roles)
        for bad in ("WWW-Authenticate", "Upgrade", "Alt-Svc", "Set-Cookie"):
            t.eq(r.header(bad), None, f"upstream {bad} is not passed on")
        t.eq(r.header("Content-Encoding"), None, "no encoding when the client asks none")
        inbox = next(b["id"] for b in boxes if b.get("role") == "inbox")
        drafts = next(b["id"] for b in boxes if b.get("role") == "drafts")
        r = c.jmap([["Email/query", {"accountId": ALICE, "filter": {"inMailbox": inbox},
                                     "sort": [{"property": "receivedAt", "isAscending": False}],
                                     "limit": 10}, "q"]])
        ids = r.json()["methodResponses"][0][1].get("ids", [])
        t.ok(r.status == 200 and len(ids) > 0, "Email/query lists the inbox", r)
        r = c.jmap([["Email/set", {"accountId": ALICE, "update": {ids[0]: {"keywords/$flagged": True}}}, "s"],
                    ["Email/get", {"accountId": ALICE, "ids": [ids[0]], "properties": ["keywords"]}, "g"]])
        res = r.json()["methodResponses"]
        t.ok(ids[0] in (res[0][1].get("updated") or {}), "Email/set flags a message", res)
        t.ok(res[1][1]["list"][0]["keywords"].get("$flagged"), "the flag is stored")
        r = c.jmap([["Mailbox/get", {"accountId": ALICE}, "0"]], headers={"Accept-Encoding": "gzip"})
        t.eq(r.header("Content-Encoding"), "gzip", "gzip when the client asks")
        t.ok(r.status == 200 and r.json()["methodResponses"][0][0] == "Mailbox/get",
             "the gzip body is the JMAP answer")
        self.submission(c, drafts)

    def ranges(self):
        """Range as API.md says, whatever the web server in front: one
        plain byte range is 206, any other Range is ignored (the whole
        blob, 200), never the web server's own multipart answer or 416."""
        t, c = self.t, self.signed_in(ALICE)
        body = bytes(range(256)) * 4
        r = c.request("POST", f"/api/upload/{ALICE}", body,
                      headers={"Content-Type": "application/octet-stream"})
        t.ok(r.status in (200, 201) and "blobId" in r.json(), "a small blob uploaded", r)
        path = f"/api/blob/{ALICE}/{r.json()['blobId']}/b.bin"
        for rng, what in (("bytes=0-9,20-29", "a multi-range"), ("bytes=abc", "an invalid Range"),
                          ("bytes=9-0", "a reversed range"), ("bytes=2000-", "a range past the end")):
            r = c.request("GET", path, headers={"Range": rng})
            want = (416, None) if rng == "bytes=2000-" else (200, body)
            got = (r.status, r.body if r.status == 200 else None)
            t.ok(got == want and "multipart" not in (r.header("Content-Type") or ""),
                 f"Range: {what} is {want[0]} as API.md says",
                 f"{r.status} {r.header('Content-Type')} {len(r.body)} bytes")
        r = c.request("GET", path, headers={"Range": "bytes=10-19"})
        t.ok(r.status == 206 and r.body == body[10:20] and
             r.header("Content-Range") == f"bytes 10-19/{len(body)}",
             "Range: one plain range is 206 with its Content-Range", f"{r.status} {r.header('Content-Range')}")

    def address_book(self):
        """The address book's CardDAV reaches the mail server in every
        configuration (test_dav.py has the rest)."""
        t, c = self.t, self.signed_in(ALICE)
        body = (b'<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:">'
                b"<d:prop><d:current-user-principal/></d:prop></d:propfind>")
        r = c.request("PROPFIND", "/api/dav/", body,
                      headers={"Content-Type": "application/xml", "Depth": "0"})
        t.ok(r.status == 207 and b"principals" in r.body,
             "the address book's CardDAV is relayed (PROPFIND /api/dav/: 207)",
             f"{r.status} {r.body[:200]!r}")

    def submission(self, c, drafts):
        t = self.t
        bob = self.signed_in(BOB)
        subject = f"postern relay test {time.time_ns()}"
        r = c.jmap([["Identity/get", {"accountId": ALICE}, "i"]])
        ident = r.json()["methodResponses"][0][1]["list"][0]["id"]
        email = {"mailboxIds": {drafts: True}, "keywords": {"$draft": True},
                 "from": [{"email": ALICE}], "to": [{"email": BOB}], "subject": subject,
                 "bodyValues": {"b": {"value": "Hello Bob, from the relay test."}},
                 "textBody": [{"partId": "b", "type": "text/plain"}]}
        r = c.jmap([["Email/set", {"accountId": ALICE, "create": {"m": email}}, "e"],
                    ["EmailSubmission/set", {"accountId": ALICE, "create": {"s": {
                        "identityId": ident, "emailId": "#m",
                        "envelope": {"mailFrom": {"email": ALICE}, "rcptTo": [{"email": BOB}]}}}}, "x"]])
        res = r.json()["methodResponses"]
        t.ok("s" in (res[1][1].get("created") or {}), "EmailSubmission/set accepted", res)

        def arrived():
            q = bob.jmap([["Email/query", {"accountId": BOB, "sort": [{"property": "receivedAt", "isAscending": False}], "limit": 5}, "q"],
                          ["Email/get", {"accountId": BOB, "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"},
                                         "properties": ["subject"]}, "g"]])
            return any(m.get("subject") == subject for m in q.json()["methodResponses"][1][1]["list"])
        t.ok(wait_for(arrived, 30), "alice's mail arrives in bob's inbox")

    def relay_body_sizes(self):
        """Bodies up to 64 KiB are read whole and sent with the request head,
        larger ones stream: both reach the JMAP server intact, and a broken
        one of either kind is refused before it does."""
        t, c = self.t, self.signed_in(CAROL)
        for size in (10, 60 * 1024, 100 * 1024):
            r = c.jmap([["Core/echo", {"pad": "x" * size}, "e"]], using=["urn:ietf:params:jmap:core"])
            res = r.json().get("methodResponses") if r.status == 200 else None
            t.ok(res and res[0][1].get("pad") == "x" * size,
                 f"a {size}-byte argument comes back through Core/echo", r.status)
        for size in (10, 100 * 1024):
            body = b'{"using": [], "methodCalls": [], "pad": "' + b"x" * size + b'"'
            r = c.request("POST", "/api/jmap", body, {"Content-Type": "application/json"})
            t.eq((r.status, r.json().get("error")), (400, "bad_request"),
                 f"a {len(body)}-byte body cut short of its closing brace is 400")

    def bad_requests(self):
        t, c = self.t, self.signed_in(CAROL)
        r = c.request("POST", "/api/jmap", b'{"using": [', {"Content-Type": "application/json"})
        t.eq((r.status, r.json().get("error")), (400, "bad_request"), "malformed JSON is 400 bad_request")
        r = c.request("POST", "/api/jmap", b'[1, 2]', {"Content-Type": "application/json"})
        t.eq(r.status, 400, "a JSON array is 400")
        r = c.request("POST", "/api/jmap", b'{}', {"Content-Type": "text/plain"})
        t.eq((r.status, r.json().get("error")), (415, "unsupported_media_type"), "wrong content type is 415")
        big = b'{"using": [], "methodCalls": [], "pad": "' + b"x" * MAX_REQUEST + b'"}'
        r = c.request("POST", "/api/jmap", big, {"Content-Type": "application/json"})
        t.eq((r.status, r.json().get("error")), (413, "too_large"), "an oversized body is 413 too_large")
        r = c.request("POST", "/api/jmap", {"using": [], "methodCalls": []}, csrf=False)
        t.eq((r.status, r.json().get("error")), (403, "missing_csrf_header"), "no CSRF header is 403")
        r = c.request("POST", "/api/jmap", {"using": [], "methodCalls": []},
                      headers={"Sec-Fetch-Site": "cross-site"})
        t.eq((r.status, r.json().get("error")), (403, "cross_site_request"), "a cross-site request is 403")
        r = c.request("GET", "/api/jmap")
        t.eq(r.status, 405, "GET /api/jmap is 405")
        r = c.request("GET", "/api/auth/nothing")
        t.eq((r.status, r.json().get("error")), (404, "not_found"), "unknown API path is 404")
        r = self.client().jmap([["Mailbox/get", {"accountId": ALICE}, "0"]])
        t.eq((r.status, r.json().get("error")), (401, "unauthenticated"), "/api/jmap without a session is 401")

    def budget_burst(self, calls):
        """BUDGET + 2 calls of a new session inside one budget window (a
        fixed BUDGET_WINDOW): a burst that straddles a window boundary,
        which a slow machine can make happen, is started over."""
        for _ in range(3):
            c = self.signed_in(CAROL)
            window = time.time() // BUDGET_WINDOW
            answers = [c.jmap(calls) for _ in range(BUDGET + 2)]
            if time.time() // BUDGET_WINDOW == window:
                return answers
        raise RuntimeError("three bursts in a row straddled a budget window")

    def budget(self):
        t = self.t
        calls = [["Core/echo", {"n": 1}, "0"]]
        answers = self.budget_burst(calls)
        statuses = [a.status for a in answers]
        t.ok(statuses[:BUDGET].count(200) == BUDGET, "calls within the budget pass", statuses)
        t.eq(statuses[BUDGET], 429, "the API budget exceeded is 429")
        r = answers[-1]
        t.ok(r.status == 429 and (r.header("Retry-After") or "").isdigit(),
             "budget 429 carries Retry-After", r)
        r = self.signed_in(CAROL).jmap(calls)
        t.eq(r.status, 200, "another session has its own budget")

    # -- sessions ---------------------------------------------------------------

    def sessions(self):
        t = self.t
        a1, a2 = self.signed_in(ALICE), self.signed_in(ALICE)
        r = a1.request("GET", "/api/auth/sessions")
        lst = r.json().get("sessions", [])
        t.ok(r.status == 200 and len(lst) >= 2 and sum(s["current"] for s in lst) == 1,
             "sessions lists alice's devices, one current", r)
        r = a1.request("POST", "/api/auth/sessions/revoke-others")
        t.ok(r.status == 200 and r.json().get("revoked", 0) >= 1, "revoke-others ends the others", r)
        t.eq(a2.request("GET", "/api/auth/session").status, 401, "a revoked device is signed out")
        t.eq(a1.request("GET", "/api/auth/session").status, 200, "the current device stays")
        r = a1.request("POST", "/api/auth/logout")
        t.eq(r.status, 200, "logout")
        t.eq(a1.cookie, None, "logout clears the cookie")
        t.eq(a1.request("GET", "/api/auth/session").status, 401, "signed out after logout")

    # -- settings (per account, postern's own state) --------------------------

    def settings(self):
        t, path = self.t, "/api/auth/settings"
        a, b = self.signed_in(ALICE), self.signed_in(BOB)
        r = a.request("GET", path)
        d = r.json() if r.status == 200 else {}
        t.ok(d.get("theme") == "system" and d.get("threads") is True and d.get("signature") == "",
             "settings start as the defaults", r)
        want = dict(d, theme="dark", density="compact", threads=False,
                    signature="-- \nAlice", language="de", compose="rich")
        r = a.request("PUT", path, want)
        t.ok(r.status == 200 and r.json() == want, "PUT stores and returns the settings", r)
        r = self.signed_in(ALICE).request("GET", path)
        t.ok(r.status == 200 and r.json() == want, "another session of the account reads them", r)
        for body, why in (({"theme": "pink"}, "a bad value"), ({"colour": "red"}, "an unknown key"),
                          ({"threads": "no"}, "a wrong type")):
            r = a.request("PUT", path, body)
            t.ok(r.status == 400 and r.json().get("error") == "invalid_settings"
                 and r.json().get("message"), f"{why} is 400 with a message", r)
        for body, why in ((b"{", "bad JSON"), (b"[1]", "an array")):
            r = a.request("PUT", path, body, headers={"Content-Type": "application/json"})
            t.ok(r.status == 400 and r.json().get("message"), f"{why} is 400 with a message", r)
        big = b'{"signature":"' + b"x" * 70000 + b'"}'
        r = a.request("PUT", path, big, headers={"Content-Type": "application/json"})
        t.eq((r.status, r.json().get("error")), (413, "too_large"), "a body over the cap is 413")
        r = a.request("PUT", path, b"theme=dark", headers={"Content-Type": "text/plain"})
        t.eq(r.status, 415, "a body that is not JSON by type is 415")
        r = a.request("PUT", path, {"theme": "light"}, csrf=False)
        t.eq((r.status, r.json().get("error")), (403, "missing_csrf_header"), "PUT without CSRF is 403")
        t.eq(a.request("GET", path).json(), want, "nothing refused was stored")
        r = b.request("GET", path)
        t.ok(r.status == 200 and r.json().get("theme") == "system", "another user does not see them", r)
        t.eq(self.client().request("GET", path).status, 401, "settings need a session")
        r = a.request("POST", path, want)
        t.eq(r.status, 405, "POST is 405")

    def expiry(self):
        t, c = self.t, self.signed_in(CAROL)
        sid = c.cookie.split(".")[0]
        pg = getattr(self.s, "pg", None)     # test_pg.py: PostgreSQL
        if pg:
            assert sid.replace("-", "").replace("_", "").isalnum()
            pg.psql(f"UPDATE sessions SET seen = seen - 13 * 3600 WHERE id = '{sid}'")
        else:
            db = sqlite3.connect(self.s.state_db, timeout=10)
            with db:
                db.execute("UPDATE sessions SET seen = seen - 13 * 3600 WHERE id = ?",
                           (sid,))
            db.close()
        r = c.request("GET", "/api/auth/session")
        t.eq((r.status, r.json().get("error")), (401, "unauthenticated"), "an idle-expired session is 401")
        r = c.jmap([["Core/echo", {}, "0"]])
        t.eq(r.status, 401, "and cannot relay")

    def no_clear_secrets(self):
        t = self.t
        data = b""
        pg = getattr(self.s, "pg", None)
        if pg:      # test_pg.py: what a dump of the database holds
            data = pg.dump()
        for suffix in ("", "-wal") if not pg else ():
            try:
                with open(self.s.state_db + suffix, "rb") as f:
                    data += f.read()
            except FileNotFoundError:
                pass
        t.ok(len(data) > 0, "the state database exists")
        for user, pw in USERS.items():
            t.ok(pw.encode() not in data, f"no password of {user.split('@')[0]} in the database")
        t.ok(ALICE.encode() not in data, "no login in clear in the database")
        if not pg:
            mode = os.stat(self.s.state_db).st_mode & 0o777
            t.eq(mode, 0o600, "the database is mode 0600")

    def config_health(self):
        t, c = self.t, self.client()
        # pushd runs beside every web server but under .htaccess.
        up = self.s.pushd is not None
        r = c.request("GET", "/api/config")
        t.ok(r.status == 200 and "uploadMax" in r.json(), "/api/config", r)
        t.eq(r.json().get("features", {}).get("push"), up,
             f"/api/config: features.push is {up} with pushd {'up' if up else 'down'}")
        r = c.request("GET", "/api/health")
        t.ok(r.status == 200 and r.json().get("database") == "ok", "/api/health", r)
        t.eq((r.json().get("status"), r.json().get("pushd")), ("ok", "up" if up else "down"),
             "/api/health says whether pushd is up")
        r = c.request("GET", "/")
        t.ok(r.status == 200 and b"<html" in r.body.lower(), "the app's index is served")
        t.ok("frame-ancestors 'none'" in (r.header("Content-Security-Policy") or ""),
             "the app is served with a CSP", r.headers)
        frame_page(t, c, "static files")

    def upstream_down(self):
        t = self.t
        c = self.signed_in(CAROL)
        self.s.cyrus.stop()
        self.s.cyrus = None
        r = c.jmap([["Core/echo", {}, "0"]])
        t.eq((r.status, r.json().get("error")), (502, "upstream_error"), "relay with the mail server down is 502")
        d = self.client()
        statuses = [d.login(ALICE, "whatever").status for _ in range(12)]
        t.eq(statuses, [502] * 12, "sign-in with the mail server down is 502, never a lockout")
        r = d.login(ALICE, USERS[ALICE])
        msg = r.json().get("message", "")
        t.ok(r.status == 502 and "not a problem with your password" in msg,
             "the message says it is not the password", r)

    def run(self):
        for name in ("config_health", "sign_in", "bad_sign_in", "jmap_calls", "ranges", "address_book", "bad_requests",
                     "relay_body_sizes", "budget", "sessions", "settings", "expiry",
                     "login_rate_limit", "no_clear_secrets",
                     "upstream_down"):
            self.t.run(name, getattr(self, name))


def run(tap, mode, server="lighttpd", conf_extra=None, before=None):
    """The suite on a stack of its own. server "apache" runs it under
    Apache in one of the modes of tests/harness/apache.py
    (test_apache_*.py); before(tap, stack) runs checks of their own on
    the same stack first, conf_extra adds to postern.conf."""
    root = tempfile.mkdtemp(prefix=f"postern-it-{server}-{mode}-")
    stack = Stack(root, mode=mode, server=server, conf_extra={"api_budget": str(BUDGET),
                                               "api_budget_window": f"{BUDGET_WINDOW}s",
                                               "max_request": f"{MAX_REQUEST // 1024}K",
                                               "login_window": f"{LOGIN_WINDOW}s",
                                               **(conf_extra or {})})
    try:
        stack.start()
    except Exception as e:
        tap.bail(f"the stack did not start: {e}")
    try:
        if before:
            before(tap, stack)
        Suite(tap, stack).run()
    finally:
        stack.stop()
        if tap.failed:
            print(f"# {server} ({mode}) error log tail:\n# " +
                  stack.log_tail().replace("\n", "\n# "))


def main(mode, **kw):
    tap = Tap()
    run(tap, mode, **kw)
    return tap.done()
