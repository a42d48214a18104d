#!/usr/bin/env python3
"""pushd against the Stalwart-behaviour test server (tests/stalwart), behind
a real lighttpd, with no Cyrus: relay mode (one upstream EventSource per
account, never per tab), a thousand tabs of one account, the reconnect
after the upstream stream ends; then subscription mode (push_public_url an
https origin that the test server's --push-route maps to the stack's
loopback port): creation and verification, the move from relay without a
lost event, renewal, cleanup of our own leftovers only, a pushd restart
that reuses the subscription, the callback's refusals, the idle destroy; the fallback from a refused
relay stream to polling, and a 401 on it.
Only loopback traffic; every wait has a deadline."""

import json
import os
import resource
import select
import signal
import sys
import tempfile
import time
import base64
import hashlib
import hmac
import re
import sqlite3
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import Stack, free_port  # noqa: E402
from stalwart import StalwartTest  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, changed, is_state, wait_for  # noqa: E402

ALICE, BOB = "alice@example.test", "bob@example.test"
PASSWORDS = {ALICE: "alice-demo-pass", BOB: "bob-demo-pass"}
TABS = 1000
MARGIN = 10
RECHECK = 3        # session_recheck, seconds
PUBLIC = "https://postern.example.test"
EXPIRY = 30        # push_expiry, seconds (the test's short lifetime)
RENEW = 25         # push_renew: renewed when less than this is left
IDLE = 4           # push_idle
VERIFY_TIMEOUT = 10  # push_verify_timeout
# lighttpd notices a client that went away when it next writes to it: a
# ping every 5 s lets closed tabs end soon.
QUERY = "types=*&ping=5"


class Upstream(StalwartTest):
    """The test server, its pushes routed back to the stack."""

    def __init__(self, root, stack_port):
        super().__init__(root, args=["--coalesce", "0.2", "--min-ping", "1", "--verify-delay", "2",
                                     "--push-route", f"{PUBLIC}=http://127.0.0.1:{stack_port}"])

    def jmap(self, login, calls):
        auth = base64.b64encode(f"{login}:{PASSWORDS[login]}".encode()).decode()
        body = {"using": ["urn:ietf:params:jmap:core"], "methodCalls": calls}
        req = urllib.request.Request(f"{self.url}/jmap/", data=json.dumps(body).encode(),
                                     method="POST",
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Basic {auth}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())["methodResponses"]

    def subs(self, login):
        r = self.jmap(login, [["PushSubscription/get",
                               {"accountId": self.accounts[login], "ids": None}, "g"]])
        return r[0][1]["list"]

    def streams(self, login):
        return self.control("stats").get("eventSource", {}).get(self.accounts[login], 0)



