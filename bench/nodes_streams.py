#!/usr/bin/env python3
"""Held event streams across two gateway nodes on one PostgreSQL: fan-out,
follower lag, takeover after kill -9, pushd's memory per stream on a node
without the lease, and database connections per node.

    python3 bench/nodes_streams.py [--quick] [--json FILE] [--builddir DIR]
        [--streams 10000] [--repeats 3] [--mails 100] [--kills 10]
        [--poll 1] [--only fanout,lag,takeover]

The setup is tests/integration/test_leases.py's Nodes: node A and node B
(each its lighttpd, responders and pushd; node_name node-a and node-b) on
one private PostgreSQL (tests/harness/postgres.py: Unix socket, fsync
off), one Cyrus behind the counting proxy tests/harness/faulty.py, which
tells the nodes apart by pushd's User-Agent ("postern-pushd (node NAME)")
and so shows which node holds alice's lease (the one that polls for her).
Here their postern.conf has state_db straight to PostgreSQL's socket
(whatever relay Nodes may put in between), push_mode = poll,
push_poll_interval and push_poll_visible at --poll seconds (1 s: pushd's
floor between two calls), no stream caps (push_streams_per_session and push_streams_per_ip
0: every stream is one session's, from one address) and log_level
warning; each node's lighttpd is the shipped configuration with more
descriptors, as bench/streams.py starts it (its helpers are used here).
The descriptor limit is raised to 65,536 where allowed, so that one
lighttpd process holds the N streams (two descriptors each); where the
hard limit stays lower (20,000 is too few for 10,000 streams), both nodes
run server.max-worker 4, as bench/streams.py does, on both sides alike
(printed: "lighttpd workers a node"). DIR (default build/bench next to
this folder: scripts/build build/bench) gives pushd and the responders.

Every stream is alice's (one session, signed in once; a cookie from A
works on B). All of them one account, on purpose: one mail delivered over
LMTP is then exactly one change upstream, seen by one poll of the one
holder, on both sides (Cyrus's LMTP delivers to one recipient a
transaction here, and three accounts would be three polls at three
phases, which would measure the polls' phases rather than the fan-out).

1. Fan-out, --streams N (10,000) held GET /api/events?types=* streams:
   (a) one node: all N on A, the lease holder (B runs, idle);
   (b) two nodes: N/2 on A (the holder: its streams are opened first and
       A's poll for alice seen before B's are opened) and N/2 on B, which
       follows (the change reaches it through PostgreSQL's NOTIFY).
   Each side starts with both pushd fresh (SIGTERM, which frees the lease,
   then started again); sides alternate, --repeats times (3), medians
   printed. After the streams are open and quiet for 2 s, one mail is
   delivered; measured from the LMTP answer to the first and to the last
   stream's "event: state", and from the holder's poll that saw the
   change (the last call for alice the proxy passed before the first
   stream got it) to the last stream, which takes the poll's phase out.
   The mail is delivered 0.1 s after a call of the holder for alice, so
   on both sides delivery->first waits about one poll interval (--poll,
   1 s, the same every run): delivery->last is mostly that wait, and its
   ratio two/one, the issue's (goal <= 1.5x), moves little; the ratios of
   holder poll->last and of first->last (the fan-out alone) are printed
   too. The streams are read by this one Python process (selectors, raw
   sockets), so the reader's pace is part of every fan-out time, as in
   bench/streams.py: compare them as ratios.
2. Follower lag: one tab of alice on A (the holder) and one on B; --mails
   (100) mails, each delivered only once both tabs got the previous one's
   event and the holder has polled again, at a random phase of the poll:
   each mail a change of its own. Per mail, B's tab's event time minus
   A's; p50/p99 (nearest rank), and the delivery->event of both tabs.
3. Takeover: with a tab of alice on each node, kill -9 of the holder's
   pushd (the node that polls for her), timed until the other node's first
   call for her reaches the proxy (the lease is 10 s, renewed every 3 s;
   the kill comes at a random point of those 3 s, else every run would
   kill at the same point of them, the script's own pace being steady);
   then the killed pushd is started again, its tab opened again, and 3
   polls' time allowed to settle (one node polling, checked); the next
   run kills the new holder. --kills (10) runs: min/median/max.
4. pushd's memory per held stream, from 1's runs: Pss (/proc/PID/
   smaps_rollup) of each node's pushd after 50 warm-up streams and 2 s,
   then after the node's other streams and 2 s, per stream. B in (b) is
   the node without the lease (N/2 streams of an account it follows; goal
   <= 1 KiB); A in (b) (N/2) and A in (a) (N) are the floor, the holder,
   in the same run.
5. Database connections per node, during 1's first two-node side with
   every stream open: the connections to PostgreSQL's socket, each
   mapped to its client process (ss -xp) and so to a node and a program
   (pushd, or the responders lighttpd started); pg_stat_activity's count
   of client backends besides.

Loopback only (127.0.0.1 and Unix sockets); every wait is bounded; every
process started here is stopped on the way out (try/finally, also on
SIGTERM). --quick: 1,000 streams, 2 repeats, 20 mails, 3 kills. Standard
library and tests/harness only; Python 3.11.
"""

