#!/usr/bin/env python3
"""Web Push from pushd, against a real Cyrus behind a real lighttpd and a
push service on loopback that the test runs (tests/harness/pushservice.py,
HTTPS with the test's own CA, allowed by the loudly named
webpush_allow_loopback_for_tests). Each push is decrypted with the
http_ece package and its VAPID header verified (webpush_tool.mjs). Mail is
delivered over LMTP; pushd polls Cyrus. Every wait is for a condition with
a deadline."""

import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, is_state, wait_for  # noqa: E402
import demo_mail  # noqa: E402
import pushservice  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB = "alice@example.test", "bob@example.test"
INTERVAL = 2       # push_poll_interval, seconds
COALESCE = 3       # webpush_coalesce, seconds
MARGIN = 8 * SLOW
BOUND = INTERVAL + COALESCE + MARGIN   # a mail's push, at the latest


def mail(sender, subject, n=0):
    return (f"From: {sender}\r\nTo: {ALICE}\r\nSubject: {subject}\r\n"
            f"Message-ID: <wp-{n}-{time.time()}@example.test>\r\n"
            f"Date: Fri, 04 Dec 2026 10:00:00 +0000\r\n\r\nHello.\r\n").encode()


class Suite:
    def __init__(self, tap, stack, ps):
        self.t, self.s, self.ps = tap, stack, ps
        self.n = 0

    def signed_in(self, user):
        return Client.signed_in(self.s.url, user, USERS[user])

    def subscribe(self, client, path):
        keys = pushservice.subscriber_keys()
        body = {"endpoint": self.ps.url(path), "expirationTime": None,
                "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}}
        r = client.request("PUT", "/api/webpush", body)
        return r, keys

    def deliver(self, subject, sender="Carol <carol@example.test>"):
        self.n += 1
        self.s.cyrus.deliver(ALICE, mail(sender, subject, self.n))

    def opened(self, req, keys):
        return json.loads(pushservice.decrypt(keys, req.body))

    # -- checks ---------------------------------------------------------------

    def config(self):
        c = Client(self.s.url).request("GET", "/api/config").json()
        key = (c.get("features", {}).get("webpush") or {}).get("key", "")
        self.t.ok(len(key) == 87, "/api/config gives the VAPID public key (65 bytes, base64url)", key)
        self.vapid_key = key

    def route(self):
        t = self.t
        anon = Client(self.s.url)
        t.eq(anon.request("GET", "/api/webpush").status, 401, "GET without a session: 401")
        c = self.signed_in(BOB)
        t.eq(c.request("GET", "/api/webpush").json(), {"endpoint": None}, "none stored yet")
        keys = pushservice.subscriber_keys()
        good = {"endpoint": self.ps.url("/bob"), "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}}
        t.eq(c.request("PUT", "/api/webpush", good, csrf=False).status, 403, "PUT without X-Postern-CSRF: 403")
        bad = [({"endpoint": self.ps.url("/x")}, 400, "no keys"),
               ({**good, "keys": {"p256dh": keys["auth"], "auth": keys["auth"]}}, 400, "a short p256dh"),
               ({**good, "keys": {"p256dh": "BA" + "A" * 85, "auth": keys["auth"]}}, 400,
                "a p256dh not on the curve"),
               ({**good, "endpoint": "http://127.0.0.1/push"}, 422, "an http endpoint"),
               ({**good, "endpoint": "https://user:pw@127.0.0.1/push"}, 422, "credentials in the endpoint"),
               ({**good, "endpoint": "https://10.1.2.3/push"}, 422, "a private address"),
               ({**good, "endpoint": "https://[fe80::1]/push"}, 422, "a link-local address"),
               ({**good, "endpoint": "https://127.0.0.1/" + "a" * 1100}, 400, "an endpoint over 1 KiB")]
        for body, status, what in bad:
            r = c.request("PUT", "/api/webpush", body)
            t.eq((r.status, r.status == 422 and r.json().get("error")),
                 (status, status == 422 and "webpush_endpoint"), f"PUT with {what}: {status}")
        t.eq(c.request("GET", "/api/webpush").json(), {"endpoint": None}, "nothing refused was stored")
        r = c.request("PUT", "/api/webpush", good)
        t.eq(r.status, 204, "PUT a subscription: 204")
        t.eq(c.request("GET", "/api/webpush").json(), {"endpoint": good["endpoint"]}, "GET tells it")
        # The same browser, another person signed in after: the endpoint
        # moves to the new session, so bob's mail never reaches alice.
        a = self.signed_in(ALICE)
        t.eq(a.request("PUT", "/api/webpush", good).status, 204, "another session PUTs the same endpoint")
        t.eq(c.request("GET", "/api/webpush").json(), {"endpoint": None},
             "the endpoint left the session before")
        t.eq(a.request("DELETE", "/api/webpush").status, 204, "and goes with DELETE")
        t.eq(c.request("PUT", "/api/webpush", good).status, 204, "bob's again")
        t.eq(c.request("POST", "/api/webpush", good).status, 405, "POST: 405")
        t.eq(c.request("DELETE", "/api/webpush").status, 204, "DELETE: 204")
        t.eq(c.request("GET", "/api/webpush").json(), {"endpoint": None}, "and it is gone")
        t.eq(c.request("DELETE", "/api/webpush").status, 204, "DELETE again: 204")

    def delivered(self):
        """One mail: one push per subscription, decrypted, signed; none to
        a browser with a tab in view."""
        t = self.t
        a1, a2 = self.signed_in(ALICE), self.signed_in(ALICE)
        r1, self.k1 = self.subscribe(a1, "/alice1")
        r2, self.k2 = self.subscribe(a2, "/alice2")
        t.eq((r1.status, r2.status), (204, 204), "alice subscribes two devices")
        self.a1, self.a2 = a1, a2
        time.sleep(INTERVAL + 1)          # the watches' first poll: the baseline
        self.deliver("Invoice 7", "Erin Example <erin@example.test>")
        got = [self.ps.wait(1, BOUND, "/alice1"), self.ps.wait(1, BOUND, "/alice2")]
        t.ok(all(len(g) == 1 for g in got), "one push to each subscription", [len(g) for g in got])
        if not all(got):
            return
        req = got[0][0]
        p = self.opened(req, self.k1)
        t.eq((p["from"], p["subject"], p["role"], p["count"]),
             ({"name": "Erin Example", "email": "erin@example.test"}, "Invoice 7", "inbox", 1),
             "decrypted with http_ece: the sender, the subject, the folder")
        t.ok(p.get("emailId") and p.get("threadId") and p.get("mailboxId") and p.get("folder"),
             "and where the mail is, to open it", p)
        t.ok(self.opened(got[1][0], self.k2)["subject"] == "Invoice 7", "the other device's decrypts with its keys")
        h = req.headers
        t.eq((h.get("content-encoding"), h.get("urgency"), h.get("ttl")), ("aes128gcm", "normal", "86400"),
             "aes128gcm, Urgency and TTL")
        v = pushservice.verify_vapid(h.get("authorization", ""), self.ps.url("/alice1"))
        t.ok(v.get("ok") and v.get("aud") == self.ps.origin and v.get("k") == self.vapid_key,
             "VAPID: the JWT's audience, expiry and signature, by the served key", v)

        # A tab of the first browser in view: only the second is pushed.
        tab = Stream(self.s.port, a1.cookie, "types=*&visible=1")
        self.tab = tab
        before = len(self.ps.requests("/alice1"))
        time.sleep(COALESCE)
        self.deliver("While you look")
        got = self.ps.wait(2, BOUND, "/alice2")
        t.eq(len(got), 2, "the browser with no tab in view is pushed")
        t.eq(len(self.ps.requests("/alice1")), before, "no push to the browser with a tab in view")
        tab.close()

    def gone_and_backoff(self):
        t = self.t
        time.sleep(COALESCE)
        self.ps.set("/alice2", status=410)
        self.ps.set("/alice1", status=429, headers={"Retry-After": "600"})
        had = len(self.ps.requests("/alice1"))
        self.deliver("Gone")
        g = self.ps.wait(3, BOUND, "/alice2")
        b = self.ps.wait(had + 1, BOUND, "/alice1")
        t.eq((len(g), len(b)), (3, had + 1), "the pushes to a gone and a throttled subscription are tried")
        ok = wait_for(lambda: self.a2.request("GET", "/api/webpush").json() == {"endpoint": None}, 5 * SLOW)
        t.ok(ok, "410: the subscription is deleted")
        n429 = len(b)
        time.sleep(COALESCE)
        self.deliver("Still throttled")
        time.sleep(INTERVAL + COALESCE + 2)
        t.eq(len(self.ps.requests("/alice1")), n429, "429 with Retry-After: no push meanwhile")
        t.eq(len(self.ps.requests("/alice2")), 3, "nothing more to the deleted one")

    def hanging(self):
        """A push service that never answers does not hold up a stream."""
        t = self.t
        c = self.signed_in(ALICE)
        self.subscribe(c, "/hang")
        self.ps.set("/hang", hang=True)
        time.sleep(INTERVAL + 1)
        tab = Stream(self.s.port, self.a2.cookie, "types=*&visible=0")
        tab.wait(is_state, 2 * INTERVAL + MARGIN)  # whatever is pending
        time.sleep(COALESCE)
        self.deliver("Into the void")
        t.ok(len(self.ps.wait(1, BOUND, "/hang")) == 1, "the push to the hanging service is out")
        t0 = time.monotonic()
        self.deliver("Seen all the same")
        e = tab.wait(is_state, INTERVAL + MARGIN)
        t.ok(e is not None, "a stream still gets its change while a push hangs",
             round(time.monotonic() - t0, 2))
        tab.close()
        c.request("DELETE", "/api/webpush")

    def slow(self):
        """A push service slow to answer: the next push for that device
        waits for the one out, then goes (one out per subscription)."""
        t = self.t
        c = self.signed_in(ALICE)
        _, k = self.subscribe(c, "/slow")
        time.sleep(INTERVAL + COALESCE + 1)     # what was pending goes first
        self.ps.set("/slow", delay=6)
        had = len(self.ps.requests("/slow"))
        self.deliver("Slow 1")
        first = self.ps.wait(had + 1, BOUND, "/slow")[had:]
        time.sleep(COALESCE + 0.5)
        self.deliver("Slow 2")
        got = self.ps.wait(had + 2, BOUND + 6, "/slow")[had:]
        subjects = [self.opened(q, k)["subject"] for q in got]
        t.eq(subjects, ["Slow 1", "Slow 2"], "the second push is not lost")
        t.ok(len(got) == 2 and got[1].monotonic - first[0].monotonic >= 6 - 0.5,
             "and went once the first was answered",
             round(got[1].monotonic - first[0].monotonic, 2) if len(got) == 2 else None)
        c.request("DELETE", "/api/webpush")

    def burst(self):
        t = self.t
        c = self.signed_in(ALICE)
        _, k = self.subscribe(c, "/burst")
        time.sleep(INTERVAL + COALESCE + 1)
        t0 = time.monotonic()

        def pushes():
            return [q for q in self.ps.requests("/burst") if q.monotonic >= t0]
        for i in range(50):
            self.deliver(f"Burst {i}")
        wait_for(lambda: sum(self.opened(q, k)["count"] for q in pushes()) >= 50, BOUND + 30 * SLOW)
        got = pushes()
        counts = [self.opened(q, k)["count"] for q in got]
        t.ok(sum(counts) == 50 and len(got) <= 4, "50 mails, a few pushes that count them all", counts)
        gaps = [round(b.monotonic - a.monotonic, 1) for a, b in zip(got, got[1:])]
        t.ok(all(g >= COALESCE - 0.3 for g in gaps), f"at most one push per {COALESCE} s", gaps)
        # Signing out removes the device's subscription.
        c.request("POST", "/api/auth/logout")
        n = len(self.ps.requests("/burst"))
        self.deliver("After sign-out")
        time.sleep(INTERVAL + COALESCE + 2)
        t.eq(len(self.ps.requests("/burst")), n, "no push after sign-out")

    def folders(self):
        """The folders a person chooses (the setting notifyFolders) replace
        the Inbox: mail new in one of them is pushed, the Inbox's not."""
        t = self.t
        c = self.signed_in(ALICE)
        acc = c.account
        _, k = self.subscribe(c, "/folders")
        r = c.jmap([["Mailbox/set", {"accountId": acc, "create": {"l": {"name": "Lists"}}}, "0"]])
        lists = r.json()["methodResponses"][0][1]["created"]["l"]["id"]
        r = c.request("PUT", "/api/auth/settings", {"notifyFolders": [lists]})
        t.eq(r.status, 200, "alice chooses the folder Lists")
        time.sleep(INTERVAL + COALESCE + 1)
        r = c.jmap([["Email/set", {"accountId": acc, "create": {"e": {
            "mailboxIds": {lists: True}, "keywords": {},
            "from": [{"name": "A List", "email": "list@example.test"}], "subject": "On the list",
            "bodyValues": {"1": {"value": "Hi."}}, "textBody": [{"partId": "1", "type": "text/plain"}]}}},
            "0"]])
        t.ok("e" in r.json()["methodResponses"][0][1].get("created", {}), "a mail arrives in Lists")
        got = self.ps.wait(1, BOUND, "/folders")
        p = self.opened(got[0], k) if got else {}
        t.eq((p.get("subject"), p.get("folder"), p.get("mailboxId"), p.get("role")),
             ("On the list", "Lists", lists, None), "pushed, naming the folder")
        time.sleep(COALESCE)
        self.deliver("Not in a chosen folder")
        time.sleep(INTERVAL + COALESCE + 2)
        t.eq(len(self.ps.requests("/folders")), 1, "mail new in the Inbox, not chosen: no push")
        c.request("PUT", "/api/auth/settings", {})
        c.request("DELETE", "/api/webpush")

    def restart(self):
        """A subscription outlives pushd: after a restart, with no tab
        open anywhere, its account is followed again; one whose session
        ended meanwhile is gone."""
        t = self.t
        c, gone = self.signed_in(ALICE), self.signed_in(ALICE)
        _, k = self.subscribe(c, "/restart")
        self.subscribe(gone, "/ended")
        self.s.stop_pushd()
        gone.request("POST", "/api/auth/logout")
        self.s.start_pushd()
        time.sleep(INTERVAL + 1)
        self.deliver("After a restart")
        got = self.ps.wait(1, BOUND, "/restart")
        t.ok(got and self.opened(got[0], k)["subject"] == "After a restart",
             "after a restart of pushd the subscription is pushed")
        t.eq(self.ps.requests("/ended"), [], "none to the one signed out while pushd was down")
        c.request("DELETE", "/api/webpush")

    def loopback_refused(self):
        """Without the test key: loopback endpoints refused, at the route
        and, for a name, at the address libcurl connects to."""
        t = self.t
        s = self.s
        s.stop_pushd()
        s.conf_extra["webpush_allow_loopback_for_tests"] = "no"
        s.write_conf(s.upstream or s.cyrus.base_url)
        s.start_pushd()
        c = self.signed_in(ALICE)
        r, _ = self.subscribe(c, "/lo")
        t.eq(r.status, 422, "an endpoint at 127.0.0.1: 422 without the test key")
        keys = pushservice.subscriber_keys()
        name = self.ps.url("/byname").replace("127.0.0.1", "localhost")
        r = c.request("PUT", "/api/webpush", {"endpoint": name, "keys": {
            "p256dh": keys["p256dh"], "auth": keys["auth"]}})
        t.eq(r.status, 204, "a name is taken (checked when a push connects)")
        time.sleep(INTERVAL + 1)
        self.deliver("To localhost")
        refused = wait_for(lambda: "refused a push service" in s.pushd_tail(200), BOUND)
        t.ok(refused, "the push to a name that resolves to loopback is refused")
        t.eq(self.ps.requests("/byname"), [], "and nothing reached the push service")

    def turned_off(self):
        """webpush = no: the app is told it is off, and the route is 404."""
        t, s = self.t, self.s
        s.stop_pushd()
        s.conf_extra["webpush"] = "no"
        s.write_conf(s.upstream or s.cyrus.base_url)
        s.start_pushd()
        s.stop_lighttpd()      # the responders read postern.conf at start
        s.start_lighttpd()
        c = self.signed_in(ALICE)
        f = c.request("GET", "/api/config").json()["features"]
        t.eq((f.get("push"), f.get("webpush")), (True, False), "webpush = no: /api/config says false")
        r, _ = self.subscribe(c, "/off")
        t.eq((r.status, r.json().get("error")), (404, "not_found"), "and PUT /api/webpush is 404")

    def run(self):
        self.config()
        self.route()
        self.delivered()
        self.gone_and_backoff()
        self.hanging()
        self.slow()
        self.burst()
        self.folders()
        self.restart()
        self.loopback_refused()
        self.turned_off()


def main():
    tap = Tap()
    why = pushservice.tool_unavailable()
    if why:
        print(f"1..0 # SKIP {why}")
        return 0
    root = tempfile.mkdtemp(prefix="postern-it-webpush-")
    ps = pushservice.PushService()
    stack = Stack(root, mode="fcgi", conf_extra={
        "push_mode": "poll", "push_poll_interval": f"{INTERVAL}s",
        "webpush_coalesce": f"{COALESCE}s", "webpush_ca_file": ps.ca_file,
        "webpush_allow_loopback_for_tests": "yes"})
    try:
        stack.start()
    except Exception as e:
        ps.close()
        tap.bail(f"the stack did not start: {e}")
    if stack.pushd is None:
        tap.bail("pushd was not built")
    try:
        tap.run("suite", Suite(tap, stack, ps).run)
    finally:
        if tap.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail(60).replace("\n", "\n# "))
        stack.stop()
        ps.close()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
