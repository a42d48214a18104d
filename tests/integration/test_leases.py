#!/usr/bin/env python3
"""One upstream channel per account across two nodes: node A and node B
(each its lighttpd, responders and pushd, node_name node-a and node-b) on
one private PostgreSQL, both reaching Cyrus through a counting proxy
(tests/harness/faulty.py, every request passed), which tells the nodes
apart by pushd's User-Agent ("postern-pushd (node NAME)"). Poll mode,
every 2 s.

- With alice's tabs on both nodes, the proxy sees her polled by one node
  only (any 3 s: one node), sampled every second for over a minute, while
  B's pushd starts and stops five times; about one poll per interval, not
  two.
- Mail delivered over LMTP reaches her tabs on both nodes (the follower's
  through PostgreSQL's NOTIFY).
- kill -9 of the holder's pushd: the other node polls for her within 20 s
  (the lease, 10 s, lapses); a tab that was on the dead node reconnects
  to the survivor and resyncs; mail sent after the kill reaches it.
- SIGSTOP of the holder: the other node takes over and there is never a
  second node polling; after SIGCONT the frozen one does not poll again.
- PostgreSQL frozen (SIGSTOP) for 3 s: the holder's tab still gets new
  mail (pushd's database work is off its loop), the follower's once it
  is back.
- A device subscribing to Web Push on the node without the lease gets
  its new mail pushed by the holder (told through PostgreSQL); also when
  the holder's listening connection was lost as it was told (the rows
  are read again once it listens).
- The holder cut off from PostgreSQL (its connections open, nothing
  passing, through tests/harness/sockcut.py) while it still reaches the
  mail server: it stops polling by itself within its fence (6 s), the
  other node takes over within 20 s, the cut node never polls after
  that; healed, mail reaches both nodes' tabs.
- PostgreSQL restarted: still one node polling.

Figures as TAP comments: the takeover times. Skips when PostgreSQL is
not installed."""

import base64
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import postgres  # noqa: E402
import pushservice  # noqa: E402
import sockcut  # noqa: E402
from client import Client  # noqa: E402
from faulty import Faulty  # noqa: E402
from stack import Stack, wait_until  # noqa: E402
from suite import ALICE, USERS  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import MARGIN, Stream, changed, is_state, message  # noqa: E402

POLL = 2                # push_poll_interval and push_poll_visible
TAKEOVER = 20           # the bound on a takeover, seconds
FENCE = 6               # PUSHD_LEASE_FENCE_MS: a node without renewals stops
UA = re.compile(rb"(?im)^user-agent: postern-pushd \(node ([\w.-]+)\)\r?$")
AUTH = re.compile(rb"(?im)^authorization: basic ([A-Za-z0-9+/=]+)\r?$")


def polls(proxy, login, since=0.0):
    """(time, node) of every pushd call for login seen since then."""
    out = []
    with proxy.lock:
        heads = list(proxy.heads)
    for at, _path, head in heads:
        ua, auth = UA.search(head), AUTH.search(head)
        if at < since or not ua or not auth:
            continue
        user = base64.b64decode(auth.group(1)).split(b":", 1)[0].decode()
        if user == login:
            out.append((at, ua.group(1).decode()))
    return out


def overlaps(proxy, login, since, until, span=POLL + 1.0):
    """The windows of span seconds, every second, in which more than one
    node called for login."""
    seen = polls(proxy, login, since)
    bad = []
    t = since
    while t + span <= until:
        nodes = {n for at, n in seen if t <= at < t + span}
        if len(nodes) > 1:
            bad.append((round(t - since, 1), sorted(nodes)))
        t += 1.0
    return bad


