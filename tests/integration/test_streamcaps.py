#!/usr/bin/env python3
"""Event streams per session and per client address (issue 15), against
the real stack: a real Cyrus, lighttpd as shipped, pushd in poll mode.
Each phase's client is a loopback address of its own, as lighttpd and
pushd see it (all of 127.0.0.0/8 reaches the listener):

    one session     4 streams open (push_streams_per_session's default);
                    a 5th at once is a JSON 429 rate_limited with
                    Retry-After and the API's security headers; 10 s after
                    the oldest opened, a 5th opens in its place, and the
                    oldest is told so and ends
    one address     push_streams_per_ip = PER_IP here: sessions from one
                    address open PER_IP streams, the next is 429, while bob
                    from another address signs in, makes a JMAP call and
                    opens a stream, each within VICTIM_LIMIT
    the old attack  ATTACK streams asked for with one cookie (issue 15
                    saw 1,400 fill lighttpd): no more than the session's
                    cap open, and bob is served as before

How long bob waited is printed as TAP comments; at the end pushd must
stop cleanly (under the sanitizers: no leak, no memory error). Loopback only; every
phase is bounded in streams and in time."""

import json
import os
import resource
import selectors
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
import apache  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import MARGIN, Stream  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB, CAROL = "alice@example.test", "bob@example.test", "carol@example.test"
PER_SESSION = 4               # push_streams_per_session's default, left as it is
PER_IP = 6                    # push_streams_per_ip in this test's postern.conf
REPLACE_AFTER = 10            # seconds before a session's oldest makes way
ATTACK = 300                  # streams the old attack asks for with one cookie
VICTIM_LIMIT = 2.0 * SLOW     # what another user may wait for each request
QUERY = "types=*&ping=5"
HEADERS = (("x-content-type-options", "nosniff"), ("x-frame-options", "deny"),
           ("referrer-policy", "no-referrer"), ("cache-control", "no-store"))


def still_open(streams, settle=1.0):
    """The streams of streams that answered 200 and are not closed: reads
    what has come on all of them at once until nothing more comes."""
    live = [st for st in streams if st.status == 200]
    with selectors.DefaultSelector() as sel:    # epoll: any number of sockets
        for st in live:
            if not st.closed:
                sel.register(st.sock, selectors.EVENT_READ, st)
        while sel.get_map():
            ready = sel.select(settle)
            if not ready:
                break
            for key, _ in ready:
                key.data._fill(time.monotonic() + 0.1)
                if key.data.closed:
                    sel.unregister(key.fileobj)
    return [st for st in live if not st.closed]


