"""What every part of the suite shares: paths, the build, the machine's
description and load, a CPU meter over process groups, and the JSON file
that keeps every figure between runs (docs/bench/results.json)."""

import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import time

SUITE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(SUITE)
TOP = os.path.dirname(BENCH)
DOCS = os.path.join(TOP, "docs")
OUT = os.path.join(DOCS, "bench")
RESULTS = os.path.join(OUT, "results.json")
sys.path.insert(0, BENCH)
import foundation as fb  # noqa: E402  (wrk, /proc readers, the stand-in)

CLK_TCK = os.sysconf("SC_CLK_TCK")
log = fb.log


def setup_build(builddir):
    """Points the test harness at the source and the build; imports it."""
    os.environ["POSTERN_SRCDIR"] = TOP
    os.environ["POSTERN_BUILDDIR"] = os.path.abspath(builddir)
    harness = os.path.join(TOP, "tests", "harness")
    if harness not in sys.path:
        sys.path.insert(0, harness)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def machine():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1])   # MemTotal, KiB
    return (f"{os.cpu_count()} cores ({cpu}), {mem / 1048576:.0f} GiB, "
            f"Linux {platform.release()}")


def commit():
    try:
        rev = fb.sh(["git", "-C", TOP, "rev-parse", "--short", "HEAD"]).strip()
        dirty = fb.sh(["git", "-C", TOP, "status", "--porcelain",
                       "--untracked-files=no"]).strip()
        return rev + (" with uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def load_results():
    try:
        with open(RESULTS) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def save_results(res):
    os.makedirs(OUT, exist_ok=True)
    tmp = RESULTS + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, RESULTS)


# -- CPU of process groups ------------------------------------------------------

def ticks(pid, what="own"):
    try:
        _, _, own, reaped = fb.proc_stat(pid)
    except (OSError, ValueError):
        return 0
    return {"own": own, "reaped": reaped, "both": own + reaped}[what]


def tree_ticks(root, comm=None):
    """CPU ticks of a process and its children (those named comm), with
    what it reaped: a web server's workers that come and go during a run."""
    total = ticks(root, "both")
    for pid, c in fb.children(root):
        if comm is None or c == comm:
            total += ticks(pid, "both")
    return total


class GroupMeter:
    """CPU seconds of labelled groups over a run, with the interface
    fb.wrk expects (start, stop, machine). Each label maps to a function
    that returns clock ticks now."""

    def __init__(self, groups):
        self.groups = groups
        self.machine = 0.0

    def start(self):
        self.t0 = {k: f() for k, f in self.groups.items()}
        self.m0 = fb.machine_busy()

    def stop(self):
        d = {k: (f() - self.t0[k]) / CLK_TCK for k, f in self.groups.items()
             if f is not REST}
        self.machine = (fb.machine_busy() - self.m0) / CLK_TCK
        for k, f in self.groups.items():
            if f is REST:
                d[k] = max(0.0, self.machine - sum(d.values()))
        return d


def REST():
    """A meter group: all the machine's CPU the other groups do not
    account for. For processes no parent accounts for (Apache's mod_cgid
    lets the kernel reap its CGI children, so their CPU reaches no
    cutime): an upper bound that includes anything else running."""
    return 0


def wrk_meter(groups):
    """A meter over groups plus the load generator (what we reap of wrk)."""
    g = dict(groups)
    g["wrk"] = lambda: ticks(os.getpid(), "reaped")
    return lambda: GroupMeter(g)


def stop_group(p, timeout=10):
    """Stops a process started with start_new_session and its group."""
    if p is None:
        return
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if p.poll() is None:
        p.wait()


def median_runs(runs):
    """fb.median_run over the runs that completed requests (a CGI run at
    200 connections may complete none: it has no CPU per request), with
    the socket errors of all of them."""
    done = [r for r in runs if r["requests"]] or runs[:1]
    m = fb.median_run(done)
    m["errors"] = sum(r["errors"] for r in runs)
    m["empty_runs"] = len(runs) - len([r for r in runs if r["requests"]])
    return m
