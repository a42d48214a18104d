#!/usr/bin/env python3
"""A bounded soak on loopback: thousands of held event streams through
lighttpd to pushd, and a steady mix of JMAP, blob and sign-in traffic, for
a fixed time; sampled as it runs; a verdict at the end.

    python3 bench/soak.py [--minutes 10] [--streams 2000] [--sample 10]
                          [--rate 20] [--builddir DIR] [--json FILE]

The upstream is the Stalwart-behaviour test server (tests/stalwart), with
its own rate limits lifted; push_mode is relay (one upstream stream per
account). The stack is tests/harness/stack.py's, with lighttpd given enough
descriptors for the streams. DIR defaults to build/bench: build it without
sanitizers (scripts/build build/bench), since ASan's quarantine grows by
design and would hide a real leak or fake one.

Traffic, spread over the run at --rate requests a second in all:
  jmap     a signed-in tab's Mailbox/get + Email/query through /api/jmap
  blob     a 64 KiB upload, then its download
  signin   sign-in, session check, sign-out
  brute    a wrong password, over and over, for one user: sign-in's
           per-user limit (login_limit_user) is asked to bite, so its
           429s are expected; every other 4xx/5xx, cut answer or closed
           stream is an error
  deliver  a new mail every 5 s, which every held stream is told of
Held streams that end are counted (kind "stream_closed") and reopened.

Every --sample seconds: requests and errors by kind, streams held, RSS
(VmRSS) and open descriptors of pushd, each responder and lighttpd.
Verdict: the first fifth of the run (at least one minute) is warm-up.
Memory is flat when, for every process, the mean RSS of the last third of
the later samples is within max(2 MiB, 5 %) of the mean of the first
third; descriptors do not leak when no process's count at the end is
above its count right after warm-up by more than 4 (a request in flight).
Loopback only; everything started here is stopped before it returns.
"""

import argparse
import json
import os
import random
import resource
import selectors
import shutil
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
sys.path.insert(0, HERE)

ALICE, BOB = "alice@example.test", "bob@example.test"
PASSWORDS = {ALICE: "alice-demo-pass", BOB: "bob-demo-pass"}
USER_LIMIT = 10
BATCH = 250
MIX = (("jmap", 6), ("blob", 2), ("signin", 2), ("brute", 1))


def log(msg):
    print(msg, flush=True)


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def processes(stack):
    """{name: pid} of pushd, lighttpd and the responders it runs."""
    from test_faults import responder_pids  # after main set POSTERN_BUILDDIR
    out = {"pushd": stack.pushd.pid, "lighttpd": stack.lighttpd.pid}
    counts = {}
    for pid, name in sorted(responder_pids(stack.lighttpd.pid).items()):
        counts[name] = counts.get(name, 0) + 1
        out[f"{name}#{counts[name]}"] = pid
    return out


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.ok = {}
        self.errors = {}
        self.expected = {}
        self.samples = []

    def add(self, table, kind):
        with self.lock:
            table[kind] = table.get(kind, 0) + 1