def holder_since(proxy, login, since, timeout):
    """The node that calls for login after since, and when (or None)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        p = polls(proxy, login, since)
        if p:
            return p[0]
        time.sleep(0.2)
    return None


class Nodes:
    def __init__(self, pg, root, ps=None):
        self.root = root
        self.pg = pg
        self.ps = ps            # a push service on loopback, for Web Push
        self.cyrus_stack = None
        self.a = self.b = None
        self.proxy = None
        self.cuts = {}          # node name -> its relay to PostgreSQL

    def db_through_cut(self, name):
        """The node's URI to PostgreSQL through a relay of its own that the
        test can cut (a partition between that node and the database)."""
        folder = os.path.join(self.root, f"{name}-pg")
        os.makedirs(folder)
        os.chmod(folder, 0o755)
        self.cuts[name] = sockcut.SockCut(os.path.join(self.pg.dir, ".s.PGSQL.5432"),
                                          os.path.join(folder, ".s.PGSQL.5432")).start()
        # Its connections named after it in pg_stat_activity.
        return (self.pg.uri.replace(f"host={self.pg.dir}", f"host={folder}")
                + f"&application_name={name}")

    def start(self):
        common = {"push_poll_interval": f"{POLL}s", "push_poll_visible": f"{POLL}s"}
        if self.ps:
            common.update({"webpush_ca_file": self.ps.ca_file, "webpush_coalesce": "1s",
                           "webpush_allow_loopback_for_tests": "yes"})
        # A's Cyrus, behind the proxy: every node's upstream.
        self.a = Stack(os.path.join(self.root, "a"),
                       conf_extra={**common, "node_name": "node-a",
                                   "state_db": self.db_through_cut("node-a")})
        self.a.start_cyrus()
        self.proxy = Faulty(self.a.cyrus.http_port).start()
        self.a.upstream = self.proxy.url
        self.a.start()
        b_root = os.path.join(self.root, "b")
        os.makedirs(b_root)
        shutil.copy(os.path.join(self.a.root, "secret"), os.path.join(b_root, "secret"))
        self.b = Stack(b_root, upstream=self.proxy.url,
                       conf_extra={**common, "node_name": "node-b",
                                   "state_db": self.db_through_cut("node-b"),
                                   "webpush_key_file": os.path.join(self.a.root, "vapid.pem")})
        self.b.start()

    def stop(self):
        for s in (self.b, self.a):
            if s:
                s.stop()
        if self.a and self.a.cyrus:
            self.a.cyrus.stop()
        if self.proxy:
            self.proxy.stop()
        for c in self.cuts.values():
            c.stop()

    def by_name(self, name):
        return self.a if name == "node-a" else self.b


class Tabs:
    """alice's tabs, one on each node; reopened where they end."""

    def __init__(self, nodes, cookie):
        self.nodes = nodes
        self.cookie = cookie
        self.on = {"node-a": Stream(nodes.a.port, cookie, "types=*"),
                   "node-b": Stream(nodes.b.port, cookie, "types=*")}

    def close(self):
        for st in self.on.values():
            st.close()


def both_get_mail(t, nodes, tabs, what):
    nodes.a.cyrus.deliver(ALICE, message(what))
    for name, st in tabs.on.items():
        ev = st.wait(is_state, POLL + MARGIN)
        t.ok(ev is not None and ALICE in changed(ev), f"{what}: mail reaches her tab on {name}",
             st.events[-3:])


def one_channel(t, nodes, tabs, since):
    """B's pushd starts and stops five times; then the whole run so far
    shows one node polling at a time."""
    for i in range(5):
        nodes.b.stop_pushd()
        time.sleep(1)
        nodes.b.start_pushd()
        # B's tab came back? It ended with B's pushd: open it again.
        tabs.on["node-b"].close()
        tabs.on["node-b"] = Stream(nodes.b.port, tabs.cookie, "types=*")
        time.sleep(2)
    # A minute at least, sampled every second (the bound).
    time.sleep(max(POLL * 3, since + 61 - time.monotonic()))
    now = time.monotonic()
    bad = overlaps(nodes.proxy, ALICE, since, now)
    t.ok(not bad, f"one node polls for alice at a time, over {now - since:.0f} s with tabs on "
         "both nodes and B restarted five times", bad[:5])
    n = len(polls(nodes.proxy, ALICE, since))
    expect = (now - since) / POLL
    t.ok(n <= expect * 1.3 + 2, f"about one poll per interval ({n} in {now - since:.0f} s, "
         f"one channel would make {expect:.0f})", n)


