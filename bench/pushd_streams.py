#!/usr/bin/env python3
"""Memory per held event stream, and one event to all of them: N tabs hold
GET /api/events through lighttpd (mod_fastcgi, Unix socket) to pushd, in
poll mode against the test Cyrus.

    python3 bench/pushd_streams.py [--streams 2000] [--builddir DIR]

DIR is an optimised build without sanitizers (default build/pushd-vg, made
with scripts/build). Prints, per stream: pushd's and lighttpd's Pss (from
/proc/<pid>/smaps_rollup) and the kernel's Slab, before and after the N
streams, and how long one state change takes to reach all of them. Loopback
only; the streams are held for a few seconds and closed.
"""

import argparse
import os
import selectors
import signal
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)


def kib(path, key):
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def snapshot(stack):
    return {
        "pushd": kib(f"/proc/{stack.pushd.pid}/smaps_rollup", "Pss"),
        "lighttpd": kib(f"/proc/{stack.lighttpd.pid}/smaps_rollup", "Pss"),
        "slab": kib("/proc/meminfo", "Slab"),
        "sunreclaim": kib("/proc/meminfo", "SUnreclaim"),
    }


def open_streams(port, cookie, n, sel):
    req = (f"GET /api/events?types=*&ping=30 HTTP/1.0\r\nHost: 127.0.0.1\r\n"
           f"Cookie: postern_session={cookie}\r\n\r\n").encode()
    socks = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(req)
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, bytearray())
        socks.append(s)
    return socks


def read_until(sel, socks, marker, timeout):
    """Reads every socket until its data holds marker: seconds until the
    first and the last one did, and how many did."""
    t0 = time.monotonic()
    pending = set(socks)
    first = last = None
    while pending and time.monotonic() - t0 < timeout:
        for key, _ in sel.select(1):
            data = key.data
            try:
                chunk = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            if not chunk:
                pending.discard(key.fileobj)
                sel.unregister(key.fileobj)
                continue
            data += chunk
            if key.fileobj in pending and marker in data:
                pending.discard(key.fileobj)
                now = time.monotonic() - t0
                first = now if first is None else first
                last = now
    return first, last, len(socks) - len(pending)


def lighttpd_for_many(stack, n):
    """The stack's lighttpd again, with descriptors for n streams."""
    stack.stop_lighttpd()
    # lighttpd resolves includes beside the main file: copy them there.
    conf = os.path.join(stack.root, "lighttpd-bench.conf")
    for name in ("lighttpd.conf", "lighttpd-postern.conf"):
        shutil.copy(os.path.join(TOP, "conf", name), stack.root)
    with open(conf, "w") as f:
        f.write('include "lighttpd.conf"\n')
        f.write(f"server.max-fds = {max(4096, 2 * n + 1024)}\n")
        f.write(f"server.max-connections = {n + 512}\n")
    stack.lighttpd = subprocess.Popen(["lighttpd", "-D", "-f", conf],
                                      env=stack.lighttpd_env(),
                                      stdin=subprocess.DEVNULL, start_new_session=True)
    end = time.monotonic() + 15
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", stack.port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("lighttpd did not start:\n" + stack.log_tail())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=2000)
    ap.add_argument("--builddir", default=os.path.join(TOP, "build", "pushd-vg"))
    args = ap.parse_args()
    os.environ["POSTERN_BUILDDIR"] = os.path.abspath(args.builddir)
    os.environ.setdefault("POSTERN_SRCDIR", TOP)
    sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
    from client import Client
    from stack import Stack
    import demo_mail

    n, warm = args.streams, 50
    root = tempfile.mkdtemp(prefix="postern-bench-pushd-")
    stack = Stack(root, conf_extra={"push_poll_interval": "1s", "log_level": "warning"})
    stack.start()
    sel = selectors.DefaultSelector()
    socks = []
    try:
        lighttpd_for_many(stack, n + warm)
        c = Client(stack.url)
        login = "alice@example.test"
        if c.login(login, dict(demo_mail.DEMO_USERS)[login]).status != 200:
            raise RuntimeError("sign-in failed")
        socks += open_streams(stack.port, c.cookie, warm, sel)
        read_until(sel, socks, b"retry:", 30)
        time.sleep(2)      # the first poll and the db writes settle
        before = snapshot(stack)
        more = open_streams(stack.port, c.cookie, n, sel)
        socks += more
        _, last, ok = read_until(sel, more, b"retry:", 120)
        time.sleep(2)
        after = snapshot(stack)
        print(f"{ok} of {n} streams open (all {n} opened in {last:.2f} s)")
        for k in before:
            print(f"{k:>10}: {before[k]:8d} KiB -> {after[k]:8d} KiB, "
                  f"{(after[k] - before[k]) * 1024 / n:8.0f} bytes per stream")
        for key in list(sel.get_map().values()):
            key.data.clear()
        stack.cyrus.deliver(login, b"From: bob@example.test\r\nTo: alice@example.test\r\n"
                            b"Subject: bench\r\n\r\nhello\r\n")
        first, last, got = read_until(sel, socks, b"event: state", 30)
        if got:
            print(f"one state change to all {got} streams: first after {first:.3f} s, "
                  f"last {last - first:.3f} s later")
    finally:
        for s in socks:
            s.close()
        pgid = stack.lighttpd.pid if stack.lighttpd else None
        stack.stop()
        # The responders lighttpd spawned share its process group: make
        # sure none outlives the run.
        if pgid:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    main()
