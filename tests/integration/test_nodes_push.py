#!/usr/bin/env python3
"""Two gateway nodes on one PostgreSQL, following a server that pushes:
the Stalwart-behaviour test server (tests/stalwart) as the upstream of
node A and node B (each its lighttpd, responders and pushd), push_mode
auto, so each account is relayed (one upstream EventSource) until its
PushSubscription is verified, then followed by the subscription. The
server calls push_public_url, which the test routes to node B only: while
A holds alice's lease every callback reaches the node without it.

- A cookie from A works on B's event stream.
- alice's tab on A first: A holds her lease. The PushVerification
  reaches B, which passes it on through PostgreSQL; A verifies: one
  subscription of ours, verified, and no EventSource once it carries.
- Her tab on B follows. A change on the server: its StateChange reaches
  B, is passed on to A, and both tabs get the new state.
- Sampled every second through all of it and while B's pushd stops and
  starts twice: never two EventSources for alice, never two
  subscriptions of ours.
- kill -9 of A's pushd: B takes the lease within 20 s and reuses A's
  verified subscription (the callback now reaches its holder); a change
  after the kill reaches B's tab, and still one subscription.

Skips when PostgreSQL is not installed."""

import os
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
from client import Client  # noqa: E402
from stack import Stack, free_port  # noqa: E402
from stalwart import StalwartTest  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, changed, is_state, wait_for  # noqa: E402

ALICE = "alice@example.test"
PASSWORD = "alice-demo-pass"
PUBLIC = "https://postern.example.test"
MARGIN = 10
TAKEOVER = 20
QUERY = "types=*&ping=5"


class Sampler(threading.Thread):
    """Every second: alice's EventSources and our subscriptions of hers
    at the server; the samples where either passed one."""

    def __init__(self, up, aid):
        super().__init__(daemon=True)
        self.up, self.aid = up, aid
        self.bad, self.n = [], 0
        self.stop_at = None

    def run(self):
        while self.stop_at is None:
            try:
                stats = self.up.control("stats")
            except OSError:
                time.sleep(1)
                continue
            streams = stats.get("eventSource", {}).get(self.aid, 0)
            ours = [s for s in stats.get("push", {}).values()
                    if s.get("account") == self.aid and s.get("exists")
                    and s.get("url", "").startswith(PUBLIC)]
            self.n += 1
            if streams > 1 or len(ours) > 1:
                self.bad.append((time.strftime("%H:%M:%S"), streams, len(ours)))
            time.sleep(1)

    def finish(self):
        self.stop_at = time.monotonic()
        self.join(5)


def ours(up, aid, verified=None):
    return [s for s in up.control("stats").get("push", {}).values()
            if s.get("account") == aid and s.get("exists") and s.get("url", "").startswith(PUBLIC)
            and (verified is None or bool(s.get("verified")) == verified)]


def start(pg, root, port_b):
    up = StalwartTest(os.path.join(root, "up"),
                      args=["--coalesce", "0.2", "--min-ping", "1", "--verify-delay", "2",
                            "--push-route", f"{PUBLIC}=http://127.0.0.1:{port_b}"])
    common = {"state_db": pg.uri, "push_mode": "auto", "push_public_url": PUBLIC,
              "push_poll_interval": "2s", "push_verify_timeout": "15s",
              "push_idle": "4s"}
    a = Stack(os.path.join(root, "a"), upstream=up.url,
              conf_extra={**common, "node_name": "node-a"})
    b = None
    try:
        a.start()
        b_root = os.path.join(root, "b")
        os.makedirs(b_root)
        shutil.copy(os.path.join(a.root, "secret"), os.path.join(b_root, "secret"))
        b = Stack(b_root, upstream=up.url, port=port_b,
                  conf_extra={**common, "node_name": "node-b",
                              "webpush_key_file": os.path.join(a.root, "vapid.pem")})
        b.start()
    except BaseException:
        for s in (b, a):
            if s:
                s.stop()
        up.stop()
        raise
    return up, a, b


def holder(pg):
    return pg.psql("SELECT node FROM push_accounts WHERE lease_until > 0 LIMIT 1")


