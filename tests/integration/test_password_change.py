#!/usr/bin/env python3
"""A password changed at the mail server ends the old sessions everywhere,
against a real Cyrus behind a real lighttpd and pushd, then the same
behind a real Apache (mod_proxy_fcgi).

alice is signed in with her old password on several devices, and a thief
holds a copy of one of those cookies. She changes her password at the mail
server (saslpasswd2, as the harness sets it) and signs in again with the
new one. Then every route that acts for a session refuses the old cookies
within session_recheck of their last acceptance by the mail server, also
the routes that never call the mail server themselves (the session
document, the device list, settings, revoke-others, the image proxy,
pushd's event stream): they ask it first, and the old password is refused.
Each route is tried with an old cookie of its own, so that each refusal is
that route's own check, not an earlier one's. The new session works
throughout, sees none of the old sessions in its device list, keeps its
signature, stays signed in and keeps its event stream. She changes it
again, and a session with the password before opens a stream after the
change: it must not hand pushd that password back (which would sign the
newest session out at pushd's next poll); it ends at the bound. At the end
the mail server goes down: reads go on, a change is refused."""

import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
from client import Client  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, is_state, message  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE = "alice@example.test"
OLD, NEW = USERS[ALICE], "alice-changed-her-password-7"
NEWER = "and-changed-it-again-8"
RECHECK = int(6 * SLOW)        # session_recheck, seconds
# push_poll_interval: long enough that pushd does not poll between the
# password change and the new session's tab (which then carries the
# account, so that the old tabs ride on the new password).
INTERVAL = int(10 * SLOW)
MARGIN = 8 * SLOW             # what a loaded machine may add
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
ROUTES = ["session", "sessions", "settings_get", "settings_put", "revoke",
          "image", "events"]


