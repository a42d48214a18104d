#!/usr/bin/env python3
"""The benchmark suite: runs the parts asked for, keeps every figure in
docs/bench/results.json, and rewrites the generated part of
docs/BENCHMARKS.md and the plots in docs/bench/ from it.

    python3 bench/suite/main.py [--quick] [--only relay,tabs,blobs,static,state,nodes]
                                [--builddir build/bench] [--report-only]

bench/run installs what it needs, builds, and calls this. Loopback only;
every run is bounded in time; everything started is stopped on the way out.
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import fb, log  # noqa: E402

PARTS = ("relay", "tabs", "blobs", "static", "state", "nodes")


def options():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="short runs, fewer streams: minutes instead of half an hour")
    ap.add_argument("--only", default=",".join(PARTS),
                    help=f"comma-separated parts (default all: {','.join(PARTS)})")
    ap.add_argument("--builddir", default=os.path.join(common.TOP, "build", "bench"))
    ap.add_argument("--report-only", action="store_true",
                    help="only rewrite docs/BENCHMARKS.md and the plots from results.json")
    ap.add_argument("--fronts", default="lighttpd,apache",
                    help="web servers for the relay (default lighttpd,apache); the "
                    "relay part's figures are replaced as a whole")
    ap.add_argument("--streams", help="held streams, comma-separated N "
                    "(default 1000,2500,5000,10000,15000; --quick 1000,3000)")
    ap.add_argument("--duration", type=int, help="seconds per load run (default 8; --quick 2)")
    ap.add_argument("--runs", type=int, help="runs per figure, median (default 3; --quick 1)")
    ap.add_argument("--quiet-wait", type=int,
                    help="seconds to wait for a quiet machine before each run "
                    "(default 5; --quick 2)")
    a = ap.parse_args()
    q = a.quick
    a.duration = a.duration or (2 if q else 8)
    a.runs = a.runs or (1 if q else 3)
    a.cgi_runs = 1 if q else 2
    a.streams = [int(x) for x in (a.streams or ("1000,3000" if q else
                                                "1000,2500,5000,10000,15000")).split(",")]
    a.blob_mib = 50 if q else 200
    a.quiet_wait = a.quiet_wait if a.quiet_wait is not None else (2 if q else 5)
    a.fronts = [x for x in a.fronts.split(",") if x]
    a.only = [x for x in a.only.split(",") if x]
    for p in a.only:
        if p not in PARTS:
            ap.error(f"unknown part {p}: choose from {', '.join(PARTS)}")
    if not 1 <= a.duration <= 60 or not 1 <= a.runs <= 9:
        ap.error("--duration 1..60, --runs 1..9")
    a.builddir = os.path.abspath(a.builddir)
    return a


def run_part(name, args, tmp):
    import importlib
    mod = importlib.import_module(name)
    return mod.run(args, tmp)


def main():
    args = options()
    import report
    res = common.load_results()
    failed = []
    if not args.report_only:
        for tool in ("wrk", "cc", "lighttpd"):
            if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
                sys.exit(f"{tool} is missing: run bench/run (it installs what the suite needs)")
        common.setup_build(args.builddir)
        fb.QUIET["wait"] = args.quiet_wait
        fb.QUIET["limit"] = 0.25

        def on_term(*_):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, on_term)
        for name in args.only:
            tmp = tempfile.mkdtemp(prefix=f"postern-bench-{name}-")
            os.chmod(tmp, 0o755)   # Apache's workers (www-data) reach into it
            meta = {"date": common.now(), "machine": common.machine(),
                    "commit": common.commit(), "quick": args.quick,
                    "load_before": common.loadavg()}
            log(f"== {name} (load average {meta['load_before']}) ==")
            t0 = time.monotonic()
            fb.QUIET["gave_up"], fb.QUIET["waited"] = 0, 0.0
            try:
                part = run_part(name, args, tmp)
            except KeyboardInterrupt:
                log("interrupted; everything it started is stopped")
                return 130
            except Exception:   # the next parts still run; this one keeps its old figures
                log(traceback.format_exc())
                log(f"== {name} failed: its figures in docs/bench/results.json are unchanged ==")
                failed.append(name)
                continue
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            meta.update(load_after=common.loadavg(), seconds=round(time.monotonic() - t0),
                        quiet_gave_up=fb.QUIET["gave_up"],
                        quiet_waited=round(fb.QUIET["waited"]))
            part["meta"] = meta
            res[name] = part
            common.save_results(res)
    text = report.write(res)
    print(text)
    if failed:
        log(f"failed: {', '.join(failed)} (see above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
