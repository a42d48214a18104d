#!/usr/bin/env python3
"""Web Push from pushd, figures for one run on this machine, against a
push service on loopback (tests/harness/pushservice.py) and the test Cyrus
in poll mode (push_poll_interval 1 s). Builds (without sanitizers) into
build/bench unless POSTERN_BUILDDIR names a build:
    python3 bench/webpush.py [mails] [subscriptions]

1. Delay, per mail delivered over LMTP (100 by default, one every 1.5 s,
   above webpush_coalesce = 1 s): from LMTP's answer to the push reaching
   the push service, beside the floor measured for the same mail in the
   same run: its state event reaching a hidden tab of another browser of
   the account (both wait for the same poll; the difference is pushd's
   own work: the lookup, encryption, signature and the HTTPS request).
2. Memory: pushd's VmRSS before and after N subscriptions (1,000 by
   default, sessions of one account), per subscription.
3. CPU: of one push's encryption and VAPID signature alone
   (bench/webpush_cpu.c, against AES-GCM sealing the same payload as the
   floor), and pushd's user+system time over one mail that goes to all N,
   per push (with TLS and HTTP to the push service).
4. Streams with N subscriptions: 100 hidden tabs get one mail's state
   event, first to last, against the same with none.
Loopback only; everything started here is stopped before it returns."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("POSTERN_SRCDIR", SRC)
if "POSTERN_BUILDDIR" not in os.environ:
    os.environ["POSTERN_BUILDDIR"] = os.path.join(SRC, "build", "bench")
    subprocess.run([os.path.join(SRC, "scripts", "build"), os.environ["POSTERN_BUILDDIR"]],
                   check=True)
sys.path.insert(0, os.path.join(SRC, "tests/harness"))
sys.path.insert(0, os.path.join(SRC, "tests/integration"))
from stack import Stack  # noqa: E402
from client import Client  # noqa: E402
from test_pushd import Stream, is_state  # noqa: E402
import pushservice  # noqa: E402

ALICE, PW = "alice@example.test", "alice-demo-pass"


def mail(n):
    return (f"From: Carol <carol@example.test>\r\nTo: {ALICE}\r\nSubject: bench {n}\r\n"
            f"Message-ID: <wpb-{n}-{time.time()}@example.test>\r\n\r\nHi.\r\n").encode()


def status(pid, keys=("VmRSS",)):
    out = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        if k in keys:
            out[k] = int(v.split()[0])
    return out


def cpu_ms(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def subscribe(s, ps, path):
    c = Client.signed_in(s.url, ALICE, PW)
    k = pushservice.subscriber_keys()
    r = c.request("PUT", "/api/webpush", {"endpoint": ps.url(path), "keys": {
        "p256dh": k["p256dh"], "auth": k["auth"]}})
    assert r.status == 204, r
    return c, k


def delay(s, ps, n):
    subscribe(s, ps, "/delay")
    watcher = Client.signed_in(s.url, ALICE, PW)
    tab = Stream(s.port, watcher.cookie, "types=*&visible=0")
    time.sleep(3)
    push_ms, tab_ms = [], []
    for i in range(n):
        have = len(ps.requests("/delay"))
        s.cyrus.deliver(ALICE, mail(i))
        t0 = time.monotonic()
        e = tab.wait(is_state, 10)
        t1 = time.monotonic()
        got = ps.wait(have + 1, 10, "/delay")
        if e is None or len(got) <= have:
            continue
        tab_ms.append((t1 - t0) * 1000)
        push_ms.append((got[have].monotonic - t0) * 1000)
        time.sleep(max(0, 1.5 - (time.monotonic() - t0)))
    tab.close()
    return push_ms, tab_ms


def fan(s, tabs):
    """One mail's state event to every tab: first to last, ms."""
    t0 = time.monotonic()
    s.cyrus.deliver(ALICE, mail("fan"))
    when = []
    for st in tabs:
        if st.wait(is_state, 20) is not None:
            when.append(time.monotonic())
    return len(when), (max(when) - t0) * 1000 if when else None