import argparse
import json
import math
import os
import platform
import random
import re
import resource
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True    # nothing left in the source tree

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import streams as sb  # noqa: E402  bench/streams.py: lighttpd, opening, Pss

ALICE = "alice@example.test"
NODES = ("node-a", "node-b")
WARM = 50
OPEN = b"retry:"              # pushd's first body bytes on every stream
STATE = b"event: state"
NOFILE = 65536                # descriptors wanted: one lighttpd worker a node
TAKEOVER_MAX = 40             # s; the bound is 20
FANOUT_MAX = 60               # s for one change to reach every stream
RENEW = 3.0                   # s between a holder's lease renewals


# -- small helpers --------------------------------------------------------------

def now():
    return time.monotonic()


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pct(xs, p):
    """Nearest-rank percentile."""
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]


def ms(x):
    return "—" if x is None else f"{int(round(1000 * x)):,} ms"


def ratio(a, b):
    return None if a is None or not b else a / b


def fx(x, nd=2):
    return "—" if x is None else f"{x:.{nd}f}"


def log(msg):
    print(msg, flush=True)


def machine():
    mem = sb.kib("/proc/meminfo", "MemTotal")
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "mem_gib": round(mem / 1048576, 1),
            "kernel": platform.release(), "python": platform.python_version(),
            "loadavg_start": [round(x, 2) for x in os.getloadavg()]}


def raise_nofile():
    """Soft and hard descriptor limits as high as allowed, up to NOFILE
    (root may raise the hard one): lighttpd, pushd and this reader
    inherit them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for want in (max(hard, NOFILE), hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            break
        except (ValueError, OSError):
            continue
    return resource.getrlimit(resource.RLIMIT_NOFILE)[1]


def pss(stack):
    """The Pss of a node's pushd, KiB."""
    return sb.kib(f"/proc/{stack.pushd.pid}/smaps_rollup", "Pss")


def arrivals(sel, socks, marker, timeout):
    """Reads every registered socket until each of socks has marker in
    what it read since its buffer was cleared: {socket: monotonic time it
    did}. Sockets that end are dropped."""
    end = now() + timeout
    pending = set(socks)
    at = {}
    while pending and now() < end:
        for key, _ in sel.select(0.2):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(s)
                pending.discard(s)
                continue
            key.data.extend(chunk)
            if s in pending and marker in key.data:
                at[s] = now()
                pending.discard(s)
    return at


def drain(sel):
    """Whatever the streams have sent so far is read and forgotten; the
    sockets with a state event in it."""
    stray = 0
    while True:
        ready = sel.select(0)
        if not ready:
            break
        for key, _ in ready:
            try:
                chunk = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            key.data.extend(chunk)
    for key in list(sel.get_map().values()):
        if STATE in key.data:
            stray += 1
        key.data.clear()
    return stray