def killed(t, nodes, tabs):
    # Both tabs have an event id to come back with (and B's new ones are
    # followed or held after its restarts).
    both_get_mail(t, nodes, tabs, "after B's restarts")
    first = holder_since(nodes.proxy, ALICE, time.monotonic() - POLL - 1, POLL + MARGIN)
    t.ok(first is not None, "a node polls for alice", first)
    dead = first[1] if first else "node-a"
    alive = "node-b" if dead == "node-a" else "node-a"
    last_id = (tabs.on[dead].events or [{}])[-1].get("id")
    kill_at = time.monotonic()
    nodes.by_name(dead).stop_pushd(signal.SIGKILL)
    got = holder_since(nodes.proxy, ALICE, kill_at + 0.5, TAKEOVER + MARGIN)
    took = (got[0] - kill_at) if got else None
    t.ok(got is not None and got[1] == alive and took <= TAKEOVER,
         f"kill -9 of the holder ({dead}): {alive} polls for alice within {TAKEOVER} s",
         f"{got} after {took}")
    print(f"# takeover after kill -9: {took if took is None else round(took, 2)} s", flush=True)
    # The dead node's tab: its stream ended; it reconnects to the survivor.
    tabs.on[dead].close()
    survivor = nodes.by_name(alive)
    st = Stream(survivor.port, tabs.cookie, "types=*",
                headers={"Last-Event-ID": last_id} if last_id else None)
    ev = st.wait(lambda e: e.get("event") == "resync", 5)
    t.ok(ev is not None, "the dead node's tab reconnects to the survivor and is told to resync",
         st.events[-3:])
    tabs.on[dead] = st
    nodes.a.cyrus.deliver(ALICE, message("after the kill"))
    ev = st.wait(is_state, POLL + MARGIN)
    t.ok(ev is not None, "mail sent after the kill reaches it", st.events[-3:])
    # The dead node back, with a tab of hers again.
    nodes.by_name(dead).start_pushd()
    tabs.on[dead].close()
    tabs.on[dead] = Stream(nodes.by_name(dead).port, tabs.cookie, "types=*")
    time.sleep(1)
    return alive


def frozen(t, nodes, tabs, holder):
    other = "node-b" if holder == "node-a" else "node-a"
    stack = nodes.by_name(holder)
    pid = stack.pushd.pid
    stop_at = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    try:
        got = holder_since(nodes.proxy, ALICE, stop_at + 0.5, TAKEOVER + MARGIN)
        t.ok(got is not None and got[1] == other,
             f"SIGSTOP of the holder ({holder}): {other} takes the channel over", got)
        if got:
            print(f"# takeover after SIGSTOP: {got[0] - stop_at:.2f} s", flush=True)
    finally:
        os.kill(pid, signal.SIGCONT)
    # A request libcurl had on the wire when the node froze may still
    # arrive just after it wakes: from a second on, none.
    cont_at = time.monotonic() + 1
    time.sleep(POLL * 3)
    after = [p for p in polls(nodes.proxy, ALICE, cont_at) if p[1] == holder]
    t.ok(not after, f"after SIGCONT {holder} does not poll again", after[:3])
    bad = overlaps(nodes.proxy, ALICE, stop_at, time.monotonic())
    t.ok(not bad, "never two nodes polling, frozen or woken", bad[:5])


