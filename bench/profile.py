#!/usr/bin/env python3
"""Profiles one kind of postern request on the foundation set-up.

    python3 bench/profile.py [--tool perf|callgrind] [--what relay|login]
                             [--seconds 5] [--conns 4] [--requests 300]
                             [--rev HEAD | --worktree]

Starts the stand-in and postern (FastCGI) as bench/foundation.py does and
signs in. Then, for the responder that serves the request (postern-jmap for
relay, postern-auth for login):

  perf       records the running processes with `perf record -g` while wrk
             drives them (--seconds, --conns) and prints `perf report` by
             shared object and by symbol (self time; Debian: linux-perf);
  strace     counts the responders' system calls per request (strace -c);
  callgrind  runs the responders under `valgrind --tool=callgrind` (through
             a wrapper in a private copy of the build's fcgi/ folder), warms
             up, zeroes the counters, sends --requests requests one after
             another, dumps, and prints callgrind_annotate inclusive and
             self instruction counts per request.

Everything it starts is stopped on the way out.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import foundation as fb  # noqa: E402


def callgrind_builddir(tmp, build, what):
    """A copy of the build's layout whose responder runs under callgrind."""
    wrapped = "postern-jmap" if what == "relay" else "postern-auth"
    d = os.path.join(tmp, "cgbuild")
    os.makedirs(os.path.join(d, "fcgi"))
    os.symlink(os.path.join(build, "cgi-bin"), os.path.join(d, "cgi-bin"))
    for prog in os.listdir(os.path.join(build, "fcgi")):
        real = os.path.join(build, "fcgi", prog)
        if not os.access(real, os.X_OK) or os.path.isdir(real):
            continue
        path = os.path.join(d, "fcgi", prog)
        if prog == wrapped:
            with open(path, "w") as f:
                f.write("#!/bin/sh\nexec valgrind -q --tool=callgrind "
                        f"--callgrind-out-file={tmp}/callgrind.out.%p {real} \"$@\"\n")
            os.chmod(path, 0o755)
        else:
            os.symlink(real, path)
    return d