def close_all(sel, socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass
    sel.close()


def message(n):
    return (f"From: carol@example.test\r\nTo: {ALICE}\r\nSubject: nodes bench {n}\r\n"
            f"Message-ID: <nodes-bench-{n}-{time.time()}@example.test>\r\n"
            f"Date: Wed, 02 Dec 2026 10:00:00 +0000\r\n\r\nHello {n}.\r\n").encode()


# -- the two nodes ---------------------------------------------------------------

class Bench:
    def __init__(self, args, pg, root):
        import test_leases
        self.tl = test_leases
        self.args = args
        self.pg = pg
        self.nodes = test_leases.Nodes(pg, root)
        self.cookie = None
        self.mails = 0
        self.db = None

    def stack(self, name):
        return self.nodes.by_name(name)

    def start(self):
        from client import Client
        n = self.nodes
        n.start()
        # Straight to the database's socket, whatever Nodes gave them.
        extra = {"state_db": self.pg.uri,
                 "push_mode": "poll", "push_poll_interval": f"{self.args.poll:g}s",
                 "push_poll_visible": f"{self.args.poll:g}s", "log_level": "warning",
                 "push_streams_per_session": "0", "push_streams_per_ip": "0"}
        for s in (n.a, n.b):
            s.conf_extra.update(extra)
            s.write_conf(s.upstream)
            s.stop_pushd()
            s.start_pushd()
            sb.start_lighttpd(s, self.args.streams + WARM)
        c = Client(n.a.url)
        r = c.login(ALICE, self.tl.USERS[ALICE])
        if r.status != 200:
            raise RuntimeError(f"sign-in on A failed: {r}")
        self.cookie = c.cookie

    def stop(self):
        for s in (self.nodes.a, self.nodes.b):
            if s and s.lighttpd:
                sb.kill_lighttpd(s)
        self.nodes.stop()

    def fresh_pushd(self):
        """Both pushd stopped (each frees its leases) and started again."""
        for s in (self.nodes.a, self.nodes.b):
            s.stop_pushd()
        for s in (self.nodes.a, self.nodes.b):
            s.start_pushd()

    def polls(self, since):
        return self.tl.polls(self.nodes.proxy, ALICE, since)

    def wait_poll(self, node, since, timeout=15):
        """The time of node's first call for alice after since, or None."""
        end = now() + timeout
        while now() < end:
            p = [at for at, n in self.polls(since) if n == node]
            if p:
                return p[0]
            time.sleep(0.05)
        return None

    def deliver(self):
        """One mail to alice over LMTP; the monotonic time of the answer."""
        self.mails += 1
        self.nodes.a.cyrus.deliver(ALICE, message(self.mails))
        return now()

    def open(self, name, n, sel):
        socks, ok = sb.open_streams(self.stack(name).port, self.cookie, n, sel, OPEN)
        if ok != n:
            raise RuntimeError(f"{name}: {ok} of {n} streams opened")
        return socks

    # -- 1 and 4: fan-out, memory -------------------------------------------------

    def fanout(self, two, want_db=False):
        N = self.args.streams
        split = {"node-a": N // 2, "node-b": N - N // 2} if two else {"node-a": N, "node-b": 0}
        self.fresh_pushd()
        time.sleep(1)
        sel = selectors.DefaultSelector()
        by = {"node-a": [], "node-b": []}
        try:
            since = now()
            by["node-a"] += self.open("node-a", min(WARM, split["node-a"]), sel)
            if self.wait_poll("node-a", since) is None:
                raise RuntimeError("node A does not poll for alice: "
                                   f"{self.polls(since)[-5:]}")
            if two:
                by["node-b"] += self.open("node-b", min(WARM, split["node-b"]), sel)
            time.sleep(2)
            p0 = {n: pss(self.stack(n)) for n in NODES}
            t = now()
            by["node-a"] += self.open("node-a", split["node-a"] - len(by["node-a"]), sel)
            opened = {"node-a": now() - t}
            time.sleep(2)
            p1 = {n: pss(self.stack(n)) for n in NODES}
            p2 = p1
            if two:
                t = now()
                by["node-b"] += self.open("node-b", split["node-b"] - len(by["node-b"]), sel)
                opened["node-b"] = now() - t
                time.sleep(2)
                p2 = {n: pss(self.stack(n)) for n in NODES}
            if want_db:
                self.db = db_connections(self.pg, self.nodes)
            # Delivered 0.1 s after a call of the holder for alice (its
            # answer back by then): every run waits about one interval
            # for the poll that sees it, whichever side.
            t_mark = now()
            if self.wait_poll("node-a", t_mark, 2 * self.args.poll + 2) is None:
                raise RuntimeError(f"node A no longer polls: {self.polls(t_mark - 5)}")
            time.sleep(0.1)
            stray = drain(sel)
            t_lmtp = self.deliver()
            socks = by["node-a"] + by["node-b"]
            at = arrivals(sel, socks, STATE, FANOUT_MAX)
            polls = self.polls(t_mark - 2 * self.args.poll - 1)
            nodes_polling = sorted({n for a, n in polls if a >= t_mark})
        finally:
            close_all(sel, by["node-a"] + by["node-b"])
        r = {"side": "two" if two else "one", "n": N, "split": split, "got": len(at),
             "stray_before": stray, "opened_s": opened, "nodes_polling": nodes_polling}
        times = sorted(at.values())
        if times:
            first, last = times[0], times[-1]
            pre = [a for a, n in polls if n == "node-a" and a <= first]
            anchor = pre[-1] if pre else None
            r.update(deliver_first=first - t_lmtp, deliver_last=last - t_lmtp,
                     first_last=last - first,
                     poll_first=(first - anchor) if anchor else None,
                     poll_last=(last - anchor) if anchor else None,
                     poll_after_delivery=(anchor - t_lmtp) if anchor else None)
            for name in NODES:
                mine = sorted(at[s] for s in by[name] if s in at)
                if mine:
                    r[name] = {"got": len(mine), "deliver_first": mine[0] - t_lmtp,
                               "deliver_last": mine[-1] - t_lmtp}
        # Pss per stream, bytes: A over its streams after the warm-up,
        # B (two nodes only) over its own.
        r["pss_b_per_stream"] = {"node-a": (p1["node-a"] - p0["node-a"]) * 1024 /
                                 max(1, split["node-a"] - WARM)}
        if two:
            r["pss_b_per_stream"]["node-b"] = ((p2["node-b"] - p1["node-b"]) * 1024 /
                                               max(1, split["node-b"] - WARM))
        r["pss_kib"] = {"warm": p0, "a_opened": p1, "b_opened": p2}
        hold = "node-a" if nodes_polling == ["node-a"] else f"polling: {nodes_polling}"
        log(f"  {'two nodes' if two else 'one node '}: {r['got']:,} of {N:,} got it; "
            f"delivery->first {ms(r.get('deliver_first'))}, ->last {ms(r.get('deliver_last'))}; "
            f"poll->last {ms(r.get('poll_last'))}; first->last {ms(r.get('first_last'))}; "
            f"pushd Pss/stream " + ", ".join(f"{k[-1].upper()} {v:.0f} B" for k, v in
                                            r["pss_b_per_stream"].items())
            + f"; holder {hold}" + (f"; {stray} stray events" if stray else ""))
        return r

    # -- 2: follower lag ---------------------------------------------------------

    def lag(self):
        P = self.args.poll
        self.fresh_pushd()
        time.sleep(1)
        sel = selectors.DefaultSelector()
        socks = []
        rows, missed, wrong_holder = [], 0, 0
        try:
            since = now()
            ta = self.open("node-a", 1, sel)[0]
            socks.append(ta)
            if self.wait_poll("node-a", since) is None:
                raise RuntimeError("node A does not poll for alice")
            tb = self.open("node-b", 1, sel)[0]
            socks.append(tb)
            time.sleep(P + 1)
            for i in range(self.args.mails):
                # A random phase of the poll, after the holder's next call.
                time.sleep(random.uniform(0, P))
                drain(sel)
                t_mark = now()
                t = self.deliver()
                at = arrivals(sel, [ta, tb], STATE, 5 * P + 10)
                if ta not in at or tb not in at:
                    missed += 1
                    log(f"  mail {i + 1}: {'A' if ta in at else ''}{'B' if tb in at else ''} "
                        "got it (not both)")
                    if len(sel.get_map()) < 2:
                        raise RuntimeError("a tab's stream ended")
                    continue
                if {n for a, n in self.polls(t_mark)} - {"node-a"}:
                    wrong_holder += 1
                rows.append({"holder": at[ta] - t, "follower": at[tb] - t,
                             "lag": at[tb] - at[ta]})
                self.wait_poll("node-a", max(at.values()), 2 * P + 2)
                if (i + 1) % 20 == 0:
                    log(f"  {i + 1} mails: lag p50 {ms(pct([r['lag'] for r in rows], 50))}")
        finally:
            close_all(sel, socks)
        lags = [r["lag"] for r in rows]
        res = {"mails": self.args.mails, "measured": len(rows), "missed": missed,
               "other_node_polled": wrong_holder,
               "lag_p50": pct(lags, 50), "lag_p99": pct(lags, 99), "lag_max": pct(lags, 100),
               "lag_min": pct(lags, 0),
               "holder_p50": pct([r["holder"] for r in rows], 50),
               "holder_p99": pct([r["holder"] for r in rows], 99),
               "follower_p50": pct([r["follower"] for r in rows], 50),
               "follower_p99": pct([r["follower"] for r in rows], 99),
               "samples": rows}
        return res

    # -- 3: takeover ---------------------------------------------------------------

    def takeover(self):
        P = self.args.poll
        settle = 3 * P + 2
        self.fresh_pushd()
        time.sleep(1)
        sel = selectors.DefaultSelector()
        tab = {}
        runs = []
        try:
            since = now()
            tab["node-a"] = self.open("node-a", 1, sel)[0]
            if self.wait_poll("node-a", since) is None:
                raise RuntimeError("node A does not poll for alice")
            tab["node-b"] = self.open("node-b", 1, sel)[0]
            time.sleep(P + 1)
            for i in range(self.args.kills):
                recent = self.polls(now() - 2 * P - 1.5)
                if not recent:
                    raise RuntimeError("nobody polls for alice")
                dead = recent[-1][1]
                alive = "node-b" if dead == "node-a" else "node-a"
                # At a random phase of the holder's renewals (every 3 s):
                # else every run kills at the same point of them.
                time.sleep(random.uniform(0, RENEW))
                t_kill = now()
                self.stack(dead).stop_pushd(signal.SIGKILL)
                got = self.wait_poll(alive, t_kill, TAKEOVER_MAX)
                took = (got - t_kill) if got else None
                # The killed node back, with a tab of hers again.
                try:
                    sel.unregister(tab[dead])
                except (KeyError, ValueError):
                    pass            # its end was read already
                tab[dead].close()
                self.stack(dead).start_pushd()
                tab[dead] = self.open(dead, 1, sel)[0]
                time.sleep(settle)
                drain(sel)
                late = self.polls(now() - 2 * P)
                both = sorted({n for _, n in late})
                runs.append({"killed": dead, "took": took, "polling_after": both})
                log(f"  kill -9 {dead}'s pushd: {alive} polls after "
                    f"{'—' if took is None else f'{took:.2f} s'}; then polling: {both}")
                if took is None:
                    break
        finally:
            close_all(sel, list(tab.values()))
        took = [r["took"] for r in runs if r["took"] is not None]
        return {"kills": len(runs), "timed_out": len(runs) - len(took),
                "min": min(took) if took else None, "median": med(took),
                "max": max(took) if took else None,
                "double_polling_after": sum(1 for r in runs if len(r["polling_after"]) > 1),
                "runs": runs}


# -- 5: database connections -------------------------------------------------------

def db_connections(pg, nodes):
    """Connections to PostgreSQL's socket by node and program, from the
    client ends' processes (ss -xp), and pg_stat_activity's count."""
    path = os.path.join(pg.dir, ".s.PGSQL.5432")
    out = {"by_node": {}, "unmatched": 0}
    try:
        text = subprocess.run(["ss", "-xpn"], capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        out["error"] = str(e)
        text = ""
    peers, owner = set(), {}
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        if f[4] == path:
            peers.add(f[7])
        m = re.search(r"pid=(\d+)", line)
        if m:
            owner[f[5]] = int(m.group(1))
    procs = {}
    for name in NODES:
        s = nodes.by_name(name)
        if s.pushd:
            procs[s.pushd.pid] = (name, "pushd")
        if s.lighttpd:
            for pid, comm in sb.children(s.lighttpd.pid):
                procs[pid] = (name, comm)
    for ino in peers:
        who = procs.get(owner.get(ino))
        if who is None:
            out["unmatched"] += 1
            continue
        node = out["by_node"].setdefault(who[0], {})
        node[who[1]] = node.get(who[1], 0) + 1
    try:
        out["pg_stat_activity"] = int(pg.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
            " AND pid <> pg_backend_pid()") or 0)
    except Exception as e:     # a figure, not a failure
        out["pg_stat_activity_error"] = str(e)
    return out


# -- the run -----------------------------------------------------------------------

def run(args):
    import postgres
    res = {"machine": machine(), "config": {}}
    hard = raise_nofile()
    if args.streams + WARM + 512 > hard:
        sys.exit(f"--streams up to {hard - WARM - 512} here (RLIMIT_NOFILE {hard})")
    res["config"] = {"streams": args.streams, "repeats": args.repeats, "mails": args.mails,
                     "kills": args.kills, "poll_s": args.poll, "nofile": hard,
                     "lighttpd_workers": sb.workers_for(args.streams), "only": sorted(args.only)}
    m = res["machine"]
    log(f"machine: {m['nproc']} cores ({m['cpu'] or 'cpu unknown'}), {m['mem_gib']} GiB, "
        f"Linux {m['kernel']}, Python {m['python']}; load average at start "
        f"{' '.join(str(x) for x in m['loadavg_start'])}")
    rel = os.path.relpath(args.builddir, TOP)
    log(f"build: {rel if not rel.startswith('..') else args.builddir}; "
        f"descriptors {hard}, lighttpd workers a node {sb.workers_for(args.streams)}; "
        f"poll every {args.poll:g} s")
    pg = postgres.Postgres()
    root = tempfile.mkdtemp(prefix="postern-bench-nodes-")
    bench = None
    t_start = now()
    try:
        pg.start()
        bench = Bench(args, pg, root)
        bench.start()
        log(f"two nodes up ({now() - t_start:.0f} s)")
        if "fanout" in args.only:
            log(f"\n1. one change to {args.streams:,} streams, one node against two "
                f"({args.repeats} runs each, alternating)")
            runs = {"one": [], "two": []}
            for i in range(args.repeats):
                t = now()
                runs["one"].append(bench.fanout(False))
                runs["two"].append(bench.fanout(True, want_db=(i == 0)))
                log(f"  (run {i + 1}: {now() - t:.0f} s)")
            res["fanout"] = summarize_fanout(runs)
            res["memory"] = summarize_memory(runs)
            res["db_connections"] = bench.db
        if "lag" in args.only:
            log(f"\n2. follower lag over {args.mails} mails")
            t = now()
            res["lag"] = bench.lag()
            log(f"  ({now() - t:.0f} s)")
        if "takeover" in args.only:
            log(f"\n3. takeover after kill -9 of the holder's pushd, {args.kills} runs")
            t = now()
            res["takeover"] = bench.takeover()
            log(f"  ({now() - t:.0f} s)")
    finally:
        if bench:
            bench.stop()
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)
    res["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    res["duration_s"] = round(now() - t_start, 1)
    return res


KEYS = ("deliver_first", "deliver_last", "poll_last", "first_last")


def summarize_fanout(runs):
    out = {"runs": runs}
    for side, rs in runs.items():
        out[side] = {k: med([r.get(k) for r in rs]) for k in KEYS + ("poll_after_delivery",)}
        out[side]["got_min"] = min(r["got"] for r in rs)
        for name in NODES:
            for k in ("deliver_first", "deliver_last"):
                v = med([r.get(name, {}).get(k) for r in rs])
                if v is not None:
                    out[side][f"{name}_{k}"] = v
    out["ratio"] = {k: ratio(out["two"][k], out["one"][k]) for k in KEYS}
    # The ratio run by run (one and two of the same run), then its median.
    out["ratio_median_of_runs"] = {
        k: med([ratio(b.get(k), a.get(k)) for a, b in zip(runs["one"], runs["two"])])
        for k in KEYS}
    return out


def summarize_memory(runs):
    def per(side, node):
        return med([r["pss_b_per_stream"].get(node) for r in runs[side]])
    N = runs["one"][0]["n"]
    return {"follower_b_two": per("two", "node-b"), "holder_a_two": per("two", "node-a"),
            "holder_a_one": per("one", "node-a"),
            "streams": {"follower_b_two": N - N // 2 - WARM, "holder_a_two": N // 2 - WARM,
                        "holder_a_one": N - WARM}}


def report(res):
    cfg = res["config"]
    N = cfg["streams"]
    print()
    print("=" * 78)
    m = res["machine"]
    print(f"Machine: {m['nproc']} cores, {m['mem_gib']} GiB; load average "
          f"{' '.join(map(str, m['loadavg_start']))} at start, "
          f"{' '.join(map(str, m.get('loadavg_end', [])))} at end; "
          f"run {res.get('duration_s', 0):.0f} s; poll {cfg['poll_s']:g} s; "
          f"lighttpd workers a node {cfg['lighttpd_workers']}")
    f = res.get("fanout")
    if f:
        print(f"\n1. One change to {N:,} streams (alice's; medians of {cfg['repeats']} runs)\n")
        print("| side | got (min) | delivery→first | delivery→last | holder poll→last "
              "| first→last |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for side, label in (("one", f"one node, {N:,} on the holder"),
                            ("two", f"two nodes, {N // 2:,} + {N - N // 2:,}")):
            s = f[side]
            print(f"| {label} | {s['got_min']:,} | {ms(s['deliver_first'])} | "
                  f"{ms(s['deliver_last'])} | {ms(s['poll_last'])} | {ms(s['first_last'])} |")
        r, rr = f["ratio"], f["ratio_median_of_runs"]
        print(f"| **two / one** (of medians; median of per-run ratios) | | "
              f"{fx(r['deliver_first'])} ({fx(rr['deliver_first'])}) | "
              f"**{fx(r['deliver_last'])}** ({fx(rr['deliver_last'])}) | "
              f"**{fx(r['poll_last'])}** ({fx(rr['poll_last'])}) | "
              f"{fx(r['first_last'])} ({fx(rr['first_last'])}) |")
        t = f["two"]
        print(f"\n  two nodes, by node (medians): holder A delivery→first "
              f"{ms(t.get('node-a_deliver_first'))}, →last {ms(t.get('node-a_deliver_last'))}; "
              f"follower B →first {ms(t.get('node-b_deliver_first'))}, "
              f"→last {ms(t.get('node-b_deliver_last'))}")
        print(f"  the holder's poll came {ms(f['one']['poll_after_delivery'])} (one) / "
              f"{ms(t['poll_after_delivery'])} (two) after the delivery (median): "
              "the poll's phase, in delivery→ but not in poll→")
        print("  goal two/one ≤ 1.5")
    mem = res.get("memory")
    if mem:
        s = mem["streams"]
        print("\n4. pushd Pss per held stream (medians)\n")
        print("| node | streams measured | bytes / stream |")
        print("| --- | ---: | ---: |")
        print(f"| B, without the lease (two nodes) | {s['follower_b_two']:,} | "
              f"**{fx(mem['follower_b_two'], 0)}** |")
        print(f"| A, the holder (two nodes; floor) | {s['holder_a_two']:,} | "
              f"{fx(mem['holder_a_two'], 0)} |")
        print(f"| A, the holder (one node; floor) | {s['holder_a_one']:,} | "
              f"{fx(mem['holder_a_one'], 0)} |")
        print("  goal ≤ 1 KiB (1024 B) on the node without the lease")
    lag = res.get("lag")
    if lag:
        print(f"\n2. Follower lag: {lag['measured']} of {lag['mails']} mails measured"
              f" ({lag['missed']} missed)\n")
        print("| | p50 | p99 | min | max |")
        print("| --- | ---: | ---: | ---: | ---: |")
        print(f"| follower's tab after the holder's | **{ms(lag['lag_p50'])}** | "
              f"**{ms(lag['lag_p99'])}** | {ms(lag['lag_min'])} | {ms(lag['lag_max'])} |")
        print(f"| holder's tab, delivery→event | {ms(lag['holder_p50'])} | "
              f"{ms(lag['holder_p99'])} | | |")
        print(f"| follower's tab, delivery→event | {ms(lag['follower_p50'])} | "
              f"{ms(lag['follower_p99'])} | | |")
        if lag["other_node_polled"]:
            print(f"  ({lag['other_node_polled']} mails saw B poll too)")
    tk = res.get("takeover")
    if tk:
        print(f"\n3. Takeover after kill -9 of the holder's pushd, {tk['kills']} runs\n")
        s = lambda x: "—" if x is None else f"{x:.2f} s"  # noqa: E731
        print(f"  min {s(tk['min'])}, median {s(tk['median'])}, max {s(tk['max'])}"
              f"; {tk['timed_out']} over {TAKEOVER_MAX} s; settled with two nodes polling "
              f"{tk['double_polling_after']} times")
        print("  each: " + ", ".join(s(r["took"]) for r in tk["runs"]))
    db = res.get("db_connections")
    if db:
        print("\n5. Database connections per node (two nodes, every stream open)\n")
        for name in NODES:
            d = db["by_node"].get(name, {})
            parts = ", ".join(f"{k} {v}" for k, v in sorted(d.items()))
            print(f"  {name}: {sum(d.values())} ({parts or 'none'})")
        print(f"  not a node's: {db['unmatched']}; pg_stat_activity client backends: "
              f"{db.get('pg_stat_activity', '—')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="1,000 streams, 2 repeats, 20 mails, 3 kills")
    ap.add_argument("--streams", type=int, help="streams in part 1 (10000)")
    ap.add_argument("--repeats", type=int, help="runs of each side in part 1 (3)")
    ap.add_argument("--mails", type=int, help="mails in part 2 (100)")
    ap.add_argument("--kills", type=int, help="kill -9 runs in part 3 (10)")
    ap.add_argument("--poll", type=float, default=1.0, help="push_poll_interval, s (1)")
    ap.add_argument("--only", default="fanout,lag,takeover",
                    help="comma list of fanout (1, 4, 5), lag (2), takeover (3)")
    ap.add_argument("--json", metavar="FILE", help="write every figure there too")
    ap.add_argument("--builddir", default=os.path.join(TOP, "build", "bench"))
    args = ap.parse_args()
    q = args.quick
    for k, full, quick in (("streams", 10000, 1000), ("repeats", 3, 2), ("mails", 100, 20),
                           ("kills", 10, 3)):
        if getattr(args, k) is None:
            setattr(args, k, quick if q else full)
    args.only = set(x.strip() for x in args.only.split(",") if x.strip())
    bad = args.only - {"fanout", "lag", "takeover"}
    if bad:
        ap.error(f"--only: unknown {sorted(bad)}")
    if args.streams < 2 * WARM + 2 or args.repeats < 1 or args.poll < 1:
        ap.error(f"--streams at least {2 * WARM + 2}, --repeats at least 1, --poll at least 1")
    args.builddir = os.path.abspath(args.builddir)
    if not os.access(os.path.join(args.builddir, "pushd", "pushd"), os.X_OK):
        sys.exit(f"no pushd in {args.builddir}: scripts/build build/bench first")
    # The harness reads these when imported.
    os.environ["POSTERN_BUILDDIR"] = args.builddir
    os.environ.setdefault("POSTERN_SRCDIR", TOP)
    sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
    sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
    import postgres
    if not postgres.available():
        sys.exit("PostgreSQL is not installed (scripts/install-deps)")
    res = run(args)
    report(res)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
        print(f"\n(figures in {args.json})")


if __name__ == "__main__":
    main()