def main():
    t = Tap()

    def body(pg):
        root = tempfile.mkdtemp(prefix="postern-nodes-push-")
        up = a = b = None
        tabs = []
        sampler = None
        try:
            up, a, b = start(pg, root, free_port())
            aid = up.accounts[ALICE]
            sampler = Sampler(up, aid)
            sampler.start()
            c = Client(a.url)
            t.eq(c.login(ALICE, PASSWORD).status, 200, "alice signs in on A")
            on_a = Stream(a.port, c.cookie, QUERY)
            tabs.append(on_a)
            t.eq(on_a.status, 200, "her tab on A")
            t.ok(wait_for(lambda: holder(pg) == "node-a", 10), "A holds her lease", holder(pg))
            # Verified through B: the server calls B, B passes it to A.
            t.ok(wait_for(lambda: ours(up, aid, verified=True), 15 + MARGIN),
                 "the subscription A made is verified, its verification having reached B",
                 up.control("stats").get("push"))
            t.ok(wait_for(lambda: pg.psql("SELECT mode FROM push_accounts") == "subscription",
                          10), "A follows her by the subscription",
                 pg.psql("SELECT node, mode FROM push_accounts"))
            t.ok(wait_for(lambda: up.control("stats").get("eventSource", {}).get(aid, 0) == 0,
                          10), "and no EventSource of hers is left", up.control("stats"))
            on_b = Stream(b.port, c.cookie, QUERY)
            tabs.append(on_b)
            t.eq(on_b.status, 200, "A's cookie opens her tab on B")
            time.sleep(1)
            st = up.control("deliver", {"account": ALICE, "subject": "through B"})["states"]
            for name, tab in (("A", on_a), ("B", on_b)):
                ev = tab.wait(lambda e: is_state(e) and
                              changed(e).get(aid, {}).get("Email") == st["Email"], MARGIN)
                t.ok(ev is not None, f"the StateChange B got and passed on reaches her tab on {name}",
                     tab.events[-3:])
            t.ok(holder(pg) == "node-a", "A still holds the lease (the change came through B)",
                 holder(pg))
            for i in range(2):
                b.stop_pushd()
                time.sleep(1)
                b.start_pushd()
                time.sleep(2)
            on_b.close()
            on_b = Stream(b.port, c.cookie, QUERY)
            tabs.append(on_b)
            # kill -9 of the holder: B takes over, reusing the subscription.
            killed_at = time.monotonic()
            a.stop_pushd(signal.SIGKILL)
            t.ok(wait_for(lambda: holder(pg) == "node-b", TAKEOVER + MARGIN),
                 f"kill -9 of A's pushd: B holds her lease within {TAKEOVER} s",
                 pg.psql("SELECT node, mode, lease_until FROM push_accounts"))
            took = time.monotonic() - killed_at
            print(f"# takeover after kill -9 (subscription mode): {took:.2f} s", flush=True)
            t.ok(wait_for(lambda: pg.psql("SELECT mode FROM push_accounts") == "subscription",
                          10), "B follows her by the same subscription",
                 pg.psql("SELECT node, mode FROM push_accounts"))
            st = up.control("deliver", {"account": ALICE, "subject": "after the kill"})["states"]
            ev = on_b.wait(lambda e: is_state(e) and
                           changed(e).get(aid, {}).get("Email") == st["Email"], MARGIN)
            t.ok(ev is not None, "a change after the kill reaches her tab on B", on_b.events[-3:])
            t.ok(len(ours(up, aid)) == 1, "one subscription of ours at the server",
                 up.control("stats").get("push"))
            sampler.finish()
            t.ok(sampler.n >= 20 and not sampler.bad,
                 f"never two EventSources nor two subscriptions of hers, sampled every second "
                 f"({sampler.n} samples)", sampler.bad[:5])
            a.start_pushd()
        finally:
            if sampler:
                sampler.finish()
            for tab in tabs:
                tab.close()
            if t.failed:
                for s in (a, b):
                    if s:
                        print("# pushd log tail:\n# " + s.pushd_tail().replace("\n", "\n# "))
            for s in (b, a):
                if s:
                    s.stop()
            if up:
                up.stop()
            shutil.rmtree(root, ignore_errors=True)
    return postgres.tap_main(t, body)


if __name__ == "__main__":
    sys.exit(main())