def crypto_cpu(rounds=2000):
    """bench/webpush_cpu.c, built against this build's libraries."""
    build = os.environ["POSTERN_BUILDDIR"]
    out = os.path.join(tempfile.mkdtemp(prefix="postern-perf-cpu-"), "webpush_cpu")
    libs = subprocess.run(["pkg-config", "--libs", "libssl", "libcrypto", "json-c", "libcurl",
                           "sqlite3", "libpq", "zlib"], capture_output=True, text=True,
                          check=True).stdout.split()
    subprocess.run(["cc", "-O2", "-I", os.path.join(SRC, "shared"), "-I", os.path.join(SRC, "pushd"),
                    "-o", out, os.path.join(SRC, "bench", "webpush_cpu.c"),
                    os.path.join(build, "pushd", "libpushd.a"),
                    os.path.join(build, "shared", "libpostern.a")] + libs, check=True)
    r = json.loads(subprocess.run([out, str(rounds)], capture_output=True, text=True,
                                  check=True).stdout)
    print(f"cpu, encryption + signature only ({r['rounds']} rounds): encrypt "
          f"{r['encrypt_us']:.0f} us, VAPID {r['vapid_us']:.0f} us, together "
          f"{r['encrypt_us'] + r['vapid_us']:.0f} us; floor (AES-GCM sealing of the same "
          f"payload) {r['floor_us']:.2f} us: "
          f"{(r['encrypt_us'] + r['vapid_us']) / r['floor_us']:.0f}x")


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    subs = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    root = tempfile.mkdtemp(prefix="postern-perf-webpush-")
    ps = pushservice.PushService()
    s = Stack(root, seed=False, conf_extra={
        "api_budget": "0", "push_mode": "poll", "push_poll_interval": "1s",
        "webpush_coalesce": "1s", "webpush_ca_file": ps.ca_file,
        "webpush_allow_loopback_for_tests": "yes", "log_level": "warning",
        "push_streams_per_session": "0", "push_streams_per_ip": "0"})
    s.start()
    try:
        print(f"# machine: {os.uname().nodename}, {os.cpu_count()} cores, "
              f"load {open('/proc/loadavg').read().split()[0]}")
        crypto_cpu()
        push_ms, tab_ms = delay(s, ps, n)
        extra = [p - t for p, t in zip(push_ms, tab_ms)]
        print(f"delay, {len(push_ms)} mails: push p50 {statistics.median(push_ms):.0f} ms, "
              f"p99 {pct(push_ms, 99):.0f} ms; floor (a tab's event, same poll) "
              f"p50 {statistics.median(tab_ms):.0f} ms, p99 {pct(tab_ms, 99):.0f} ms; "
              f"pushd's own part p50 {statistics.median(extra):.0f} ms, p99 {pct(extra, 99):.0f} ms")
        pid = s.pushd.pid
        viewer = Client.signed_in(s.url, ALICE, PW)
        tabs = [Stream(s.port, viewer.cookie, "types=*&visible=0") for _ in range(100)]
        time.sleep(2)
        got0, fan0 = fan(s, tabs)
        rss0 = status(pid)["VmRSS"]
        t0 = time.monotonic()
        for i in range(subs):
            subscribe(s, ps, f"/s{i}")
        t_sub = time.monotonic() - t0
        time.sleep(3)
        rss1 = status(pid)["VmRSS"]
        print(f"memory: pushd VmRSS {rss0} KiB with 100 tabs, {rss1} KiB with {subs} "
              f"subscriptions more: {(rss1 - rss0) * 1024 / subs:.0f} bytes per subscription "
              f"({subs} sign-ins and PUTs took {t_sub:.1f} s)")
        have = len(ps.requests())
        c0 = cpu_ms(pid)
        got1, fan1 = fan(s, tabs)
        ps.wait(have + subs, 120)
        time.sleep(1)
        pushes = len(ps.requests()) - have
        c1 = cpu_ms(pid)
        print(f"cpu: {pushes} pushes for one mail, pushd {c1 - c0:.0f} ms of CPU: "
              f"{(c1 - c0) / max(pushes, 1):.2f} ms per push (with the poll and 100 tabs' event)")
        print(f"streams: one mail to 100 tabs, first to last from LMTP's answer: "
              f"{fan0:.0f} ms ({got0} tabs) with no subscription, {fan1:.0f} ms ({got1} tabs) "
              f"with {subs}: ratio {fan1 / fan0:.2f}")
        for st in tabs:
            st.close()
    finally:
        s.stop()
        ps.close()


if __name__ == "__main__":
    main()