def callgrind(args, tmp, st, cookie, pids, name):
    def one():
        if args.what == "relay":
            fb.check_jmap(st.port, "/api/jmap", cookie)
        else:
            fb.sign_in(st.port)

    for _ in range(50):
        one()
    # the valgrind processes: lighttpd's children, or their children after exec
    subprocess.run(["callgrind_control", "-z"] + [str(p) for p in pids],
                   check=True, capture_output=True)
    for _ in range(args.requests):
        one()
    subprocess.run(["callgrind_control", "-d"] + [str(p) for p in pids],
                   check=True, capture_output=True)
    time.sleep(1)
    dumps = sorted(f for f in os.listdir(tmp) if f.startswith("callgrind.out.") and
                   not f.split(".")[-1].isdigit() or f.count(".") > 2)
    dumps = [os.path.join(tmp, f) for f in os.listdir(tmp)
             if f.startswith("callgrind.out.") and os.path.getsize(os.path.join(tmp, f)) > 0]
    total = 0
    for d in dumps:
        with open(d) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    total += int(line.split()[1])
                    break
    print(f"# {args.what}: {args.requests} requests, {len(dumps)} dumps, "
          f"{total:,} instructions in {name} = {total / args.requests:,.0f} per request")
    for d in dumps:
        print(f"## {d}")
        for extra in (["--inclusive=yes"], ["--inclusive=no"]):
            out = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=95"] + extra + [d],
                                 capture_output=True, text=True).stdout
            print("\n".join(out.splitlines()[:70]))
            print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tool", choices=("perf", "callgrind", "strace"), default="perf")
    ap.add_argument("--what", choices=("relay", "login"), default="relay")
    ap.add_argument("--requests", type=int, default=300, help="callgrind: requests measured")
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--conns", type=int, default=4)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--rev", default="HEAD")
    g.add_argument("--worktree", action="store_true")
    ap.add_argument("--builddir")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--callers", action="store_true", help="also print call graphs")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not 1 <= args.seconds <= 60:
        ap.error("--seconds 1..60")
    package = {"perf": "linux-perf", "callgrind": "valgrind", "strace": "strace"}[args.tool]
    if not shutil.which("valgrind" if args.tool == "callgrind" else args.tool):
        sys.exit(f"{args.tool} is not installed (apt-get install -y {package})")

    procs = fb.Procs()
    tmp = tempfile.mkdtemp(prefix="postern-prof-")
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        src, build, desc = fb.prepare_source(args, tmp)
        os.environ["POSTERN_SRCDIR"] = src
        if args.tool == "callgrind":
            build = callgrind_builddir(tmp, build, args.what)
        os.environ["POSTERN_BUILDDIR"] = build
        sys.path.insert(0, os.path.join(src, "tests", "harness"))
        from stack import Stack  # noqa: E402

        standin, sport = fb.start_standin(tmp, procs)
        st = fb.start_stack(Stack, os.path.join(tmp, "fcgi"), "fcgi", sport, procs)
        cookie = fb.sign_in(st.port)
        fb.check_jmap(st.port, "/api/jmap", cookie)
        if args.what == "relay":
            lua = fb.write_lua(os.path.join(tmp, "p.lua"), fb.JMAP_BODY, cookie)
            url, name = st.url + "/api/jmap", "postern-jmap"
        else:
            lua = fb.write_lua(os.path.join(tmp, "p.lua"), fb.LOGIN_BODY)
            url, name = st.url + "/api/auth/login", "postern-auth"
        pids = fb.responders(st, name)
        if args.tool == "callgrind":
            callgrind(args, tmp, st, cookie, pids, name)
            return 0
        fb.wrk(url, lua, args.conns, 1, 2)  # warm-up
        if args.tool == "strace":
            out = os.path.join(tmp, "strace.txt")
            tr = subprocess.Popen(["strace", "-c", "-f", "-o", out] +
                                  [a for p in pids for a in ("-p", str(p))],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.add("strace", lambda: fb.stop_popen(tr, signal.SIGINT, 30))
            time.sleep(1)
            r = fb.wrk(url, lua, args.conns, 1, args.seconds)
            procs.stop("strace")
            print(f"# {desc}: {args.what}, {r['requests']} requests (traced, slow), "
                  f"non-2xx {r['non2xx']}; system calls of {name} per request:")
            with open(out) as f:
                for line in f:
                    m = line.split()
                    if len(m) >= 5 and m[3].isdigit():
                        print(f"  {int(m[3]) / r['requests']:6.2f}  {m[-1]:<16} "
                              f"({float(m[1]):.3f} s in all, under ptrace)")
            return 0
        data = os.path.join(tmp, "perf.data")
        perf = subprocess.Popen(["perf", "record", "-q", "-g", "-F", "2999", "-o", data,
                                 "-p", ",".join(map(str, pids))],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.add("perf", lambda: fb.stop_popen(perf, signal.SIGINT, 30))
        time.sleep(0.5)
        r = fb.wrk(url, lua, args.conns, 1, args.seconds,
                   fb.SummingMeter({f"{name}#{i}": (p, "own") for i, p in enumerate(pids)},
                                   name))
        procs.stop("perf")
        print(f"# {desc}: {args.what}, {r['requests']} requests at {args.conns} "
              f"connections, {r['rps']:,.0f}/s, non-2xx {r['non2xx']}, "
              f"{name} CPU {r['cpu_us_per_req'][name]:.1f} µs per request")
        common = ["perf", "report", "-i", data, "--stdio", "--percent-limit", "0.7"]
        for extra in (["--no-children", "--sort", "dso", "-g", "none"],
                      ["--no-children", "--sort", "dso,symbol", "-g", "none"],
                      ["--children", "--sort", "symbol", "-g", "none"]):
            out = subprocess.run(common + extra, capture_output=True, text=True).stdout
            print("\n".join(line for line in out.splitlines()
                            if line and not line.startswith("#") or line.startswith("# Overhead")))
            print()
        if args.callers:
            out = subprocess.run(common + ["--no-children", "-g", "caller,0.5,callee,function,percent"],
                                 capture_output=True, text=True).stdout
            print(out)
    except KeyboardInterrupt:
        return 130
    finally:
        procs.stop_all()
        if args.keep:
            print(f"kept {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
