#!/usr/bin/env python3
"""Held event streams, pushd against the floor, side by side in one run.

    python3 bench/streams.py [--streams 1000,5000,10000,15000] [--builddir DIR]

For each N, the same lighttpd (conf/lighttpd.conf with more descriptors,
and server.max-worker 4 when one process could not hold 2 N descriptors)
passes N held GET /api/events streams (mod_fastcgi, Unix socket) to
  (a) floor: bench/ssefloor.c, a do-nothing FastCGI SSE server (built here
      with cc -O2), on pushd's socket path;
  (b) pushd: DIR/pushd/pushd in poll mode against the test Cyrus (Stack).
Each phase starts lighttpd and its daemon afresh, warms 50 streams, takes a
snapshot, opens N more (in batches, each waited for), waits 2 s, and takes
another: per stream, the daemon's Pss, the Pss of all lighttpd processes
(from /proc/<pid>/smaps_rollup), and the kernel's Slab and SUnreclaim
(/proc/meminfo). Then one change goes to all streams: SIGUSR1 to the floor,
one mail delivered over LMTP for pushd; reported as the time from the first
stream that got it to the last (and from the trigger for the floor).

The clients run in this process on the same machine, so the kernel figures
include the client side's TCP sockets. A baseline measures N loopback TCP
connections to a trivial listener (both ends: a TCP pair); half of it per
stream is taken as the client side's share and subtracted ("kernel, server
side"). DIR defaults to build/bench (scripts/build build/bench).

Diagnostics (the floor's answer; see bench/ssefloor.c): --floor-only skips
pushd; SSEFLOOR_PUSHD_HEADERS=1 in the environment makes the floor answer
with pushd's header set and first body bytes in one record, and
SSEFLOOR_SPLIT=1 sends "Status: 200 OK" in a record and a send of its own
first, as pushd does.
Loopback only; everything started here is stopped before it returns.
"""

import argparse
import os
import random
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
WARM = 50
BATCH = 500


def kib(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            rest = st[st.rindex(")") + 2:].split()
            if int(rest[1]) == pid:
                out.append((int(d), st[st.index("(") + 1:st.rindex(")")]))
    return out


def lighttpd_pss(master):
    pids = [master] + [p for p, comm in children(master) if comm == "lighttpd"]
    return sum(kib(f"/proc/{p}/smaps_rollup", "Pss") for p in pids), len(pids)


def snapshot(daemon_pid, lighttpd_pid):
    light, nproc = lighttpd_pss(lighttpd_pid)
    return {
        "daemon": kib(f"/proc/{daemon_pid}/smaps_rollup", "Pss"),
        "lighttpd": light,
        "slab": kib("/proc/meminfo", "Slab"),
        "sunreclaim": kib("/proc/meminfo", "SUnreclaim"),
        "lighttpd_procs": nproc,
    }


def read_until(sel, socks, marker, timeout):
    """Reads every socket until its data holds marker: the monotonic times
    when the first and the last one did, and how many did."""
    t0 = time.monotonic()
    pending = set(socks)
    first = last = None
    while pending and time.monotonic() - t0 < timeout:
        for key, _ in sel.select(0.5):
            data = key.data
            try:
                chunk = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                pending.discard(key.fileobj)
                sel.unregister(key.fileobj)
                continue
            data += chunk
            if key.fileobj in pending and marker in data:
                pending.discard(key.fileobj)
                now = time.monotonic()
                first = now if first is None else first
                last = now
    return first, last, len(socks) - len(pending)


def open_streams(port, cookie, n, sel, marker):
    req = (f"GET /api/events?types=*&ping=300 HTTP/1.0\r\nHost: 127.0.0.1\r\n"
           f"Cookie: postern_session={cookie}\r\n\r\n").encode()
    socks, ok = [], 0
    for start in range(0, n, BATCH):
        batch = []
        for _ in range(min(BATCH, n - start)):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(req)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, bytearray())
            batch.append(s)
        socks += batch
        ok += read_until(sel, batch, marker, 60)[2]
    return socks, ok