class Suite:
    def __init__(self, t, s):
        self.t, self.s = t, s
        self.streams = []

    def signed_in(self, user, source="127.0.0.1"):
        c = Client(self.s.url, source=source)
        r = c.login(user, USERS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        return c

    def open(self, client, source):
        st = Stream(self.s.port, client.cookie, QUERY, source=source)
        self.streams.append(st)
        return st

    def open_by(self, client, source, deadline):
        """A stream that opens (200) before deadline, asked for every
        0.5 s, or None."""
        while time.monotonic() < deadline:
            st = self.open(client, source)
            if st.status == 200:
                return st
            st.close()
            time.sleep(0.5)
        return None

    def close_all(self):
        for st in self.streams:
            st.close()
        self.streams = []

    def refused(self, st, what):
        """Checks a stream refused over a cap: a JSON 429 rate_limited,
        Retry-After, the security headers. (Retry-After or None, the body.)"""
        t = self.t
        body = st.body() if st.status else b""
        try:
            err = json.loads(body).get("error")
        except ValueError:
            err = None
        t.ok((st.status, err) == (429, "rate_limited"), f"{what}: a JSON 429 rate_limited",
             (st.status, body[:200]))
        t.ok(st.headers.get("content-type", "").startswith("application/json"),
             f"{what}: application/json, no event stream", st.headers)
        ra = st.headers.get("retry-after", "")
        t.ok(ra.isdigit() and int(ra) >= 1, f"{what}: with Retry-After", st.headers)
        t.ok(all(st.headers.get(k, "").lower() == v for k, v in HEADERS) and
             st.headers.get("content-security-policy", "").startswith("default-src 'none'"),
             f"{what}: with the API's security headers", st.headers)
        return (int(ra) if ra.isdigit() else None), body

    def victim(self, label, source="127.0.0.2"):
        """bob, from another address: sign-in, a JMAP call and a stream,
        each answered within VICTIM_LIMIT; prints how long each took."""
        t, got = self.t, []
        start = time.monotonic()
        bob = Client(self.s.url, timeout=30, source=source)
        status = bob.login(BOB, USERS[BOB]).status
        got.append(("sign-in", time.monotonic() - start, status, 200))
        start = time.monotonic()
        status = bob.jmap([["Core/echo", {"n": 1}, "0"]],
                          using=["urn:ietf:params:jmap:core"]).status
        got.append(("JMAP call", time.monotonic() - start, status, 200))
        start = time.monotonic()
        st = Stream(self.s.port, bob.cookie, QUERY, source=source)
        got.append(("stream", time.monotonic() - start, st.status, 200))
        st.close()
        print(f"# {label}: bob ({source}) waited " + ", ".join(
            f"{name} {secs:.2f} s ({status})" for name, secs, status, _ in got), flush=True)
        for name, secs, status, want in got:
            t.ok(status == want and secs < VICTIM_LIMIT,
                 f"{label}: another user's {name} is answered ({want}) within "
                 f"{VICTIM_LIMIT:g} s", f"{status} after {secs:.2f} s")

    def session_cap(self):
        t, src = self.t, "127.0.0.3"
        alice = self.signed_in(ALICE)
        opened = time.monotonic()
        mine = [self.open(alice, src) for _ in range(PER_SESSION)]
        t.eq([st.status for st in mine], [200] * PER_SESSION,
             f"one session opens {PER_SESSION} streams (the default cap)")
        fifth = self.open(alice, src)
        ra, body = self.refused(fifth, "a 5th stream of the session at once")
        t.ok(ra is not None and ra <= REPLACE_AFTER, "Retry-After: the seconds until its "
             f"oldest stream may make way (at most {REPLACE_AFTER})", ra)
        t.ok(b"session has too many event streams" in body, "the message says why",
             body[:200])
        t.ok(not any(st.closed for st in mine), "the refusal ended none of its streams")
        # The oldest makes way once it has been open REPLACE_AFTER s.
        new = self.open_by(alice, src, opened + REPLACE_AFTER + MARGIN)
        waited = time.monotonic() - opened
        print(f"# a 5th stream of the session opened {waited:.1f} s after the first",
              flush=True)
        t.ok(new is not None and waited >= REPLACE_AFTER, f"{REPLACE_AFTER} s after the "
             "oldest opened (not before), a 5th stream of the session opens",
             f"after {waited:.1f} s")
        t.ok(mine[0].wait_closed(5) and b"replaced by a newer stream" in mine[0].raw,
             "the oldest is told it was replaced and ends", mine[0].raw[-200:])
        t.ok(not any(st.closed for st in mine[1:]), "the session's other streams stay open")
        self.close_all()

    def address_cap(self):
        t, src = self.t, "127.0.0.1"
        users = [ALICE, CAROL, ALICE]
        sessions = [self.signed_in(u) for u in users]
        held = [self.open(c, src) for c in sessions for _ in range(PER_IP // len(users))]
        t.eq([st.status for st in held], [200] * PER_IP,
             f"{len(users)} sessions from one address open {PER_IP} streams "
             "(push_streams_per_ip)")
        late = self.signed_in(CAROL)
        over = self.open(late, src)
        ra, body = self.refused(over, f"stream {PER_IP + 1} from that address, "
                                      "a new session's")
        t.eq(ra, 60, "Retry-After 60 for an address at its cap")
        t.ok(b"address" in body, "the message names the address", body[:200])
        self.victim("one address at its cap")
        t.ok(not any(st.closed for st in held), "the address's streams under the cap stay")
        self.close_all()
        # pushd counts a closed stream until lighttpd notices, at its next
        # write (a ping, every 5 s).
        again = self.open_by(late, src, time.monotonic() + 5 + MARGIN)
        t.ok(again is not None, "once its streams close, the address opens streams again")
        self.close_all()

    def old_attack(self):
        t, src = self.t, "127.0.0.4"
        carol = self.signed_in(CAROL)
        start = time.monotonic()
        for _ in range(ATTACK):
            st = self.open(carol, src)
            if st.status != 200:
                st.close()
        took = time.monotonic() - start
        open_now = still_open(self.streams)
        print(f"# {ATTACK} streams asked for with one cookie in {took:.1f} s: "
              f"{len(open_now)} open", flush=True)
        t.ok(len(open_now) <= PER_SESSION, f"{ATTACK} streams asked for with one cookie: "
             f"at most {PER_SESSION} open", len(open_now))
        self.victim(f"{ATTACK} streams asked for with one cookie")
        self.close_all()


def one_server(t, root, label, **kind):
    # Sign-in limits out of the way (the test signs in often from one
    # address); the session's cap keeps its default.
    stack = Stack(os.path.join(root, label), seed=False,
                  conf_extra={"push_mode": "poll", "push_poll_interval": "5s",
                              "push_streams_per_ip": str(PER_IP),
                              "login_limit_ip": "1000", "login_limit_user": "1000"}, **kind)
    lt = t.labelled(label)
    try:
        stack.start()
    except Exception as e:
        t.bail(f"{label}: stack did not start: {e}")
    suite = Suite(lt, stack)
    try:
        for name in ("session_cap", "address_cap", "old_attack"):
            lt.run(name, getattr(suite, name))
            suite.close_all()
        # Under the sanitizers a leak or a memory error makes this fail.
        lt.eq(stack.stop_pushd(), 0, "pushd stops cleanly on SIGTERM (no leak, under the sanitizers)")
    finally:
        if t.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail().replace("\n", "\n# "))
        stack.stop()


def main():
    t = Tap()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    apache.lighttpd_then_apache("postern-streamcaps-", one_server, t)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
