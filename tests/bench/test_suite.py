#!/usr/bin/env python3
"""The benchmark suite's own logic, without any load: the files of a cold
load, the responder counts written into lighttpd's configuration, and the
report — it rewrites only what lies between its markers, shows every part
it has figures for with their ratios, and says which parts are missing."""

import copy
import os
import shutil
import sys
import tempfile

TOP = os.environ.get("POSTERN_SRCDIR") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
sys.path.insert(0, os.path.join(TOP, "bench", "suite"))
from tap import Tap  # noqa: E402
import report  # noqa: E402
import static  # noqa: E402
import fronts  # noqa: E402
import common  # noqa: E402

META = {"date": "2026-01-01 00:00 UTC", "machine": "2 cores", "commit": "abc1234",
        "quick": True, "seconds": 1, "load_before": "0.1 0.1 0.1",
        "load_after": "0.2 0.1 0.1", "quiet_gave_up": 0}


def run_fig(rps, p50=1000.0, cpu=None):
    return {"rps": rps, "p50": p50, "p99": p50 * 3, "max": p50 * 5, "non2xx": 0,
            "errors": 0, "requests": 1000, "bytes_per_req": [2000.0],
            "cpu_us": cpu or {"front": 50.0, "app": 150.0, "standin": 30.0, "wrk": 20.0},
            "others_max": 0.1}


RELAY = {"conns": [1, 10, 50, 200], "duration": 2, "runs": 1, "cgi_runs": 1, "meta": META,
         "fronts": {"lighttpd": {
             "postern": {str(c): run_fig(1000.0 * (i + 1)) for i, c in enumerate((1, 10, 50, 200))},
             "floor": {str(c): run_fig(4000.0 * (i + 1), cpu={"front": 40.0, "standin": 30.0,
                                                               "wrk": 20.0})
                       for i, c in enumerate((1, 10, 50, 200))},
             "cgi": {"1": run_fig(20.0), "200": run_fig(0, cpu={"wrk": 1.0})},
             "jmap_procs": 2}}}


def check_cold_files(t):
    files = static.cold_files()
    t.eq(files[0], "index.html", "a cold load starts with index.html")
    t.ok("app.js" in files and "style.css" in files, "it follows the page's links", files)
    www = os.path.join(TOP, "www")
    t.ok(all(os.path.isfile(os.path.join(www, f)) for f in files),
         "every file found exists", files)
    t.ok(any(f.startswith("js/views/") for f in files),
         "it follows the modules' imports", files)
    t.eq(len(files), len(set(files)), "no file twice")


def check_cold_files_tree(t, tmp):
    www = os.path.join(tmp, "www")
    os.makedirs(os.path.join(www, "js"))
    files = {"index.html": '<link href="a.css"><script type="module" src="js/m.js"></script>'
                           '<img src="data:,x"><a href="https://example.test/">',
             "a.css": "", "js/m.js": 'import { x } from "./n.js";\nimport "../a.css";\n',
             "js/n.js": 'const y = await import("./lazy.js");', "js/lazy.js": ""}
    for name, text in files.items():
        with open(os.path.join(www, name), "w") as f:
            f.write(text)
    t.eq(static.cold_files(www), ["index.html", "a.css", "js/m.js", "js/n.js", "js/lazy.js"],
         "links, static and dynamic imports, relative paths; no data: or other sites")


def check_set_procs(t):
    with open(os.path.join(TOP, "conf", "lighttpd-postern.conf.in")) as f:
        text = f.read()
    out = fronts.set_procs(text, "jmap.sock", 8)
    block = out[out.index("/jmap.sock"):]
    t.ok('"max-procs" => 8' in block[:400], "jmap's max-procs set to 8")
    auth = out[out.index("/auth.sock"):]
    t.ok('"max-procs" => 8' not in auth[:400], "auth's max-procs left alone")
    t.eq(out.replace('"max-procs" => 8', '"max-procs" => 4', 1), text,
         "nothing else changed")


