#!/usr/bin/env python3
"""pushd polls an account every push_poll_visible while one of its tabs
is in view and every push_poll_interval otherwise, against a real Cyrus
behind a real lighttpd. A tab says so when its stream opens
(/api/events?visible=1) and, while it stays open, with
POST /api/events?visible=0|1 for every stream of its session. The
upstream requests are counted by a pass-through proxy in front of Cyrus
(tests/harness/faulty.py). Every wait is for a condition with a
deadline; the assertions are on the gaps between the polls counted, so
a loaded machine can only make the test slower, not wrong."""

import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from faulty import Faulty  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, is_state, message, wait_for  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB, CAROL = "alice@example.test", "bob@example.test", "carol@example.test"
HIDDEN = 8       # push_poll_interval, seconds
VISIBLE = 1      # push_poll_visible, seconds
REST = 1         # pushd's least gap between two polls (POLL_REST_MS)
MARGIN = 4 * SLOW
EARLY = 0.3      # timers may fire this much before a gap is full


class CountedStack(Stack):
    """The stack with the counting proxy between postern and Cyrus."""

    def start_cyrus(self):
        url = super().start_cyrus()
        self.counter = Faulty(int(url.rsplit(":", 1)[1])).start()
        return self.counter.url

    def stop(self):
        super().stop()
        if getattr(self, "counter", None):
            self.counter.stop()


def is_poll(body, user):
    """pushd's poll: every call a */get with no ids, for user's account."""
    try:
        calls = json.loads(body)["methodCalls"]
    except (ValueError, KeyError, TypeError):
        return False
    return bool(calls) and all(c[0].endswith("/get") and c[1].get("ids") == []
                               and c[1].get("accountId") == user for c in calls)


def gaps(times):
    return [round(b - a, 2) for a, b in zip(times, times[1:])]


