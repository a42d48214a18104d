#!/usr/bin/env python3
"""Two gateway nodes on one PostgreSQL: node A and node B, each its own
lighttpd, responders (FastCGI) and pushd, with node_name node-a and
node-b, sharing a private PostgreSQL (tests/harness/postgres.py) and A's
Cyrus; B has A's secret and VAPID key, copied as an operator copies them.
What holds across nodes today:

- a cookie from A works on B: JMAP, a blob uploaded on A downloaded on
  B, the settings, the event stream;
- sign-out on B: A refuses the session at once (401), JMAP and settings,
  and its event stream on A ends within 2 s (B tells A through
  PostgreSQL; the poll's own check comes only every 20 s here); the
  same after PostgreSQL restarts (A's pushd listens again);
- failed sign-ins alternating between A and B are refused at
  login_limit_user, the right password too;
- the API budget counts across nodes: below 128 every hit is written,
  so the call after the budget is refused on whichever node it lands;
- mail delivered over LMTP reaches a tab on each node;
- B's pushd starting and stopping leaves A's push row and tab count
  alone (each node cleans up only its own rows); both nodes are listed
  in the state while alive, and B's goes when it stops.

Skips when PostgreSQL is not installed."""

import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import postgres  # noqa: E402
from client import Client  # noqa: E402
from stack import Stack  # noqa: E402
from suite import ALICE, BOB, CAROL, USERS  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import MARGIN, Stream, changed, is_state, message, wait_for  # noqa: E402

POLL = 20               # push_poll_interval and push_poll_visible: far
                        # above the 2 s a sign-out may take to end a stream
LOGIN_LIMIT = 4         # login_limit_user
BUDGET = 40             # api_budget: below 128, every hit is written
WINDOW = 86400          # both windows: one day, so that a run fits in one


def fresh_window():
    """Waits out the last two minutes of a window, so that the counts of
    the checks below fall in one."""
    left = WINDOW - time.time() % WINDOW
    if left < 120:
        time.sleep(left + 1)


def start_nodes(pg, root):
    common = {"state_db": pg.uri, "push_poll_interval": f"{POLL}s", "push_poll_visible": f"{POLL}s",
              "login_limit_user": str(LOGIN_LIMIT), "login_window": str(WINDOW),
              "api_budget": str(BUDGET), "api_budget_window": str(WINDOW)}
    a = Stack(os.path.join(root, "a"), conf_extra={**common, "node_name": "node-a"})
    a.start()
    b_root = os.path.join(root, "b")
    os.makedirs(b_root)
    # What the operator copies to every node: the secret (and the VAPID
    # key, which B is pointed at).
    shutil.copy(os.path.join(a.root, "secret"), os.path.join(b_root, "secret"))
    b = Stack(b_root, upstream=a.cyrus.base_url,
              conf_extra={**common, "node_name": "node-b",
                          "webpush_key_file": os.path.join(a.root, "vapid.pem")})
    try:
        b.start()
    except BaseException:
        a.stop()
        raise
    return a, b


def cookie_everywhere(t, a, b):
    ca = Client(a.url)
    t.eq(ca.login(ALICE, USERS[ALICE]).status, 200, "alice signs in on A")
    cb = Client(b.url)
    cb.cookie = ca.cookie
    r = cb.jmap([["Mailbox/get", {"accountId": ALICE, "ids": None}, "m"]])
    t.ok(r.status == 200 and r.json()["methodResponses"][0][0] == "Mailbox/get",
         "A's cookie on B: JMAP", r.status)
    up = ca.request("POST", f"/api/upload/{ALICE}", b"node blob " * 10,
                    headers={"Content-Type": "application/octet-stream"})
    blob = up.json().get("blobId") if up.status in (200, 201) else None
    r = cb.request("GET", f"/api/blob/{ALICE}/{blob}/n.bin")
    t.ok(r.status == 200 and r.body == b"node blob " * 10,
         "a blob uploaded on A is downloaded on B", r.status)
    t.eq(cb.request("PUT", "/api/auth/settings", {"theme": "dark"}).status, 200,
         "settings written on B")
    r = ca.request("GET", "/api/auth/settings")
    t.ok(r.status == 200 and r.json().get("theme") == "dark", "and read on A", r.body[:120])
    st = Stream(b.port, ca.cookie, "types=*")
    try:
        t.eq(st.status, 200, "A's cookie on B: the event stream")
    finally:
        st.close()
    return ca, cb