def check_report(t, tmp):
    docs = os.path.join(tmp, "docs")
    os.makedirs(docs)
    saved = report.DOCS, report.OUT
    report.DOCS, report.OUT = docs, os.path.join(docs, "bench")
    try:
        path = os.path.join(docs, "BENCHMARKS.md")
        with open(path, "w") as f:
            f.write("# Benchmarks\n\nintro\n\n## Foundation\n\nhand-written\n")
        report.write({"relay": copy.deepcopy(RELAY)})
        with open(path) as f:
            first = f.read()
        t.ok(first.startswith("# Benchmarks\n\nintro\n\n" + report.BEGIN),
             "the first report goes after the introduction", first[:200])
        t.ok(first.endswith("## Foundation\n\nhand-written\n"),
             "the hand-written section stays below", first[-200:])
        t.ok("| 50 | 3,000 | 12,000 | **0.25×** |" in first,
             "postern, the floor and their ratio side by side", first)
        t.ok("| 3,160 | 0.95× |" in first, "the reference system's figure and its ratio")
        t.ok("| 200 | 4,000 | 16,000 | **0.25×** | 0 |" in first,
             "a CGI run that completed nothing shows 0", first)
        t.ok("`bench/run --only tabs`" in first, "a missing part says how to measure it")
        with open(path, "a") as f:
            f.write("\n## Soak\n\nappended by hand\n")
        r2 = copy.deepcopy(RELAY)
        r2["fronts"]["lighttpd"]["postern"]["50"]["rps"] = 6000.0
        report.write({"relay": r2})
        with open(path) as f:
            second = f.read()
        t.eq(second.count(report.BEGIN), 1, "one generated part after a second report")
        t.ok("| 50 | 6,000 | 12,000 | **0.50×** |" in second, "new figures replace the old")
        t.ok(second.endswith("## Soak\n\nappended by hand\n"), "text after the markers stays")
        if shutil.which("gnuplot"):
            png = os.path.join(docs, "bench", "relay-lighttpd.png")
            t.ok(os.path.getsize(png) > 1000 if os.path.exists(png) else False,
                 "the relay plot is written")
        else:
            t.ok("no plots" in second, "without gnuplot the page says there are no plots")
    finally:
        report.DOCS, report.OUT = saved


def check_median_runs(t):
    full = {"rps": 10.0, "p50": 1.0, "p99": 2.0, "max": 3.0, "non2xx": 0, "errors": 1,
            "requests": 100, "bytes_per_req": 1.0, "others": 0.1,
            "cpu_us_per_req": {"front": 5.0}}
    empty = dict(full, rps=0.0, requests=0, errors=200, cpu_us_per_req={})
    m = common.median_runs([empty, full, dict(full, rps=30.0, cpu_us_per_req={"front": 7.0})])
    t.eq(m["rps"], 20.0, "the median of the runs that completed requests")
    t.eq(m["cpu_us"]["front"], 6.0, "CPU per request from those runs only")
    t.eq((m["errors"], m["empty_runs"]), (202, 1), "the empty run's errors still count")
    m = common.median_runs([empty])
    t.eq((m["rps"], m["cpu_us"]), (0.0, {}), "a figure with no completed request is 0")


def check_nodes_report(t):
    def side(relay1, relay50, signin):
        fig = {"rps": relay50, "p50": 1000.0, "p99": 2000.0}
        return {"relay": {"1": dict(fig, rps=relay1), "50": fig},
                "signin": {"50": dict(fig, rps=signin)}}
    r = {"meta": {"date": "d", "machine": "m", "commit": "c", "seconds": 1, "load_before": "0",
                  "load_after": "0"},
         "conns": [1, 50], "signin_conns": 50, "connections": 12, "nodes_on_pg": 3,
         "sides": {"sqlite": side(1000.0, 5000.0, 800.0), "pg": side(850.0, 4500.0, 400.0),
                   "pg2": side(950.0, 6000.0, 700.0)}}
    text = "\n".join(report.nodes_md(r, []))
    t.ok("| PostgreSQL, one node | 850 | 1.00 / 2.00 | **0.85×** | 4,500 | 1.00 / 2.00 | **0.90×** "
         "| 400 | 0.50× |" in text, "nodes: PostgreSQL against SQLite, relay and sign-ins", text)
    t.ok("12 for 3 nodes, 4.0 a node" in text, "nodes: the database connections", text)
    rows = report.glance({"nodes": r})
    t.ok(any("at 1 connection, PostgreSQL (floor: SQLite)" in row and "0.85×" in row
             for row in rows), "nodes: the ratio at one connection at a glance", rows)
    t.ok(any("at 50 connections, PostgreSQL (floor: SQLite)" in row and "0.90×" in row
             for row in rows), "nodes: and at 50", rows)


def main():
    t = Tap()
    tmp = tempfile.mkdtemp(prefix="postern-test-bench-")
    try:
        t.run("cold files", check_cold_files, t)
        t.run("cold files, a tree", check_cold_files_tree, t, tmp)
        t.run("set_procs", check_set_procs, t)
        t.run("median_runs", check_median_runs, t)
        t.run("report", check_report, t, tmp)
        t.run("nodes report", check_nodes_report, t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