def workers_for(n):
    # lighttpd holds two descriptors a stream (client, backend).
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 1 if 2 * (n + WARM) + 512 < hard else 4


def quiet_port():
    """A free loopback port below the ephemeral range: lighttpd is started
    again for every N, and a port from that range may meanwhile be the
    local end of someone's outgoing connection (then bind fails)."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low = int(f.read().split()[0])
    for _ in range(100):
        port = random.randrange(max(1024, low - 12000), low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port below the ephemeral range")


def start_lighttpd(stack, n, tries=3):
    """lighttpd for N streams; when it does not start (its port taken
    meanwhile), again on another port."""
    for _ in range(tries):
        workers = launch_lighttpd(stack, n)
        if workers:
            return workers
        # (lighttpd says why on its stderr, before its error log is open)
        stack.port = quiet_port()
        stack.url = f"http://127.0.0.1:{stack.port}"
    raise RuntimeError("lighttpd did not start:\n" + stack.log_tail())


def launch_lighttpd(stack, n):
    """Starts lighttpd; its worker count, or 0 when it did not start."""
    stack.stop_lighttpd()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    workers = workers_for(n)
    shipped = stack.lighttpd_conf()
    conf = os.path.join(os.path.dirname(shipped), "lighttpd-bench.conf")
    with open(conf, "w") as f:
        f.write(f'include "{os.path.basename(shipped)}"\n')
        # := replaces what the shipped lighttpd.conf sets.
        f.write(f"server.max-fds := {hard}\n")
        f.write(f"server.max-connections := {(hard - 256) // 2}\n")
        if workers > 1:
            f.write(f"server.max-worker = {workers}\n")
    with open(stack.error_log, "ab") as log:
        stack.lighttpd = subprocess.Popen(["lighttpd", "-D", "-f", conf],
                                          stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=log, start_new_session=True)
    end = time.monotonic() + 15
    while time.monotonic() < end:
        if stack.lighttpd.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", stack.port), timeout=0.5).close()
            time.sleep(0.3)
            if stack.lighttpd.poll() is None:
                return workers
            break
        except OSError:
            time.sleep(0.05)
    stack.stop_lighttpd()
    return 0


def kill_lighttpd(stack):
    pgid = stack.lighttpd.pid if stack.lighttpd else None
    stack.stop_lighttpd()
    if pgid:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        # Its workers hold the listening socket until they are gone.
        end = time.monotonic() + 15
        while time.monotonic() < end:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        while time.monotonic() < end:
            try:
                socket.create_connection(("127.0.0.1", stack.port), timeout=0.5).close()
                time.sleep(0.05)
            except OSError:
                break


LISTENER = r"""
import os, resource, selectors, socket, sys
h = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (h, h))
ls = socket.socket(); ls.bind(("127.0.0.1", 0)); ls.listen(4096)
print(ls.getsockname()[1], flush=True)
held = []
while True:
    c, _ = ls.accept()
    held.append(c)