def signout_elsewhere(t, a, ca, cb, what="sign-out on B"):
    st = Stream(a.port, ca.cookie, "types=*")
    try:
        t.eq(st.status, 200, f"{what}: a stream of the session open on A")
        time.sleep(1)                   # pushd A has checked it
        # A's responders keep the session's row from these (each process
        # that served one), and no longer read it at each request.
        for _ in range(12):
            ca.jmap([["Mailbox/get", {"accountId": ALICE, "ids": []}, "m"]])
        t0 = time.monotonic()
        t.eq(cb.request("POST", "/api/auth/logout").status, 200, what)
        t.eq(ca.jmap([["Mailbox/get", {"accountId": ALICE, "ids": []}, "m"]]).status, 401,
             f"{what}: A refuses the session at once: JMAP")
        closed = st.wait_closed(2 + 1)
        took = time.monotonic() - t0
        t.eq(ca.request("GET", "/api/auth/settings").status, 401, f"{what}: and settings")
        t.ok(closed and took <= 2, f"{what}: its stream on A ends within 2 s", f"{took:.2f} s")
        print(f"# {what}: the stream on A ended {took:.2f} s after the sign-out on B", flush=True)
    finally:
        st.close()


def after_restart(t, pg, a, b):
    """PostgreSQL restarted: A's pushd listens again, and a sign-out on B
    still ends A's stream at once."""
    pg.stop_server()
    pg.start_server()
    ca = Client(a.url)
    t.ok(wait_for(lambda: ca.login(ALICE, USERS[ALICE]).status == 200, 10, 0.3),
         "PostgreSQL restarted: alice signs in on A")
    cb = Client(b.url)
    cb.cookie = ca.cookie
    # A's pushd connects again within its retry (1 s) and checks its tabs.
    time.sleep(2 + MARGIN / 4)
    signout_elsewhere(t, a, ca, cb, "after PostgreSQL restarted, sign-out on B")


def login_limit(t, a, b):
    fresh_window()
    got = []
    for i in range(LOGIN_LIMIT + 1):
        node = (a, b)[i % 2]
        got.append(Client(node.url).login(BOB, "wrong password").status)
    t.eq(got, [401] * LOGIN_LIMIT + [429],
         f"wrong passwords alternating A/B: {LOGIN_LIMIT} answered, then 429")
    t.eq(Client(a.url).login(BOB, USERS[BOB]).status, 429,
         "the right one waits out the limit on A too")


def budget(t, a, b):
    fresh_window()
    ca = Client(a.url)
    t.eq(ca.login(ALICE, USERS[ALICE]).status, 200, "alice signs in (a new session)")
    cb = Client(b.url)
    cb.cookie = ca.cookie
    got = [(ca, cb)[i % 2].request("GET", "/api/auth/settings").status
           for i in range(BUDGET + 2)]
    # The sign-in's own call counts too: whatever came before, the calls
    # after the budget are refused, and the budget is not refused before.
    first = got.index(429) if 429 in got else None
    t.ok(first is not None and all(s == 200 for s in got[:first]) and
         all(s == 429 for s in got[first:]) and BUDGET - 2 <= first <= BUDGET,
         f"the budget ({BUDGET}) counts across nodes: calls alternating A/B pass, "
         "then 429 on both", got)