class Streams:
    """Held /api/events streams, read and discarded; ended ones reopened."""

    def __init__(self, port, cookie, n, counters):
        self.port, self.cookie, self.n, self.c = port, cookie, n, counters
        self.sel = selectors.DefaultSelector()
        self.stop = threading.Event()
        self.held = 0
        self.states = 0
        self.req = (f"GET /api/events?types=*&ping=30 HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                    f"Cookie: postern_session={cookie}\r\n\r\n").encode()

    def open_one(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(self.req)
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ, {"head": b"", "ok": False})
        self.held += 1

    def open_all(self):
        for start in range(0, self.n, BATCH):
            for _ in range(min(BATCH, self.n - start)):
                self.open_one()
            self.pump(2.0)

    def pump(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for key, _ in self.sel.select(0.2):
                self.read(key)

    def read(self, key):
        s, st = key.fileobj, key.data
        try:
            data = s.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.sel.unregister(s)
            s.close()
            self.held -= 1
            self.c.add(self.c.errors, "stream_closed" if st["ok"] else "stream_refused")
            if not self.stop.is_set():
                try:
                    self.open_one()
                except OSError:
                    self.c.add(self.c.errors, "stream_connect")
            return
        if not st["ok"]:
            st["head"] += data
            if b"\r\n" in st["head"]:
                st["ok"] = st["head"].startswith(b"HTTP/1.0 200") or \
                    st["head"].startswith(b"HTTP/1.1 200")
                if not st["ok"]:
                    self.c.add(self.c.errors, "stream_status")
                st["head"] = b""
        if b"event: state" in data:
            self.states += 1

    def run(self):
        while not self.stop.is_set():
            self.pump(0.5)

    def close(self):
        self.stop.set()
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()
        self.sel.close()


class Traffic:
    def __init__(self, url, counters, account):
        from client import Client
        self.Client = Client
        self.url = url
        self.c = counters
        self.tab = Client(url, timeout=30)
        r = self.tab.login(ALICE, PASSWORDS[ALICE])
        if r.status != 200:
            raise RuntimeError(f"sign-in failed: {r}")
        self.account = account or r.json()["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        self.blob = os.urandom(64 << 10)

    def check(self, kind, r, want):
        if r.status in want:
            self.c.add(self.c.ok, kind)
        else:
            self.c.add(self.c.errors, f"{kind}_{r.status}")

    def jmap(self):
        r = self.tab.jmap([["Mailbox/get", {"accountId": self.account}, "0"],
                           ["Email/query", {"accountId": self.account, "limit": 20}, "1"]])
        self.check("jmap", r, (200,))

    def blob_round(self):
        r = self.tab.request("POST", f"/api/upload/{self.account}", self.blob,
                             headers={"Content-Type": "application/octet-stream"})
        self.check("upload", r, (200, 201))
        if r.status in (200, 201):
            blob = r.json()["blobId"]
            d = self.tab.request("GET", f"/api/blob/{self.account}/{blob}/f.bin")
            self.check("download", d, (200,))
            if d.status == 200 and d.body != self.blob:
                self.c.add(self.c.errors, "download_mismatch")

    def signin(self):
        c = self.Client(self.url, timeout=30)
        r = c.login(BOB, PASSWORDS[BOB])
        self.check("signin", r, (200,))
        if r.status == 200:
            self.check("session", c.request("GET", "/api/auth/session"), (200,))
            self.check("signout", c.request("POST", "/api/auth/logout"), (200,))

    def brute(self):
        c = self.Client(self.url, timeout=30)
        r = c.login("carol@example.test", "wrong-password")
        if r.status == 429:
            self.c.add(self.c.expected, "signin_rate_limited")
        elif r.status == 401:
            self.c.add(self.c.expected, "signin_wrong_password")
        else:
            self.c.add(self.c.errors, f"brute_{r.status}")

    def one(self, kind):
        try:
            {"jmap": self.jmap, "blob": self.blob_round, "signin": self.signin,
             "brute": self.brute}[kind]()
        except Exception as e:  # a cut or refused connection is an error too
            self.c.add(self.c.errors, f"{kind}_{type(e).__name__}")


def sampler(stack, counters, streams, t0, every, stop):
    while not stop.wait(every):
        procs = processes(stack)
        with counters.lock:
            s = {"t": round(time.monotonic() - t0, 1), "ok": dict(counters.ok),
                 "errors": dict(counters.errors), "expected": dict(counters.expected),
                 "streams": streams.held, "states": streams.states,
                 "rss_kib": {n: status_kib(p, "VmRSS") for n, p in procs.items()},
                 "fds": {n: fds(p) for n, p in procs.items()},
                 "load": os.getloadavg()[0]}
            counters.samples.append(s)
        log(f"t={s['t']:7.1f}s streams={s['streams']} ok={sum(s['ok'].values())} "
            f"errors={s['errors'] or 0} load={s['load']:.1f} "
            f"rss(MiB)=" + ",".join(f"{n}:{(v or 0) / 1024:.1f}"
                                   for n, v in sorted(s['rss_kib'].items())) +
            " fds=" + ",".join(f"{n}:{v}" for n, v in sorted(s['fds'].items())))


def verdict(samples, warm_s):
    later = [s for s in samples if s["t"] >= warm_s]
    out = {"memory_flat": True, "fd_leak": False, "per_process": {}}
    if len(later) < 3:
        out["memory_flat"] = None
        return out
    third = max(1, len(later) // 3)
    names = set(later[0]["rss_kib"]) & set(later[-1]["rss_kib"])
    for n in sorted(names):
        first = [s["rss_kib"].get(n) for s in later[:third]]
        last = [s["rss_kib"].get(n) for s in later[-third:]]
        first = [v for v in first if v]
        last = [v for v in last if v]
        if not first or not last:
            continue
        a, b = sum(first) / len(first), sum(last) / len(last)
        flat = b - a <= max(2048, 0.05 * a)
        f0, f1 = later[0]["fds"].get(n), later[-1]["fds"].get(n)
        leak = f0 is not None and f1 is not None and f1 > f0 + 4
        out["per_process"][n] = {"rss_kib_early": round(a), "rss_kib_late": round(b),
                                 "rss_growth_kib": round(b - a), "flat": flat,
                                 "fds_after_warmup": f0, "fds_end": f1, "fd_leak": leak}
        out["memory_flat"] &= flat
        out["fd_leak"] |= leak
    return out


def main():
    ap = argparse.ArgumentParser(description="A bounded soak of postern on loopback.")
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--streams", type=int, default=2000)
    ap.add_argument("--sample", type=float, default=10, help="seconds between samples")
    ap.add_argument("--rate", type=float, default=20, help="requests a second, in all")
    ap.add_argument("--builddir", default=os.path.join(TOP, "build", "bench"))
    ap.add_argument("--json", help="write the samples and the verdict here")
    args = ap.parse_args()
    os.environ["POSTERN_BUILDDIR"] = os.path.abspath(args.builddir)
    os.environ.setdefault("POSTERN_SRCDIR", TOP)
    # Only now: the harness reads POSTERN_BUILDDIR when it is imported.
    from stack import Stack, free_port
    from streams import start_lighttpd
    from test_pushd_stalwart import Upstream

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard != resource.RLIM_INFINITY and hard < 3 * args.streams + 512:
        sys.exit(f"needs {3 * args.streams + 512} descriptors, the limit is {hard}")
    root = tempfile.mkdtemp(prefix="postern-soak-")
    port = free_port()
    up = Upstream(root, port)
    up.control("config", {"accountRate": 10 ** 9, "anonRate": 10 ** 9, "failBan": 10 ** 9})
    stack = Stack(root, mode="fcgi", upstream=up.url, port=port, conf_extra={
        "push_mode": "relay", "log_level": "warning",
        "login_limit_user": str(USER_LIMIT), "login_limit_ip": "1000000",
        "login_limit_all": "1000000", "login_window": "60s",
        "api_budget": "1000000",
        # Its streams are one session's, from one address: no caps.
        "push_streams_per_session": "0", "push_streams_per_ip": "0"})
    counters = Counters()
    stop = threading.Event()
    streams = None
    try:
        stack.start()
        # bench/streams.py's: conf/lighttpd.conf with descriptors to spare.
        start_lighttpd(stack, args.streams)
        traffic = Traffic(stack.url, counters, None)
        streams = Streams(stack.port, traffic.tab.cookie, args.streams, counters)
        log(f"# opening {args.streams} streams")
        streams.open_all()
        log(f"# {streams.held} streams held; {args.minutes} min of traffic at "
            f"{args.rate}/s; load {os.getloadavg()}")
        t0 = time.monotonic()
        threads = [threading.Thread(target=streams.run, daemon=True),
                   threading.Thread(target=sampler, daemon=True,
                                    args=(stack, counters, streams, t0, args.sample, stop))]
        for th in threads:
            th.start()
        run_traffic(traffic, up, args, t0, stop)
        stop.set()
        streams.stop.set()
        for th in threads:
            th.join(30)
    finally:
        stop.set()
        if streams:
            streams.close()
        alive = {"pushd": stack.pushd and stack.pushd.poll() is None,
                 "lighttpd": stack.lighttpd and stack.lighttpd.poll() is None}
        stack.stop()
        up.stop()
    warm = max(60.0, args.minutes * 60 / 5)
    v = verdict(counters.samples, warm)
    v["alive_at_end"] = alive
    v["errors"] = counters.errors
    v["expected"] = counters.expected
    v["ok"] = counters.ok
    v["warmup_s"] = warm
    v["streams_held"] = args.streams
    v["state_events_seen"] = streams.states if streams else 0
    v["load_avg"] = [round(x["load"], 1) for x in counters.samples[::6]]
    log("# verdict: " + json.dumps(v, indent=1, sort_keys=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "samples": counters.samples, "verdict": v}, f)
    good = v["memory_flat"] and not v["fd_leak"] and not counters.errors and all(alive.values())
    log("# PASS" if good else "# FAIL")
    shutil.rmtree(root, ignore_errors=True)
    return 0 if good else 1


def run_traffic(traffic, up, args, t0, stop):
    """The mix at the asked rate from three workers, and a mail every 5 s."""
    kinds = [k for k, w in MIX for _ in range(w)]
    end = t0 + args.minutes * 60
    workers = 3
    gap = workers / args.rate

    def worker(seed):
        rnd = random.Random(seed)
        next_t = time.monotonic()
        while time.monotonic() < end and not stop.is_set():
            traffic.one(rnd.choice(kinds))
            next_t += gap
            time.sleep(max(0, next_t - time.monotonic()))
    ths = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(workers)]
    for th in ths:
        th.start()
    n = 0
    while time.monotonic() < end:
        time.sleep(min(5, max(0, end - time.monotonic())))
        try:
            up.control("deliver", {"account": ALICE, "subject": f"soak {n}"})
        except OSError:
            traffic.c.add(traffic.c.errors, "deliver")
        n += 1
    for th in ths:
        th.join(60)


if __name__ == "__main__":
    sys.exit(main())