class Origin:
    """A remote image server on loopback that counts what it is asked."""

    def __init__(self):
        origin = self
        self.hits = 0

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                origin.hits += 1
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                self.wfile.write(PNG)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/pixel.png"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Suite:
    def __init__(self, tap, stack, origin):
        self.t = tap
        self.s = stack
        self.origin = origin
        self.image = "/api/image?url=" + quote(origin.url, safe="")
        self.streams = []

    def client(self, password):
        c = Client(self.s.url)
        r = c.login(ALICE, password)
        if r.status != 200:
            raise RuntimeError(f"sign-in with {password!r}: {r!r}")
        return c

    def stream(self, client):
        st = Stream(self.s.port, client.cookie, "types=*")
        self.streams.append(st)
        return st

    def new_works(self, when):
        """The new session answers on every kind of route."""
        t, n = self.t, self.new
        r = n.request("GET", "/api/auth/session")
        t.eq(r.status, 200, f"{when}: the new session's document")
        r = n.jmap([["Mailbox/get", {"accountId": self.account, "ids": None}, "0"]])
        t.ok(r.status == 200 and "methodResponses" in r.json(),
             f"{when}: the new session's JMAP call", r)
        t.ok(not self.new_tab.wait_closed(0.2), f"{when}: the new session's stream is open")

    def run(self):
        t = self.t
        victim = self.client(OLD)
        self.account = victim.request("GET", "/api/auth/session").json()["primaryAccounts"][
            "urn:ietf:params:jmap:mail"]
        # The thief's copy of the victim's cookie, and alice's other devices.
        thief = Client(self.s.url)
        thief.cookie = victim.cookie
        old = {name: self.client(OLD) for name in ROUTES if name != "sessions"}
        old["sessions"] = thief
        signed_in = time.time()   # no old session is accepted after this
        old_ids = {c.cookie[:8] for c in list(old.values()) + [victim]}
        r = old["settings_get"].request("GET", "/api/auth/settings")
        t.eq(r.status, 200, "before the change an old session reads the settings")
        r = victim.request("PUT", "/api/auth/settings", {"signature": "Alice"})
        t.eq(r.status, 200, "before the change her signature is set")
        r = old["image"].request("GET", self.image)
        t.ok(r.status == 200 and r.body == PNG,
             "before the change an old session's image comes through the proxy", r)
        hits = self.origin.hits
        old_tab = self.stream(old["events"])
        t.eq(old_tab.status, 200, "before the change an old session's stream opens")

        # She changes it a moment later: the sign-ins are a second apart at
        # least (sessions are timed to the second, and pushd takes the
        # password of the newest sign-in the mail server accepted lately).
        changed = self.change(signed_in, NEW)
        self.new = self.client(NEW)
        self.new_tab = self.stream(self.new)
        t.eq(self.new_tab.status, 200, "the new session's stream opens")
        t.eq(Client(self.s.url).login(ALICE, OLD).status, 401,
             "the old password no longer signs in")
        self.new_works("right after the change")

        # Past session_recheck since the old sessions' last acceptance
        # (their sign-in), every route must ask the mail server first.
        time.sleep(max(0, signed_in + RECHECK + 1 - time.time()))
        t.ok(time.time() - changed <= RECHECK + 1 + MARGIN,
             f"the old cookies are tried within session_recheck ({RECHECK} s) of the change")
        t.ok(old_tab.wait_closed(INTERVAL + MARGIN),
             "the old session's event stream, riding on the new password, ends")
        self.refused(old["session"], "GET", "/api/auth/session", None,
                     "the old cookie's session document")
        self.refused(old["sessions"], "GET", "/api/auth/sessions", None,
                     "the stolen cookie's device list")
        self.refused(old["settings_get"], "GET", "/api/auth/settings", None,
                     "the old cookie's settings")
        self.refused(old["settings_put"], "PUT", "/api/auth/settings",
                     {"signature": "Call +1 555 0100 to confirm your account"},
                     "the old cookie setting her signature")
        self.refused(old["image"], "GET", self.image, None,
                     "the old cookie's image proxy")
        t.eq(self.origin.hits, hits, "and the image's server never heard of it")
        again = self.stream(old["events"])
        t.ok((again.status == 401 or again.wait_closed(2 * SLOW)) and
             not self.new_tab.wait_closed(0.2),
             "the old cookie's stream, opened again, ends at once, and the new "
             "session's stays", f"status {again.status}")
        r = old["events"].request("GET", "/api/auth/session")
        t.eq(r.status, 401, "and the old cookie's session is over")
        self.refused(old["revoke"], "POST", "/api/auth/sessions/revoke-others", {},
                     "the old cookie signing her other sessions out")

        r = self.new.request("GET", "/api/auth/settings")
        t.ok(r.status == 200 and r.json().get("signature") == "Alice",
             "her signature is still hers", r)
        r = self.new.request("GET", "/api/auth/sessions")
        ids = {s["id"] for s in r.json()["sessions"]} if r.status == 200 else set()
        t.ok(r.status == 200 and not ids & old_ids and len(ids) == 1,
             "the new session's device list has none of the old sessions", r)
        self.new_works("after the old cookies were refused")
        self.s.cyrus.deliver(ALICE, message(1))
        t.ok(self.new_tab.wait(is_state, INTERVAL + MARGIN) is not None,
             "new mail reaches the new session's stream")
        self.late_stream()
        self.outage()

    def change(self, since, password):
        """The password changed at the mail server, a second after since."""
        time.sleep(max(0, since + 1.1 - time.time()))
        self.s.cyrus.add_user(ALICE, password, create_mailboxes=False)
        return time.time()

    def late_stream(self):
        """Changed again: a stream that a session with the password before
        opens after the change, while its record still stands, must not give
        pushd that password back (the new session would be signed out at
        pushd's next poll): it ends once the record is past the bound."""
        t = self.t
        device = self.client(NEW)
        signed_in = time.time()
        self.change(signed_in, NEWER)
        previous, previous_tab = self.new, self.new_tab
        self.new = self.client(NEWER)
        self.new_tab = self.stream(self.new)
        late = self.stream(device)
        t.ok(self.new_tab.status == 200 and late.status == 200,
             "changed again: the newest session's stream, then an older one's")
        time.sleep(max(0, signed_in + RECHECK + 1 - time.time()))
        t.ok(late.wait_closed(INTERVAL + MARGIN) and
             previous_tab.wait_closed(INTERVAL + MARGIN) and
             not self.new_tab.wait_closed(0.2),
             "the older sessions' streams end, the newest one's stays")
        self.new_works("changed again")
        got = [c.request("GET", "/api/auth/session").status
               for c in (device, previous, self.new)]
        t.eq(got, [401, 401, 200], "the older sessions are refused at their next "
             "use, the newest is not")

    def refused(self, client, method, path, body, what):
        r = client.request(method, path, body)
        t = self.t
        t.ok(r.status == 401 and r.json().get("error") == "unauthenticated",
             f"{what}: 401 unauthenticated", r)
        t.ok(any(v.startswith("postern_session=;") for v in r.header_all("Set-Cookie")),
             f"{what}: the cookie is cleared", r.headers)

    def outage(self):
        """The mail server down when the new session's record is past
        session_recheck: reads go on, a change needs the mail server."""
        t, n = self.t, self.new
        r = n.request("GET", "/api/auth/sessions")
        t.eq(r.status, 200, "the new session's device list, the mail server up")
        checked = time.time()   # that asked and confirmed it at the latest
        self.s.cyrus.stop()
        self.s.cyrus = None
        time.sleep(max(0, checked + RECHECK + 1 - time.time()))
        r = n.request("GET", "/api/auth/settings")
        t.ok(r.status == 200 and r.json().get("signature") == "Alice",
             "the mail server down: the settings are still read", r)
        r = n.request("GET", "/api/auth/session")
        t.eq(r.status, 200, "the mail server down: the session document is still read")
        r = n.request("PUT", "/api/auth/settings", {"signature": "Alice, offline"})
        t.ok(r.status == 502 and r.json().get("error") == "upstream_error",
             "the mail server down: a change of settings is refused (502)", r)
        r = n.request("POST", "/api/auth/sessions/revoke-others", {})
        t.eq(r.status, 502, "the mail server down: revoke-others is refused (502)")
        r = n.request("GET", "/api/auth/session")
        t.eq(r.status, 200, "and the session is kept")


def one_server(tap, root, label, **kind):
    """The whole suite against one web server, with a Cyrus of its own."""
    extra = {"session_recheck": f"{RECHECK}s", "push_poll_interval": f"{INTERVAL}s",
             "push_mode": "poll", "image_proxy_allow_loopback_for_tests": "yes"}
    stack = Stack(os.path.join(root, label), conf_extra=extra, seed=False, **kind)
    origin = Origin()
    try:
        stack.start()
    except Exception as e:
        origin.close()
        tap.bail(f"{label}: the stack did not start: {e}")
    suite = Suite(tap.labelled(label), stack, origin)
    try:
        tap.run(f"{label}: password change", suite.run)
    finally:
        for st in suite.streams:
            st.close()
        stack.stop()
        origin.close()
        if tap.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail().replace("\n", "\n# "))
            print("# web server error log tail:\n# " + stack.log_tail().replace("\n", "\n# "))


def main():
    tap = Tap()
    apache.lighttpd_then_apache("postern-it-password-", one_server, tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