def partitioned(t, nodes, tabs):
    """The holder cut off from the database while it still reaches the
    mail server: its renewals get no answer, so it stops its channels by
    itself (the fence) before its lease lapses and the other node takes
    it."""
    got = holder_since(nodes.proxy, ALICE, time.monotonic() - POLL - 1, POLL + MARGIN)
    t.ok(got is not None, "a node polls for alice", got)
    holder = got[1] if got else "node-a"
    other = "node-b" if holder == "node-a" else "node-a"
    cut_at = time.monotonic()
    nodes.cuts[holder].cut()
    try:
        end = cut_at + TAKEOVER + MARGIN
        took = None
        while took is None and time.monotonic() < end:
            by_other = [at for at, n in polls(nodes.proxy, ALICE, cut_at) if n == other]
            took = by_other[0] if by_other else None
            time.sleep(0.2)
        time.sleep(POLL * 2)    # would the cut node poll again?
        mine = [at for at, n in polls(nodes.proxy, ALICE, cut_at) if n == holder]
    finally:
        nodes.cuts[holder].heal()
    t.ok(took is not None and took - cut_at <= TAKEOVER,
         f"{holder} cut off from PostgreSQL: {other} polls for alice within {TAKEOVER} s",
         took and round(took - cut_at, 2))
    if took:
        print(f"# takeover after a partition: {took - cut_at:.2f} s", flush=True)
    last = mine[-1] - cut_at if mine else 0.0
    t.ok(last <= FENCE + 2 and (took is None or all(at < took for at in mine)),
         f"and {holder} stopped polling by itself within its fence ({FENCE} s), "
         f"before {other} began", f"last poll {last:.2f} s after the cut")
    both_get_mail(t, nodes, tabs, "after the partition healed")


def webpush_listen_lost(t, nodes):
    """The holder's listening connection is lost, and a device subscribes
    on the other node before it listens again (BUS_RETRY_MS, 1 s): the
    message is lost, but listening again the holder reads the stored
    subscriptions and pushes the device's new mail."""
    holder, c, keys = on_follower(t, nodes, "again")
    ended = nodes.pg.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                          f" WHERE application_name = '{holder}' AND query LIKE 'LISTEN%'")
    time.sleep(0.1)
    r = c.request("PUT", "/api/webpush", {"endpoint": nodes.ps.url("/while-deaf"),
                                          "keys": {"p256dh": keys["p256dh"],
                                                   "auth": keys["auth"]}})
    t.ok(ended.startswith("t") and r.status == 204,
         f"{holder}'s listening connection ended, a device subscribes on the other node",
         (ended, r.status))
    time.sleep(3)               # listening again after 1 s, the rows read
    nodes.a.cyrus.deliver(ALICE, message("to the device, told while deaf"))
    pushed = nodes.ps.wait(1, POLL + 1 + MARGIN, "/while-deaf")
    t.ok(len(pushed) == 1, f"listening again, the holder ({holder}) pushes its new mail",
         len(pushed))


def db_frozen(t, nodes, tabs):
    """pushd never waits for the database on its loop: with PostgreSQL
    frozen (every process SIGSTOPped, as a server that stopped answering),
    a new tab opened on the holder waits for its session, and meanwhile
    the holder's own tab still gets new mail at its next poll; the new
    tab opens once the database is back, and the follower's gets the mail
    then (NOTIFY)."""
    got = holder_since(nodes.proxy, ALICE, time.monotonic() - POLL - 1, POLL + MARGIN)
    t.ok(got is not None, "a node polls for alice", got)
    holder = got[1] if got else "node-a"
    follower = "node-b" if holder == "node-a" else "node-a"
    # Less than PUSHD_LEASE_FENCE_MS (6 s) minus a renewal's 3 s: the
    # holder keeps its channel; a poll (every 2 s) falls within.
    hold = 3.0
    opened = []
    frozen_at = time.monotonic()
    nodes.pg.freeze()
    try:
        late = threading.Thread(target=lambda: opened.append(
            Stream(nodes.by_name(holder).port, tabs.cookie, "types=*")))
        late.start()
        time.sleep(0.5)         # its request is at pushd, its lookup out
        nodes.a.cyrus.deliver(ALICE, message("database frozen"))
        ev = tabs.on[holder].wait(is_state, hold - (time.monotonic() - frozen_at))
        at = time.monotonic() - frozen_at
        still_waiting = not opened
    finally:
        nodes.pg.freeze(False)
    t.ok(ev is not None and at < hold and still_waiting,
         f"PostgreSQL frozen: with a new tab waiting for its session, the holder's "
         f"({holder}) tab gets new mail within {hold:.0f} s, before the database is back",
         f"{ev} after {at:.2f} s; the new tab answered meanwhile: {not still_waiting}")
    print(f"# new mail with the database frozen: {at:.2f} s", flush=True)
    late.join(15)
    st = opened[0] if opened else None
    t.ok(st is not None and st.status == 200,
         "the new tab opens once the database is back", st and st.status)
    if st:
        st.close()
    ev = tabs.on[follower].wait(is_state, POLL + MARGIN)
    t.ok(ev is not None and ALICE in changed(ev),
         f"and the follower's ({follower}) once it is back", tabs.on[follower].events[-3:])