class Suite:
    def __init__(self, tap, stack, up):
        self.t = tap
        self.s = stack
        self.up = up
        self.streams = []

    def signed_in(self, user):
        c = Client(self.s.url)
        r = c.login(user, PASSWORDS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        return c

    def mode(self):
        import sqlite3
        with sqlite3.connect(self.s.state_db, timeout=5) as db:
            return dict(db.execute("SELECT mode, sum(tabs) FROM push_accounts GROUP BY mode"))

    def wait_all(self, streams, pred, timeout):
        """Reads every stream until each has an event pred accepts; returns
        how many did."""
        left = {st for st in streams}
        deadline = time.monotonic() + timeout
        while left and time.monotonic() < deadline:
            socks = {st.sock: st for st in left if not st.closed}
            if not socks:
                break
            ready, _, _ = select.select(list(socks), [], [], 0.5)
            for sock in ready:
                st = socks[sock]
                st._fill(time.monotonic() + 0.5)
                st._parse()
                if any(pred(ev) for ev in st.events):
                    left.discard(st)
        return len(streams) - len(left)

    # -- relay -------------------------------------------------------------

    def relay(self):
        t, up = self.t, self.up
        alice = self.signed_in(ALICE)
        first = Stream(self.s.port, alice.cookie, QUERY)
        self.streams.append(first)
        t.eq(first.status, 200, "a tab's stream opens")
        t.ok(wait_for(lambda: self.mode().get("relay") == 1, 10),
             "the account runs in relay mode", self.mode())
        t.ok(wait_for(lambda: up.streams(ALICE) == 1, 10),
             "the upstream holds one EventSource for it", up.control("stats"))
        tabs = [first]
        for _ in range(TABS - 1):
            st = Stream(self.s.port, alice.cookie, QUERY)
            tabs.append(st)
            if st.status != 200:
                break
        self.streams += tabs[1:]
        t.eq(sum(1 for st in tabs if st.status == 200), TABS,
             f"{TABS} streams of one account open through lighttpd")
        t.ok(wait_for(lambda: self.mode().get("relay") == TABS, 10),
             f"push_accounts counts {TABS} relay tabs", self.mode())
        stats = up.control("stats")
        t.eq(stats.get("eventSource", {}).get(up.accounts[ALICE]), 1,
             f"still one upstream EventSource for {TABS} tabs")
        t.ok(self.baselined(alice), "the relay's first poll has the account's states")
        st = up.control("deliver", {"account": ALICE, "subject": "one change"})["states"]
        aid = up.accounts[ALICE]

        def has(ev, want=st["Email"]):
            return is_state(ev) and changed(ev).get(aid, {}).get("Email") == want
        got = self.wait_all(tabs, has, 20)
        t.eq(got, TABS, f"all {TABS} tabs receive the change")
        ids = {next(ev["id"] for ev in s.events if has(ev)) for s in tabs if
               any(has(ev) for ev in s.events)}
        t.eq(len(ids), 1, "with one id of pushd's own")
        for s in tabs[10:]:
            s.close()
        self.streams = [s for s in self.streams if s not in tabs[10:]]
        return alice, tabs[:10]

    def reconnect(self, tabs):
        """The upstream ends its streams (a restart as a client sees it):
        pushd connects again, and a change made while no stream was open
        still reaches the tabs (the gap poll)."""
        t, up = self.t, self.up
        aid = up.accounts[ALICE]
        up.control("drop-streams", {})
        st = up.control("deliver", {"account": ALICE, "subject": "in the gap"})["states"]
        t.ok(wait_for(lambda: up.streams(ALICE) == 1, 15),
             "pushd opens the upstream stream again", up.control("stats"))

        def has(ev):
            return is_state(ev) and changed(ev).get(aid, {}).get("Email") == st["Email"]
        t.eq(self.wait_all(tabs, has, MARGIN), len(tabs),
             "a change made while the upstream stream was down reaches every tab")
        st2 = up.control("deliver", {"account": ALICE, "subject": "after"})["states"]

        def has2(ev):
            return is_state(ev) and changed(ev).get(aid, {}).get("Email") == st2["Email"]
        t.eq(self.wait_all(tabs, has2, MARGIN), len(tabs),
             "and the next change comes through the new stream")
        t.eq(up.streams(ALICE), 1, "one upstream stream, still")

    def last_tab(self, tabs):
        t, up = self.t, self.up
        for s in tabs:
            s.close()
        self.streams = [s for s in self.streams if s not in tabs]
        t.ok(wait_for(lambda: up.streams(ALICE) == 0, 5 + MARGIN),
             "the last tab closed: the upstream stream closes", up.control("stats"))
        t.ok(wait_for(lambda: self.mode() == {}, 5),
             "and the relay row goes", self.mode())

    def sign_out(self, mode):
        """Sessions are re-checked every push_poll_interval in relay and
        subscription mode too: a signed-out session's stream ends."""
        t = self.t
        other = self.signed_in(ALICE)
        h = Stream(self.s.port, other.cookie, QUERY)
        self.streams.append(h)
        t.eq(h.status, 200, f"{mode}: a second session's tab opens")
        r = other.request("POST", "/api/auth/logout", {})
        t.eq(r.status, 200, f"{mode}: that session signs out")
        t.ok(h.wait_closed(1 + MARGIN), f"{mode}: the signed-out session's stream ends")

    def closeafter(self):
        """A relayed event that ends the account's only tab (closeafter=
        state) ends the account from inside libcurl's write callback."""
        t, up = self.t, self.up
        bob = self.signed_in(BOB)
        bid = up.accounts[BOB]
        st = Stream(self.s.port, bob.cookie, "types=*&closeafter=state&ping=5")
        self.streams.append(st)
        t.ok(wait_for(lambda: up.streams(BOB) == 1, 10) and self.baselined(bob),
             "bob is relayed")
        ev = up.control("deliver", {"account": BOB, "subject": "close after"})["states"]
        got = st.wait(lambda e: is_state(e) and
                      changed(e).get(bid, {}).get("Email") == ev["Email"], MARGIN)
        t.ok(got, "closeafter=state: the tab gets the relayed event")
        t.ok(st.wait_closed(MARGIN), "and its stream ends")
        t.ok(wait_for(lambda: up.streams(BOB) == 0, MARGIN),
             "the account ended with it: no upstream stream", up.control("stats"))
        st2 = Stream(self.s.port, bob.cookie, QUERY)
        self.streams.append(st2)
        t.eq(st2.status, 200, "and pushd serves on")
        st2.close()

    def acct_mode(self, client, column="mode"):
        """The push_accounts mode (or state) of the account a client is
        signed in to (None when it has none)."""
        sid = client.cookie.split(".")[0]
        with sqlite3.connect(self.s.state_db, timeout=5) as db:
            row = db.execute(f"SELECT p.{column} FROM push_accounts p JOIN sessions s"
                             " ON p.account = s.account WHERE s.id = ?", (sid,)).fetchone()
        return row[0] if row else None

    def baselined(self, client):
        """Waits until pushd knows the states of the client's account: its
        first poll (in relay mode, the one when the stream's head arrives)
        is the baseline, and a change made before it answered would be
        part of it, not news. Whether it did."""
        return wait_for(lambda: self.acct_mode(client, "state"), 10 + MARGIN)

    def fallback(self):
        """The upstream refuses its event stream on every reconnect: after
        three failures pushd polls instead, and the tab, never dropped,
        still gets changes; when the stream works again, pushd relays
        again. Then a 401 on the stream (the password changed
        upstream) ends the session and its tab, as a failed poll does."""
        t, up = self.t, self.up
        bob = self.signed_in(BOB)
        bid = up.accounts[BOB]
        st = Stream(self.s.port, bob.cookie, QUERY)
        self.streams.append(st)
        t.ok(wait_for(lambda: up.streams(BOB) == 1, 10), "fallback: bob is relayed",
             up.control("stats"))
        up.control("config", {"eventSourceStatus": 503})
        up.control("drop-streams", {})
        # Reconnects after 0.5, 1 and 2 s of backoff, each refused.
        t.ok(wait_for(lambda: self.acct_mode(bob) == "poll", 3.5 + MARGIN),
             "three refused reconnects: the account is polled", self.acct_mode(bob))
        t.ok(not st.closed and up.streams(BOB) == 0,
             "with the tab still open and no upstream stream")
        self.baselined(bob)
        ev = up.control("deliver", {"account": BOB, "subject": "fell back"})["states"]
        t.ok(st.wait(lambda e: is_state(e) and
                     changed(e).get(bid, {}).get("Email") == ev["Email"], MARGIN),
             "a change reaches the tab through the poll")
        t.ok(not st.closed, "on the same stream, without a reconnect")
        # While polling, the stream is still tried on the backoff (4 s,
        # then 8 s, ...): once the server streams again, pushd relays.
        up.control("config", {"eventSourceStatus": 0})
        t.ok(wait_for(lambda: self.acct_mode(bob) == "relay" and up.streams(BOB) == 1,
                      16 + MARGIN),
             "the stream works again: the account is relayed again", self.acct_mode(bob))
        ev = up.control("deliver", {"account": BOB, "subject": "relayed again"})["states"]
        t.ok(st.wait(lambda e: is_state(e) and
                     changed(e).get(bid, {}).get("Email") == ev["Email"], MARGIN),
             "and a change reaches the same tab through it")
        st.close()
        self.streams.remove(st)
        # lighttpd sees a closed tab only when a ping's write fails: the
        # second ping after the close, at worst.
        t.ok(wait_for(lambda: self.acct_mode(bob) is None, 2 * 5 + MARGIN),
             "the account ends with its tab", self.acct_mode(bob))

        up.control("config", {"eventSourceStatus": 401})
        other = self.signed_in(BOB)
        st = Stream(self.s.port, other.cookie, QUERY)
        self.streams.append(st)
        t.eq(st.status, 200, "401: a tab opens")
        t.ok(st.wait_closed(MARGIN), "the stream answering 401 ends the tab")
        r = other.request("GET", "/api/auth/session")
        t.eq(r.status, 401, "and signs its session out (the app asks for the password)")
        up.control("config", {"eventSourceStatus": 0})

    def password_change(self):
        """The password changes under a relayed stream, which the server
        keeps open: nothing else asks the mail server in relay mode, so
        pushd asks (the poll's state call) once the account's password was
        last accepted more than session_recheck ago; the 401 ends the
        session and its tab."""
        t, up = self.t, self.up
        bob = self.signed_in(BOB)
        st = Stream(self.s.port, bob.cookie, QUERY)
        self.streams.append(st)
        t.ok(wait_for(lambda: up.streams(BOB) == 1, 10),
             "password change: bob is relayed", up.control("stats"))
        up.control("password", {"account": BOB, "password": "bob-changed-it"})
        try:
            t.ok(st.wait_closed(RECHECK + 1 + MARGIN),
                 "changed under the relayed stream: the tab ends within session_recheck")
            r = bob.request("GET", "/api/auth/session")
            t.eq(r.status, 401, "and bob's session is over")
        finally:
            up.control("password", {"account": BOB, "password": PASSWORDS[BOB]})

    def callbacks(self):
        t, c = self.t, Client(self.s.url)
        r = c.request("POST", "/api/push/" + "x" * 43, {"@type": "StateChange"}, csrf=False)
        t.eq(r.status, 404, "a callback for an unknown token: 404")
        r = c.request("POST", "/api/push/bad%20token", {"@type": "StateChange"}, csrf=False)
        t.eq(r.status, 404, "a malformed token: 404")
        r = c.request("GET", "/api/push/" + "x" * 43)
        t.eq(r.status, 405, "GET on the callback: 405")
        alice = self.signed_in(ALICE)
        st = Stream(self.s.port, alice.cookie, "types=*")
        t.eq(st.status, 200, "pushd still serves afterwards")
        st.close()

    # -- subscription ------------------------------------------------------

    def row(self, login_key=None):
        with sqlite3.connect(self.s.state_db, timeout=5) as db:
            return db.execute("SELECT mode, sub_id, token_hash, expires, tabs FROM"
                              " push_accounts WHERE sub_id IS NOT NULL").fetchall()

    def token(self, sub_id):
        """The token in the callback URL of subscription sub_id, as the
        mail server holds it (pushd keeps only its hash)."""
        sub = self.up.control("stats")["push"].get(sub_id) or {}
        return (sub.get("url") or "").rsplit("/", 1)[-1]

    def db_bytes(self):
        """The state database's files as a copy of them would hold them."""
        out = b""
        for path in (self.s.state_db, self.s.state_db + "-wal"):
            if os.path.exists(path):
                with open(path, "rb") as f:
                    out += f.read()
        return out

    def to_subscription(self):
        """pushd again with push_public_url set: auto picks subscription."""
        t, up = self.t, self.up
        self.s.stop_pushd()
        self.s.conf_extra.update({
            "push_mode": "auto", "push_public_url": PUBLIC,
            "push_expiry": f"{EXPIRY}s", "push_renew": f"{RENEW}s",
            "push_idle": f"{IDLE}s", "push_verify_timeout": f"{VERIFY_TIMEOUT}s"})
        self.s.write_conf(up.url)
        self.s.start_pushd()
        # Somebody else's subscription (a browser's): it must survive.
        r = up.jmap(ALICE, [["PushSubscription/set", {
            "accountId": up.accounts[ALICE],
            "create": {"f": {"deviceClientId": "a-browser-elsewhere",
                             "url": "https://elsewhere.example.test/push/x"}}}, "s"]])
        self.foreign = r[0][1].get("created", {}).get("f", {}).get("id")
        t.ok(self.foreign, "a foreign subscription exists first", r)
        # And a leftover of ours (our installation's deviceClientId, a
        # token pushd does not hold): it must go.
        with open(os.path.join(self.s.root, "secret")) as f:
            secret = bytes.fromhex(f.read().strip())
        device = hmac.new(secret, b"device\npushd", hashlib.sha256).hexdigest()[:32]
        r = up.jmap(ALICE, [["PushSubscription/set", {
            "accountId": up.accounts[ALICE],
            "create": {"l": {"deviceClientId": device,
                             "url": PUBLIC + "/api/push/" + "L" * 43}}}, "s"]])
        leftover = r[0][1].get("created", {}).get("l", {}).get("id")
        t.ok(leftover, "a leftover of ours exists first", r)
        # Its verification attempt (refused: pushd does not know its
        # token) is over before pushd's own subscription comes.
        t.ok(wait_for(lambda: [e for e in up.control("push-log")
                               if e["subscription"] == leftover], 10 + MARGIN),
             "the leftover's verification was attempted", up.control("push-log"))
        alice = self.signed_in(ALICE)
        aid = up.accounts[ALICE]
        tabs = [Stream(self.s.port, alice.cookie, QUERY) for _ in range(5)]
        self.streams += tabs
        t.eq([st.status for st in tabs], [200] * 5, "five tabs open")
        t.ok(wait_for(lambda: up.streams(ALICE) == 1, 10),
             "until verified, the account is relayed", up.control("stats"))
        # Changes around the verification moment (2 s after the create).
        states = []
        end = time.monotonic() + 8
        while time.monotonic() < end:
            states.append(up.control("deliver", {"account": ALICE,
                                                 "subject": "around"})["states"]["Email"])
            time.sleep(0.4)
        t.ok(wait_for(lambda: [r for r in self.row() if r[0] == "subscription"], 10),
             "the subscription is verified: subscription mode", self.row())
        t.ok(wait_for(lambda: up.streams(ALICE) == 0, 10),
             "and the relay stream is closed", up.control("stats"))
        for _ in range(3):
            states.append(up.control("deliver", {"account": ALICE,
                                                 "subject": "after"})["states"]["Email"])
            time.sleep(0.4)

        def seen(st):
            return {changed(ev).get(aid, {}).get("Email") for ev in st.events if is_state(ev)}
        last = states[-1]
        self.wait_all(tabs, lambda ev: is_state(ev) and
                      changed(ev).get(aid, {}).get("Email") == last, MARGIN)
        missing = [sorted(set(states) - seen(st)) for st in tabs]
        t.ok(all(not m for m in missing),
             f"every tab saw every one of {len(states)} states across the move", missing)
        stats = up.control("stats")
        t.eq(stats["subscriptions"].get(aid), 2, "two subscriptions: ours and the foreign one")
        ids = {x["id"] for x in up.subs(ALICE)}
        t.ok(self.foreign in ids, "the foreign subscription survives", ids)
        t.ok(leftover not in ids, "our leftover is destroyed", ids)
        return alice, tabs

    def renewal(self, tabs):
        t, up = self.t, self.up
        sub_id = self.row()[0][1]

        def expires():
            return {x["id"]: x["expires"] for x in up.subs(ALICE)}.get(sub_id)
        first = expires()
        t.ok(first is not None, "ours is on the server", up.subs(ALICE))
        later = wait_for(lambda: (lambda e: e if e and e > first else None)(expires()),
                         RENEW / 4 + EXPIRY - RENEW + MARGIN)
        t.ok(later, "renewed before it expires (expires moves on)", (first, later))
        t.eq(self.row()[0][1], sub_id, "the same subscription, renewed in place")

    def restart(self, alice, tabs):
        """pushd killed (SIGKILL) and started again: the tabs reconnect
        (told to resync: pushd's ring died with it), the subscription is
        reused (same id, no new /set create, no relay), changes flow."""
        t, up = self.t, self.up
        aid = up.accounts[ALICE]
        before = self.row()[0]
        created = set(up.control("stats")["push"])
        last = [ev["id"] for ev in tabs[0].events if "id" in ev][-1]
        # A push that fails is retried after retryDelay with the changes
        # since merged in (Stalwart's 60 s would outlast the test).
        up.control("config", {"retryDelay": 1})
        self.s.stop_pushd(signal.SIGKILL)
        for st in tabs:
            st.close()
        self.streams = [s for s in self.streams if s not in tabs]
        up.control("deliver", {"account": ALICE, "subject": "while pushd is down"})
        self.s.start_pushd()

        def reconnect():
            # lighttpd answers 503 for a while after its backend died.
            st = Stream(self.s.port, alice.cookie, QUERY, headers={"Last-Event-ID": last})
            if st.status == 200:
                return st
            st.close()
            return None
        tabs = [wait_for(reconnect, 20, 0.5) for _ in range(3)]
        tabs = [st for st in tabs if st is not None]
        self.streams += tabs
        t.eq(len(tabs), 3, "tabs reconnect after the restart")
        t.eq(self.wait_all(tabs, lambda ev: ev.get("event") == "resync", MARGIN), 3,
             "and are told to resync (what happened while pushd was down)")
        time.sleep(1)
        t.eq(self.row()[0][1], before[1], "the subscription is reused (same id)")
        t.eq(set(up.control("stats")["push"]), created, "no new subscription was created")
        st = up.control("deliver", {"account": ALICE, "subject": "after restart"})["states"]
        t.eq(self.wait_all(tabs, lambda ev: is_state(ev) and
                           changed(ev).get(aid, {}).get("Email") == st["Email"], MARGIN),
             3, "a change reaches the reconnected tabs")
        t.eq(up.streams(ALICE), 0, "with no upstream stream (subscription mode)")
        return tabs

    def bad_callbacks(self):
        t, up = self.t, self.up
        c = Client(self.s.url)
        _, sub_id, token_hash = self.row()[0][:3]
        token = self.token(sub_id)
        t.ok(len(token) == 43, "the mail server holds our callback URL with its token",
             token)
        t.ok(re.fullmatch(r"[0-9a-f]{64}", token_hash or "") is not None,
             "the database's token_hash is 64 hex digits", token_hash)
        t.eq(token_hash, hashlib.sha256(token.encode()).hexdigest(),
             "the database holds the token's SHA-256, not the token")
        t.ok(token.encode() not in self.db_bytes(),
             "no clear push token anywhere in the state database's files")
        path = "/api/push/" + token
        r = c.request("POST", path, {"@type": "StateChange", "changed": {}}, csrf=False)
        t.eq(r.status, 202, "a callback with the right token, its hash read back from "
             "the database after pushd's restart: 202")
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        r = c.request("POST", "/api/push/" + wrong, {"@type": "StateChange", "changed": {}},
                      csrf=False)
        t.eq(r.status, 404, "the token with its last character changed: 404")
        r = c.request("POST", "/api/push/" + token_hash, {"@type": "StateChange",
                                                         "changed": {}}, csrf=False)
        t.eq(r.status, 404, "the hash from the database is no token: 404")
        r = c.request("POST", path, b"hello", {"Content-Type": "text/plain"}, csrf=False)
        t.eq(r.status, 415, "a callback that is not JSON: 415")
        r = c.request("POST", path, b"{" + b" " * 70000 + b"}",
                      {"Content-Type": "application/json"}, csrf=False)
        t.eq(r.status, 413, "an oversize callback: 413")
        r = c.request("POST", path, b"{not json", {"Content-Type": "application/json"},
                      csrf=False)
        t.eq(r.status, 400, "garbage JSON: 400")
        r = c.request("POST", path, {"@type": "Nonsense"}, csrf=False)
        t.eq(r.status, 400, "an unknown @type: 400")
        r = c.request("POST", path, {"@type": "PushVerification",
                                     "pushSubscriptionId": self.row()[0][1],
                                     "verificationCode": "x"}, csrf=False)
        t.eq(r.status, 403, "a PushVerification when none is pending: refused (403)")
        r = c.request("POST", "/api/push/" + "Q" * 43, {"@type": "StateChange",
                                                     "changed": {}}, csrf=False)
        t.eq(r.status, 404, "an unknown token: 404")
        # Bob's subscription never gets verified (a long verify delay): his
        # token is pending, and a StateChange for it is refused.
        up.control("config", {"verifyDelay": 600, "verifyInterval": 600})
        bob = self.signed_in(BOB)
        st = Stream(self.s.port, bob.cookie, QUERY)
        self.streams.append(st)
        bid = up.accounts[BOB]

        def bob_url():
            for v in up.control("stats")["push"].values():
                if v["account"] == bid:
                    return v["url"]
        url = wait_for(bob_url, 10)
        t.ok(url, "bob's subscription is created", up.control("stats"))
        if url:
            r = c.request("POST", "/api/push/" + url.rsplit("/", 1)[1],
                          {"@type": "StateChange", "changed": {bid: {"Email": "x"}}},
                          csrf=False)
            t.eq(r.status, 403, "a StateChange for an unverified token: refused (403)")
        st2 = Stream(self.s.port, bob.cookie, QUERY)
        self.streams.append(st2)
        t.eq(st2.status, 200, "pushd still serves after every bad callback")
        t.eq(up.streams(BOB), 1, "bob is relayed while his subscription is pending")
        st.close()
        t.ok(wait_for(lambda: not up.subs(BOB), VERIFY_TIMEOUT + MARGIN),
             f"not verified within push_verify_timeout ({VERIFY_TIMEOUT} s): destroyed",
             up.subs(BOB))
        t.eq(up.streams(BOB), 1, "and bob stays relayed")
        ev = up.control("deliver", {"account": BOB, "subject": "still relayed"})["states"]
        t.ok(st2.wait(lambda e: is_state(e) and changed(e).get(bid, {}).get("Email") ==
                      ev["Email"], MARGIN), "and his tab still gets changes")
        st2.close()

    def idle(self, alice, tabs):
        t, up = self.t, self.up
        aid = up.accounts[ALICE]
        for st in tabs:
            st.close()
        self.streams = [s for s in self.streams if s not in tabs]
        # Back within push_idle: the same subscription carries on.
        sub = self.row()[0][1]
        t.ok(wait_for(lambda: [r for r in self.row() if r[4] == 0], 5 + MARGIN),
             "the last tab closed: the subscription row stays, with no tab", self.row())
        st = Stream(self.s.port, alice.cookie, QUERY)
        self.streams.append(st)
        t.eq(st.status, 200, "a tab comes back within push_idle")
        ev = up.control("deliver", {"account": ALICE, "subject": "back"})["states"]
        t.ok(st.wait(lambda e: is_state(e) and
                     changed(e).get(aid, {}).get("Email") == ev["Email"], MARGIN),
             "and gets changes")
        t.eq([r[1] for r in self.row()], [sub], "through the same subscription")
        t.eq(up.streams(ALICE), 0, "still with no upstream stream")
        st.close()
        self.streams.remove(st)
        ours = self.row()
        ours = [r[1] for r in ours if r[0] == "subscription"]
        t.ok(wait_for(lambda: not ({x["id"] for x in up.subs(ALICE)} & set(ours)),
                      5 + IDLE + MARGIN),
             f"no tab for push_idle ({IDLE} s): our subscription is destroyed",
             up.subs(ALICE))
        t.ok(self.foreign in {x["id"] for x in up.subs(ALICE)},
             "and the foreign one is still there")
        t.ok(wait_for(lambda: not [r for r in self.row() if r[1] in ours], 5),
             "its row is gone", self.row())
        del aid

    def forced_poll(self):
        """push_mode = poll: no subscription, no relay, changes still come."""
        t, up = self.t, self.up
        self.s.stop_pushd()
        self.s.conf_extra["push_mode"] = "poll"
        self.s.write_conf(up.url)
        self.s.start_pushd()
        bob = self.signed_in(BOB)
        bid = up.accounts[BOB]

        def opened():
            st = Stream(self.s.port, bob.cookie, QUERY)
            if st.status == 200:
                return st
            st.close()
            return None
        st = wait_for(opened, 20, 0.5)
        t.ok(st, "push_mode = poll: a tab opens")
        if st is None:
            return
        self.streams.append(st)
        t.ok(wait_for(lambda: self.mode().get("poll") == 1, 10) and self.baselined(bob),
             "it is polled", self.mode())
        ev = up.control("deliver", {"account": BOB, "subject": "polled"})["states"]
        t.ok(st.wait(lambda e: is_state(e) and
                     changed(e).get(bid, {}).get("Email") == ev["Email"], MARGIN),
             "a change reaches it")
        t.eq((up.streams(BOB), up.control("stats")["subscriptions"].get(bid)), (0, 0),
             "with no upstream stream and no subscription")
        st.close()

    def subscription(self):
        got = self.to_subscription()
        alice, tabs = got
        self.t.run("renewal", self.renewal, tabs)
        tabs = self.restart(alice, tabs)
        self.t.run("sign_out", self.sign_out, "subscription")
        self.t.run("bad_callbacks", self.bad_callbacks)
        self.t.run("idle", self.idle, alice, tabs)

    def run(self):
        got = None
        try:
            got = self.relay()
        except Exception:
            self.t.run("relay", lambda: (_ for _ in ()).throw(RuntimeError("relay")))
            raise
        alice, tabs = got
        self.t.run("reconnect", self.reconnect, tabs)
        self.t.run("last_tab", self.last_tab, tabs)
        self.t.run("callbacks", self.callbacks)
        self.t.run("sign_out", self.sign_out, "relay")
        self.t.run("closeafter", self.closeafter)
        self.t.run("fallback", self.fallback)
        self.t.run("password_change", self.password_change)
        self.t.run("subscription", self.subscription)
        self.t.run("forced_poll", self.forced_poll)
        for st in self.streams:
            st.close()
        self.t.eq(self.s.stop_pushd(), 0, "pushd stops cleanly on SIGTERM")


def main():
    tap = Tap()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 3 * TABS:
        print(f"1..0 # SKIP needs {3 * TABS} descriptors, the limit is {hard}")
        return 0
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    root = tempfile.mkdtemp(prefix="postern-it-pushd-stalwart-")
    port = free_port()
    try:
        up = Upstream(root, port)
    except Exception as e:
        tap.bail(f"the Stalwart test server did not start: {e}")
    # Relay first (push_mode = relay); the subscription part restarts
    # pushd with push_mode = auto and push_public_url.
    stack = Stack(root, mode="fcgi", upstream=up.url, port=port,
                  conf_extra={"push_poll_interval": "1s", "push_mode": "relay",
                              "session_recheck": f"{RECHECK}s",
                              # A thousand tabs of one session, from one
                              # address (test_pushd.py tests the caps).
                              "push_streams_per_session": "0",
                              "push_streams_per_ip": "0"})
    try:
        stack.start()
    except Exception as e:
        up.stop()
        tap.bail(f"the stack did not start: {e}")
    if stack.pushd is None:
        stack.stop()
        up.stop()
        print("1..0 # SKIP pushd was not built")
        return 0
    try:
        tap.run("suite", Suite(tap, stack, up).run)
    finally:
        if tap.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail().replace("\n", "\n# "))
            print("# lighttpd error log tail:\n# " + stack.log_tail().replace("\n", "\n# "))
        stack.stop()
        up.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