"""


def tcp_baseline(n):
    """Kernel Slab per loopback TCP connection (both ends), to a listener
    that only accepts and holds."""
    p = subprocess.Popen([sys.executable, "-c", LISTENER], stdout=subprocess.PIPE,
                         start_new_session=True)
    socks = []
    try:
        port = int(p.stdout.readline())
        time.sleep(1)
        s0 = kib("/proc/meminfo", "Slab"), kib("/proc/meminfo", "SUnreclaim")
        for _ in range(n):
            socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        time.sleep(2)
        s1 = kib("/proc/meminfo", "Slab"), kib("/proc/meminfo", "SUnreclaim")
        return (s1[0] - s0[0]) * 1024 / n, (s1[1] - s0[1]) * 1024 / n
    finally:
        for s in socks:
            s.close()
        p.kill()
        p.wait()


def phase(name, stack, n, daemon_pid, cookie, open_marker, trigger, event_marker):
    sel = selectors.DefaultSelector()
    socks = []
    try:
        warm, _ = open_streams(stack.port, cookie, WARM, sel, open_marker)
        socks += warm
        time.sleep(2)
        before = snapshot(daemon_pid, stack.lighttpd.pid)
        t0 = time.monotonic()
        more, ok = open_streams(stack.port, cookie, n, sel, open_marker)
        socks += more
        opened = time.monotonic() - t0
        time.sleep(2)
        after = snapshot(daemon_pid, stack.lighttpd.pid)
        for key in list(sel.get_map().values()):
            key.data.clear()
        t_trigger = trigger()
        first, last, got = read_until(sel, socks, event_marker, 60)
        time.sleep(2)
        post = snapshot(daemon_pid, stack.lighttpd.pid)
        r = {k: (after[k] - before[k]) * 1024 / n for k in
             ("daemon", "lighttpd", "slab", "sunreclaim")}
        r.update({"ev_" + k: (post[k] - before[k]) * 1024 / n for k in
                  ("daemon", "lighttpd", "slab", "sunreclaim")})
        r.update(name=name, n=n, ok=ok, got=got, opened=opened,
                 procs=after["lighttpd_procs"],
                 spread=(last - first) if got else None,
                 from_trigger=(last - t_trigger) if got and t_trigger else None)
        print(f"  {name:6} N={n}: {ok} open in {opened:.1f} s, "
              f"{r['daemon']:.0f} B daemon, {r['lighttpd']:.0f} B lighttpd "
              f"({r['procs']} procs), slab {r['slab']:.0f} B "
              f"(SUnreclaim {r['sunreclaim']:.0f} B); event to {got}: "
              f"first-to-last {1000 * r['spread'] if got else float('nan'):.0f} ms; "
              f"after it: {r['ev_daemon']:.0f} B daemon, {r['ev_lighttpd']:.0f} B "
              f"lighttpd, slab {r['ev_slab']:.0f} B",
              flush=True)
        return r
    finally:
        for s in socks:
            s.close()
        sel.close()


def measure(ns, builddir, floor_hello=False, floor_only=False):
    """Runs the floor and pushd at each N; returns [(floor, pushd)] (pushd
    None with floor_only). Raises ValueError when N exceeds what one
    process may hold here."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if max(ns) + WARM + 256 > hard:
        raise ValueError(f"N up to {hard - WARM - 256} here (RLIMIT_NOFILE {hard})")
    os.environ["POSTERN_BUILDDIR"] = os.path.abspath(builddir)
    os.environ.setdefault("POSTERN_SRCDIR", TOP)
    sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
    from client import Client
    from stack import Stack
    import demo_mail

    root = tempfile.mkdtemp(prefix="postern-bench-streams-")
    floor_bin = os.path.join(root, "ssefloor")
    subprocess.run(["cc", "-O2", "-o", floor_bin, os.path.join(HERE, "ssefloor.c")],
                   check=True)
    # Every stream is one session's, from one address: no caps.
    stack = Stack(root, conf_extra={"push_mode": "poll", "push_poll_interval": "1s",
                                       "log_level": "warning",
                                       "push_streams_per_session": "0",
                                       "push_streams_per_ip": "0"})
    floor = None
    results = []
    login = "alice@example.test"
    try:
        stack.start()
        c = Client(stack.url)
        if c.login(login, dict(demo_mail.DEMO_USERS)[login]).status != 200:
            raise RuntimeError("sign-in failed")
        cookie = c.cookie
        stack.stop_lighttpd()
        stack.stop_pushd()
        stack.port = quiet_port()
        stack.url = f"http://127.0.0.1:{stack.port}"
        for n in ns:
            print(f"N = {n} (lighttpd max-worker {workers_for(n)})", flush=True)
            tcp, tcp_unrecl = tcp_baseline(n)
            print(f"  baseline: a loopback TCP pair {tcp:.0f} B slab "
                  f"({tcp_unrecl:.0f} B SUnreclaim)", flush=True)
            # (a) the floor on pushd's socket path, behind the same lighttpd.
            env = dict(os.environ)
            if floor_hello:
                env["SSEFLOOR_HELLO"] = "1"
            floor = subprocess.Popen([floor_bin, stack.pushd_socket], env=env,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
            end = time.monotonic() + 10
            while not stack.pushd_listening() and time.monotonic() < end:
                time.sleep(0.05)
            start_lighttpd(stack, n)

            def kick():
                t = time.monotonic()
                floor.send_signal(signal.SIGUSR1)
                return t
            rf = phase("floor", stack, n, floor.pid, cookie,
                       b"retry:" if floor_hello else b"\r\n\r\n", kick, b"data: x")
            kill_lighttpd(stack)
            floor.terminate()
            floor.wait(10)
            floor = None
            if floor_only:
                rf.update(tcp=tcp, kserver=rf["slab"] - tcp / 2, ev_kserver=rf["ev_slab"] - tcp / 2)
                results.append((rf, None))
                continue
            # (b) pushd, fresh.
            stack.start_pushd()
            start_lighttpd(stack, n)

            def deliver():
                stack.cyrus.deliver(login, b"From: bob@example.test\r\nTo: "
                                    b"alice@example.test\r\nSubject: bench\r\n\r\nhello\r\n")
                return None
            rp = phase("pushd", stack, n, stack.pushd.pid, cookie, b"retry:", deliver,
                       b"event: state")
            kill_lighttpd(stack)
            stack.stop_pushd()
            for r in (rf, rp):
                r["tcp"] = tcp
                r["kserver"] = r["slab"] - tcp / 2
                r["total"] = r["daemon"] + r["lighttpd"] + r["kserver"]
                r["ev_kserver"] = r["ev_slab"] - tcp / 2
                r["ev_total"] = r["ev_daemon"] + r["ev_lighttpd"] + r["ev_kserver"]
            results.append((rf, rp))
    finally:
        if floor and floor.poll() is None:
            floor.kill()
            floor.wait()
        kill_lighttpd(stack)
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", default="1000,5000,10000,15000",
                    help="comma-separated N values")
    ap.add_argument("--floor-hello", action="store_true",
                    help="the floor sends pushd's first body bytes with its headers")
    ap.add_argument("--floor-only", action="store_true")
    ap.add_argument("--builddir", default=os.path.join(TOP, "build", "bench"))
    args = ap.parse_args()
    try:
        results = measure([int(x) for x in args.streams.split(",")], args.builddir,
                          args.floor_hello, args.floor_only)
    except ValueError as e:
        sys.exit(str(e))
    if args.floor_only:
        return
    report(results, "")
    print("\nThe same, measured 2 s after the one event reached every stream "
          "(lighttpd has then passed a body on every stream of both):")
    report(results, "ev_")