def delivered_everywhere(t, a, b):
    ca = Client(a.url)
    t.eq(ca.login(ALICE, USERS[ALICE]).status, 200, "alice signs in again")
    sa = Stream(a.port, ca.cookie, "types=*")
    sb = Stream(b.port, ca.cookie, "types=*")
    try:
        time.sleep(2)                   # both pushd know her states
        a.cyrus.deliver(ALICE, message("nodes"))
        for st, name in ((sa, "A"), (sb, "B")):
            ev = st.wait(is_state, POLL + MARGIN)
            t.ok(ev is not None and ALICE in changed(ev), f"mail to alice reaches her tab on {name}",
                 st.events)
        # Signed out: both tabs end (their rows with them), whichever
        # node notices the closed sockets first.
        t.eq(ca.request("POST", "/api/auth/logout").status, 200, "alice signs out")
    finally:
        sa.close()
        sb.close()
    ca = Client(a.url)
    t.eq(ca.login(ALICE, USERS[ALICE]).status, 200, "alice signs in on A once more")
    return ca


def rows(pg):
    return pg.psql("SELECT node || ':' || mode FROM push_accounts ORDER BY node")


def tabs_of_a(pg):
    return pg.psql("SELECT tabs FROM push_accounts WHERE node = 'node-a'")


def own_rows(t, pg, a, b, ca, streams):
    """alice's tab on A, carol's on B: each node's own push row."""
    cc = Client(b.url)
    t.eq(cc.login(CAROL, USERS[CAROL]).status, 200, "carol signs in on B")
    t.ok(wait_for(lambda: rows(pg) == "", 5), "the signed-out tabs' rows went", rows(pg))
    sa = Stream(a.port, ca.cookie, "types=*")
    streams.append(sa)
    sc = Stream(b.port, cc.cookie, "types=*")
    streams.append(sc)
    t.ok(wait_for(lambda: rows(pg) == "node-a:poll\nnode-b:poll", 5 + MARGIN),
         "each node's pushd writes its own push row (alice's on A, carol's on B)", rows(pg))
    t.eq(pg.psql("SELECT string_agg(name, ',' ORDER BY name) FROM nodes"), "node-a,node-b",
         "both nodes are alive in the state")
    # The lease makes A's row at once; its tab count comes with A's flush.
    t.ok(wait_for(lambda: tabs_of_a(pg) not in ("", "0"), 5), "A's row counts its tab",
         tabs_of_a(pg))
    tabs = tabs_of_a(pg)
    sc.close()
    b.stop_pushd()
    t.eq(rows(pg), "node-a:poll", "B's pushd stops: its row goes, A's stays")
    t.eq(pg.psql("SELECT coalesce(string_agg(name, ','), '') FROM nodes"), "node-a",
         "and B is no longer listed")
    for _ in range(2):
        b.start_pushd()
        b.stop_pushd()
    b.start_pushd()
    t.ok(rows(pg) == "node-a:poll" and tabs_of_a(pg) == tabs and int(tabs) >= 1,
         "B's pushd starting and stopping leaves A's row and its tab count alone",
         f"{rows(pg)} tabs {tabs_of_a(pg)} (before {tabs})")
    a.cyrus.deliver(ALICE, message("after B restarted"))
    ev = sa.wait(is_state, POLL + MARGIN)
    t.ok(ev is not None, "A's tab still gets mail", sa.events)


def main():
    t = Tap()

    def body(pg):
        root = tempfile.mkdtemp(prefix="postern-nodes-")
        a, b = start_nodes(pg, root)
        streams = []
        try:
            ca, cb = cookie_everywhere(t, a, b)
            signout_elsewhere(t, a, ca, cb)
            after_restart(t, pg, a, b)
            login_limit(t, a, b)
            budget(t, a, b)
            ca = delivered_everywhere(t, a, b)
            own_rows(t, pg, a, b, ca, streams)
        finally:
            for st in streams:
                st.close()
            b.stop()
            a.stop()
            shutil.rmtree(root, ignore_errors=True)
    return postgres.tap_main(t, body)


if __name__ == "__main__":
    sys.exit(main())