def on_follower(t, nodes, word):
    """The node holding alice's lease; alice signed in on the other, and a
    device's Web Push keys."""
    got = holder_since(nodes.proxy, ALICE, time.monotonic() - POLL - 1, POLL + MARGIN)
    holder = got[1] if got else "node-a"
    follower = nodes.by_name("node-b" if holder == "node-a" else "node-a")
    c = Client(follower.url)
    t.eq(c.login(ALICE, USERS[ALICE]).status, 200, f"alice signs in on the follower {word}")
    return holder, c, pushservice.subscriber_keys()


def webpush_elsewhere(t, nodes):
    """A device subscribes to Web Push on the node without the lease: the
    holder is told, watches it too, and pushes its new mail."""
    holder, c, keys = on_follower(t, nodes, "too")
    r = c.request("PUT", "/api/webpush", {"endpoint": nodes.ps.url("/elsewhere"),
                                          "keys": {"p256dh": keys["p256dh"], "auth": keys["auth"]}})
    t.eq(r.status, 204, "a device subscribes to Web Push there")
    time.sleep(1)
    nodes.a.cyrus.deliver(ALICE, message("to the device"))
    pushed = nodes.ps.wait(1, POLL + 1 + MARGIN, "/elsewhere")
    t.ok(len(pushed) == 1, f"the holder ({holder}) pushes the new mail to it", len(pushed))


def pg_restart(t, nodes):
    since = time.monotonic()
    nodes.pg.stop_server()
    time.sleep(1)
    nodes.pg.start_server()
    time.sleep(TAKEOVER)
    bad = overlaps(nodes.proxy, ALICE, since, time.monotonic())
    t.ok(not bad, "PostgreSQL restarted: still one node polling at a time", bad[:5])
    t.ok(polls(nodes.proxy, ALICE, time.monotonic() - POLL * 3),
         "and one polls again", polls(nodes.proxy, ALICE, since)[-3:])


def main():
    t = Tap()

    def body(pg):
        root = tempfile.mkdtemp(prefix="postern-leases-")
        ps = None if pushservice.tool_unavailable() else pushservice.PushService()
        nodes = Nodes(pg, root, ps)
        tabs = None
        try:
            nodes.start()
            c = Client(nodes.a.url)
            t.eq(c.login(ALICE, USERS[ALICE]).status, 200, "alice signs in on A")
            since = time.monotonic()
            tabs = Tabs(nodes, c.cookie)
            wait_until(lambda: polls(nodes.proxy, ALICE, since), 10, "a first poll")
            time.sleep(POLL + 1)
            both_get_mail(t, nodes, tabs, "two nodes")
            db_frozen(t, nodes, tabs)
            if ps:
                webpush_elsewhere(t, nodes)
                webpush_listen_lost(t, nodes)
            one_channel(t, nodes, tabs, since)
            holder = killed(t, nodes, tabs)
            frozen(t, nodes, tabs, holder)
            partitioned(t, nodes, tabs)
            pg_restart(t, nodes)
        finally:
            if tabs:
                tabs.close()
            nodes.stop()
            if ps:
                ps.close()
            shutil.rmtree(root, ignore_errors=True)
    return postgres.tap_main(t, body)


if __name__ == "__main__":
    sys.exit(main())