def report(results, pre):
    k = 1024.0
    print("\nPer held stream (KiB); kernel = Slab delta; kernel server side = "
          "Slab delta minus half a loopback TCP pair (the client's socket)\n")
    print("| N | server | daemon | lighttpd | kernel (all) | kernel (server side) "
          "| total server side | / floor | fan-out first→last | / floor | tabs in 256 / 512 MiB |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for rf, rp in results:
        for r in (rf, rp):
            ratio = r[pre + "total"] / rf[pre + "total"]
            fr = (r["spread"] / rf["spread"]) if r["spread"] and rf["spread"] else float("nan")
            spread = f"{1000 * r['spread']:.0f} ms" if r["spread"] is not None else "—"
            if r["name"] == "floor" and r["from_trigger"] is not None:
                spread += f" ({1000 * r['from_trigger']:.0f} from SIGUSR1)"
            if r["got"] != r["n"] + WARM:
                spread += f" [{r['got']} of {r['n'] + WARM} got it]"
            g = lambda key: r[pre + key]  # noqa: E731
            print(f"| {r['n']:,} | {r['name']} | {g('daemon') / k:.2f} | "
                  f"{g('lighttpd') / k:.2f} | {g('slab') / k:.2f} | {g('kserver') / k:.2f} | "
                  f"**{g('total') / k:.2f}** | {ratio:.2f} | {spread} | {fr:.2f} | "
                  f"{int(256 * 1024 * 1024 / g('total')):,} / "
                  f"{int(512 * 1024 * 1024 / g('total')):,} |")


if __name__ == "__main__":
    main()