class Suite:
    def __init__(self, tap, stack):
        self.t, self.s = tap, stack
        self.streams = []

    def signed_in(self, user):
        c = Client(self.s.url)
        r = c.login(user, USERS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        return c

    def open(self, client, visible):
        st = Stream(self.s.port, client.cookie, f"types=*&ping=5&visible={visible}")
        self.streams.append(st)
        return st

    def say(self, client, visible):
        return client.request("POST", f"/api/events?visible={visible}")

    def polls(self, user, since=0.0):
        """Times of pushd's poll calls for user's account since a time."""
        return [when for when, path, body in list(self.s.counter.seen)
                if when >= since and is_poll(body, user)]

    def wait_polls(self, user, n, since, timeout):
        """The first n polls after since, or fewer at the deadline."""
        wait_for(lambda: len(self.polls(user, since)) >= n, timeout)
        return self.polls(user, since)[:n]

    def tabs_open(self):
        h = Client(self.s.url).request("GET", "/api/health").json()
        return h.get("push", {}).get("tabs", {}).get("poll", 0)

    # -- checks ---------------------------------------------------------------

    def refused(self):
        t = self.t
        c = self.signed_in(CAROL)
        st = Stream(self.s.port, c.cookie, "types=*&visible=yes")
        t.eq(st.status, 400, "a stream with visible=yes is refused: 400")
        st.close()
        for q in ("", "?visible=yes", "?visible", "?visible=10"):
            r = c.request("POST", "/api/events" + q)
            t.eq(r.status, 400, f"POST /api/events{q}: 400 bad_request")
        r = c.request("POST", "/api/events?visible=1", csrf=False)
        t.eq(r.status, 403, "POST without X-Postern-CSRF: 403")
        r = Client(self.s.url).request("POST", "/api/events?visible=1")
        t.eq(r.status, 401, "POST without a session: 401")
        r = self.say(c, 1)
        t.eq((r.status, r.json()), (200, {"streams": 0}),
             "POST with no stream of the session open: 200, none marked")
        r = c.request("PUT", "/api/events?visible=1")
        t.eq(r.status, 405, "PUT /api/events: 405")

    def rates(self):
        """One tab: hidden, then in view by POST, then hidden again."""
        t = self.t
        alice = self.signed_in(ALICE)
        tab = self.open(alice, 0)
        t.eq(tab.status, 200, "a hidden tab's stream opens (visible=0)")
        first = self.wait_polls(ALICE, 1, 0, 20 * SLOW)
        t.ok(first, "pushd polled alice once (the baseline)")
        if not first:
            return
        r = self.say(alice, 1)
        t1 = time.monotonic()
        t.eq((r.status, r.json()), (200, {"streams": 1}), "POST visible=1 marks the tab's stream")
        got = self.wait_polls(ALICE, 5, t1, REST + 4 * VISIBLE + MARGIN)
        t.ok(got and got[0] - t1 <= REST + VISIBLE + MARGIN,
             f"the next poll comes forward (hidden interval {HIDDEN} s)",
             round(got[0] - t1, 2) if got else None)
        g = gaps(got)
        t.ok(len(got) == 5 and min(g) >= VISIBLE - EARLY and statistics.median(g) < HIDDEN / 2,
             f"in view: a poll every {VISIBLE} s", g)

        self.s.cyrus.deliver(ALICE, message("visible"))
        d0 = time.monotonic()
        e = tab.wait(is_state, VISIBLE + MARGIN)
        t.ok(e is not None, f"mail reaches the tab within {VISIBLE} s + margin",
             round(time.monotonic() - d0, 2))

        r = self.say(alice, 0)
        t2 = time.monotonic()
        t.eq((r.status, r.json()), (200, {"streams": 1}), "POST visible=0")
        got = self.wait_polls(ALICE, 2, t2, VISIBLE + HIDDEN + MARGIN)
        t.ok(len(got) == 2 and gaps(got)[0] >= HIDDEN - EARLY,
             f"hidden again: {HIDDEN} s between polls", gaps(got))
        tab.close()

    def streams_of_accounts(self):
        """A stream opened in view; one session's two streams; another
        account's hidden tab keeps the slow interval; the visible stream
        closing slows its account down."""
        t = self.t
        bob, carol = self.signed_in(BOB), self.signed_in(CAROL)
        c = self.open(carol, 0)
        self.wait_polls(CAROL, 1, 0, 20 * SLOW)
        t0 = time.monotonic()
        b1 = self.open(bob, 1)
        b2 = self.open(bob, 0)
        got = self.wait_polls(BOB, 5, t0, 5 * VISIBLE + REST + MARGIN)
        nc = len(self.polls(CAROL, t0 + 0.01))
        t.ok(len(got) == 5 and max(gaps(got)[1:] or [99]) < HIDDEN / 2,
             "a stream opened with visible=1 polls its account fast", gaps(got))
        t.ok(nc <= 1, "carol's hidden account meanwhile at most once", nc)
        r = self.say(bob, 0)
        t.eq(r.json(), {"streams": 2}, "POST marks every stream of the session")
        r = self.say(bob, 1)
        t.eq(r.json(), {"streams": 2}, "and back in view")
        b1.close()
        b2_only = wait_for(lambda: self.tabs_open() == 2, 15 * SLOW)
        t.ok(b2_only, "pushd saw bob's first stream close")
        # bob's remaining stream is still marked in view: still fast.
        t3 = time.monotonic()
        got = self.wait_polls(BOB, 3, t3, 3 * VISIBLE + MARGIN)
        t.ok(len(got) == 3, "the session's other stream keeps the account fast", gaps(got))
        b2.close()
        c.close()

    def run(self):
        self.refused()
        self.rates()
        self.streams_of_accounts()


def main():
    tap = Tap()
    root = tempfile.mkdtemp(prefix="postern-it-visible-")
    stack = CountedStack(root, mode="fcgi", conf_extra={
        "push_poll_interval": f"{HIDDEN}s", "push_poll_visible": f"{VISIBLE}s", "push_mode": "poll"})
    try:
        stack.start()
    except Exception as e:
        tap.bail(f"the stack did not start: {e}")
    if stack.pushd is None:
        tap.bail("pushd was not built")
    try:
        tap.run("suite", Suite(tap, stack).run)
    finally:
        if tap.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail().replace("\n", "\n# "))
        stack.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
