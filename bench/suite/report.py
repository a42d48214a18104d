"""Turns docs/bench/results.json into the generated part of
docs/BENCHMARKS.md (between <!-- bench:begin --> and <!-- bench:end -->)
and the PNG plots in docs/bench/ (gnuplot). Every table puts postern, the
floor measured in the same run and the reference system's published
figures side by side, with the ratios."""

import os
import re
import shutil
import subprocess
import tempfile

from common import DOCS, OUT

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
KIB = 1024.0

# The reference system's published figures (the project brief's
# performance notes): a Node webmail gateway in front of Stalwart.
REF = {
    "rps50": 3160,            # JMAP operations/s, 50 clients, from source
    "rps50_container": "2,000–2,800",
    "p50_1": 1.95,            # ms, message list, one user, incl. the mail server
    "tab_relay_https": 133, "tab_relay": 48, "tab_push": 33,      # KiB a tab
    "tabs256": {"relay_https": 1650, "relay": 5000, "push": 6100},
    "tabs512": {"relay_https": 3400, "relay": 10000, "push": 14900},
    "idle_mib": 75,
    "static_mem": 39000, "static_reread": 10000,   # req/s, one Node benchmark
}
NAMES = {"lighttpd": "lighttpd 1.4 (mod_fastcgi; floor mod_proxy)",
         "apache": "Apache 2.4 event MPM (mod_proxy_fcgi; floor mod_proxy_http)"}


def x(a, b, digits=2):
    return f"{a / b:.{digits}f}×" if a is not None and b else "–"


def n0(v):
    return f"{v:,.0f}" if v is not None else "–"


def ms(us):
    return f"{us / 1000:.2f}" if us is not None else "–"


def runs(n):
    return "1 run" if n == 1 else f"{n} runs"


def busiest(part):
    """The most CPU (cores) other work used during any load run of a part."""
    if isinstance(part, dict):
        own = [part["others_max"]] if "others_max" in part else []
        return max(own + [busiest(v) for v in part.values()], default=0.0)
    if isinstance(part, list):
        return max((busiest(v) for v in part), default=0.0)
    return 0.0


def run_line(meta, what, part=None):
    q = "a quick run (`--quick`: short runs, one each)" if meta.get("quick") else "a full run"
    return (f"*{what}: measured {meta['date']} on {meta['machine']}, commit "
            f"{meta['commit']}, {q}, in {meta['seconds']} s; load average "
            f"{meta['load_before']} before and {meta['load_after']} after "
            f"(2 cores shared with other work: the quiet wait gave up "
            f"{meta.get('quiet_gave_up', 0)} times"
            + (f"; other work used up to {busiest(part):.1f} cores during a load run"
               if part and busiest(part) else "") + ").*")


# -- 1. relay ----------------------------------------------------------------------

def by_conns(conns, post, floor, cgi):
    """(connections, postern, floor, CGI) for each count both sides ran."""
    for c in map(str, conns):
        if post.get(c) and floor.get(c):
            yield c, post[c], floor[c], cgi.get(c)


def relay_md(r, plots):
    w = []
    w.append("## 1. The JMAP relay")
    w.append("")
    w.append(run_line(r["meta"], "Relay", r))
    w.append("")
    w.append("wrk POSTs a Mailbox/get (138 bytes, session cookie, no gzip) to "
             "`/api/jmap`; postern relays it to `bench/standin.c`, a one-thread "
             "epoll upstream that answers a fixed 1,544-byte methodResponses. The "
             "floor is the same web server's own reverse proxy to the same "
             "stand-in (lighttpd's mod_proxy opens an upstream connection per request, "
             "Apache's mod_proxy_http keeps them open); CGI is postern's CGI programs "
             "under the same web server. "
             f"Each figure is the median of {runs(r['runs'])} of {r['duration']} s "
             f"(CGI {runs(r['cgi_runs'])} of at least 8 s), postern and the floor "
             "interleaved. CPU per request is the growth of utime+stime in "
             "`/proc/<pid>/stat` of the web server (with its workers and what it "
             "reaped) and the responders, divided by the requests wrk completed. "
             "The reference system published 3,160 JMAP operations/s at 50 clients "
             f"from source ({REF['rps50_container']} in its container) and a p50 of "
             "1.95–2.02 ms at one user — against a real mail server, so its "
             "ratio says less than the floor's.")
    w.append("")
    for web, why in r.get("failed", {}).items():
        w.append(f"*Under {web} the run failed: `{why.strip().splitlines()[-1]}`.*")
        w.append("")
    for web, f in sorted(r["fronts"].items(), key=lambda kv: kv[0] != "lighttpd"):
        post, floor, cgi = f["postern"], f["floor"], f.get("cgi", {})
        w.append(f"### Under {NAMES.get(web, web)}")
        w.append("")
        idle = f.get("idle_pss")
        w.append(f"postern-jmap: {f.get('jmap_procs', '?')} processes."
                 + (f" Idle after warm-up, the web server with its workers and postern's "
                    f"responders take {idle['postern'] / 1024:.1f} MiB (Pss, the sum); the "
                    f"floor's web server {idle['floor'] / 1024:.1f} MiB; the reference "
                    f"system about {REF['idle_mib']} MiB." if idle else ""))
        w.append("")
        w.append("| connections | postern req/s | floor req/s | postern / floor | CGI req/s "
                 "| postern / CGI | reference req/s | postern / reference |")
        w.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for c, p, fl, cg in by_conns(r["conns"], post, floor, cgi):
            ref = REF["rps50"] if c == "50" else None
            w.append(f"| {c} | {n0(p['rps'])} | {n0(fl['rps'])} | **{x(p['rps'], fl['rps'])}** | "
                     f"{n0(cg['rps']) if cg else '–'} | {x(p['rps'], cg['rps'], 1) if cg else '–'} | "
                     f"{n0(ref) if ref else '–'} | {x(p['rps'], ref) if ref else '–'} |")
        w.append("")
        w.append("| connections | postern p50 / p99 ms | floor p50 / p99 ms | p50 postern / floor "
                 "| CGI p50 / p99 ms | reference p50 ms |")
        w.append("| ---: | ---: | ---: | ---: | ---: | ---: |")
        for c, p, fl, cg in by_conns(r["conns"], post, floor, cgi):
            ref = "1.95–2.02" if c == "1" else "–"
            w.append(f"| {c} | {ms(p['p50'])} / {ms(p['p99'])} | {ms(fl['p50'])} / {ms(fl['p99'])} | "
                     f"{x(p['p50'], fl['p50'])} | "
                     f"{(ms(cg['p50']) + ' / ' + ms(cg['p99'])) if cg else '–'} | {ref} |")
        w.append("")
        w.append("| connections | postern CPU µs/request: web server + postern-jmap | floor: web "
                 "server | postern / floor | CGI: web server + CGI | stand-in (postern / floor) "
                 "| not 200 / socket errors (postern, floor, CGI) |")
        w.append("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for c, p, fl, cg in by_conns(r["conns"], post, floor, cgi):
            pc, fc = p["cpu_us"], fl["cpu_us"]
            if "front" not in pc or "front" not in fc:
                continue
            ptot = pc["front"] + pc.get("app", 0)
            cgc = (f"{cg['cpu_us']['front']:,.0f}" + ("*" if web == "apache" else "")
                   if cg and "front" in cg["cpu_us"] else "–")
            bad = " / ".join(f"{s['non2xx']}+{s['errors']}" for s in (p, fl, cg) if s)
            w.append(f"| {c} | {pc['front']:.0f} + {pc.get('app', 0):.0f} = {ptot:.0f} | "
                     f"{fc['front']:.0f} | {x(ptot, fc['front'])} | {cgc} | "
                     f"{pc.get('standin', 0):.0f} / {fc.get('standin', 0):.0f} | {bad} |")
        w.append("")
        if web == "apache" and cgi:
            w.append("\\* Apache's mod_cgid lets the kernel reap its CGI processes, so "
                     "their CPU reaches no parent's counters: this column is all the "
                     "machine's CPU during the run less wrk and the stand-in, an upper "
                     "bound that includes other work on the machine.")
            w.append("")
        w.append(f"![requests per second against connections, {web}](bench/relay-{web}.png)")
        w.append("")
        plots.append(("relay", web))
    w.append(f"![latency against connections](bench/relay-latency.png)")
    w.append("")
    plots.append(("latency", None))
    return w


# -- 2. held tabs ---------------------------------------------------------------------

def tabs_md(r, plots):
    w = ["## 2. Held tabs (pushd)", "", run_line(r["meta"], "Held tabs"), ""]
    w.append("Each N opens N held `GET /api/events` streams (after 50 to warm up) "
             "through the same lighttpd (`conf/lighttpd.conf`, more descriptors, "
             "4 workers from 10,000 streams) to (a) the floor, `bench/ssefloor.c`, a "
             "do-nothing FastCGI SSE server on the same Unix socket, then (b) pushd "
             "(poll mode, test Cyrus), each started afresh (`bench/streams.py`). Per "
             "stream: the daemon's and lighttpd's Pss growth and the kernel's Slab "
             "growth less half a loopback TCP pair (the client's end, measured in the "
             "same run; `Slab` is system-wide, so other work on the machine moves it, "
             "most at small N). Fan-out: one change, from the first stream that got it to "
             "the last (the Python reader sets part of that pace: compare the ratio). "
             "The reference system measured whole tabs until its container was "
             "killed: 33 KiB a tab with push by subscription, 48 KiB relaying per "
             "tab, 133 KiB with an https upstream.")
    w.append("")
    w.append("| N | server | daemon | lighttpd | kernel | **total KiB/stream** | / floor "
             "| / reference (33 KiB) | tabs in 256 / 512 MiB | fan-out ms | / floor |")
    w.append("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in r["series"]:
        fl = s["floor"]
        for name in ("floor", "pushd"):
            v = s.get(name)
            if not v:
                continue
            tot = v["total"] / KIB
            spread = f"{v['spread'] * 1000:.0f}" if v.get("spread") else "–"
            if v["got"] != v["n"] + r.get("warm", 50):
                spread += f" ({v['got']} got it)"
            w.append(f"| {s['n']:,} | {name} | {v['daemon'] / KIB:.2f} | {v['lighttpd'] / KIB:.2f} | "
                     f"{v['kserver'] / KIB:.2f} | **{tot:.2f}** | {x(v['total'], fl['total'])} | "
                     f"{x(tot, REF['tab_push'])} | {int(256 * 1024 / tot):,} / {int(512 * 1024 / tot):,} | "
                     f"{spread} | {x(v.get('spread'), fl.get('spread'))} |")
    w.append("| | reference, push by subscription | | | | 33 | | 1.00× | 6,100 / 14,900 | | |")
    w.append("| | reference, relay per tab | | | | 48 | | 1.45× | 5,000 / ~10,000 | | |")
    w.append("")
    w.append("Tabs in 256 / 512 MiB count the server side only (daemon, web server, "
             "kernel): the reference counted its gateway process until it was killed. "
             "The target of issue 8 is pushd within 1.2× of the floor.")
    w.append("")
    w.append("![memory per held stream against N](bench/tabs-memory.png)")
    w.append("")
    w.append("![fan-out time against N](bench/tabs-fanout.png)")
    w.append("")
    plots.append(("tabs", None))
    return w


# -- 3. blobs -----------------------------------------------------------------------------

def blobs_md(r, plots):
    mib = r["mib"]
    w = ["## 3. Blobs", "", run_line(r["meta"], "Blobs"), ""]
    w.append(f"One {mib} MiB blob uploaded through postern to the test Cyrus, "
             f"then downloaded {r['rounds']} times each way, interleaved, median "
             "(`bench/blob.py`, curl). The reference system published no blob figures.")
    w.append("")
    rss = lambda key: " and ".join(f"{m['VmRSS']:,}" for m in r[key])  # noqa: E731
    growth = max(a["VmRSS"] - b["VmRSS"] for a, b in zip(r["final"], r["before"]))
    w.append("| figure | postern | floor | postern / floor |")
    w.append("| --- | ---: | ---: | ---: |")
    w.append(f"| resident memory of the {r['pids']} postern-blob processes, KiB: before / "
             f"after {mib} MiB up / after down / after all | {rss('before')} / "
             f"{rss('after_up')} / {rss('after_down')} / {rss('final')} | | "
             f"growth at most {growth} KiB |")
    for k, label in (("static", "lighttpd, the same bytes as a static file"),
                     ("cyrus", "straight from Cyrus (the upstream itself)")):
        w.append(f"| download MiB/s, floor: {label} | {mib / r['down_postern']:,.0f} | "
                 f"{mib / r['down_' + k]:,.0f} | **{x(r['down_' + k], r['down_postern'])}** |")
    w.append(f"| upload MiB/s, floor: straight to Cyrus | {mib / r['up_postern']:,.0f} | "
             f"{mib / r['up_cyrus']:,.0f} | {x(r['up_cyrus'], r['up_postern'])} |")
    w.append("")
    return w


# -- 4. static ------------------------------------------------------------------------------

def static_md(r, plots):
    L = r["load"]
    p, pl, p2 = L["postern"], L["plain"], L["plain_2k"]
    w = ["## 4. The app's files", "", run_line(r["meta"], "App files", r), ""]
    w.append(f"A first visit fetches {len(r['files'])} files: "
             + ", ".join(f"`{f}`" for f in r["files"]) + " (index.html, what it links "
             "and preloads, the modules they import, the English strings).")
    w.append("")
    w.append("| cold load | bytes on the wire (heads + bodies) | bodies |")
    w.append("| --- | ---: | ---: |")
    w.append(f"| postern's lighttpd configuration, `Accept-Encoding: gzip` | "
             f"{r['wire_gzip']:,} | {r['body_gzip']:,} |")
    w.append(f"| the same, without gzip | {r['wire_identity']:,} | {r['body_identity']:,} |")
    w.append(f"| floor: plain lighttpd, the same files | {r['wire_plain']:,} | {r['body_plain']:,} |")
    w.append("")
    w.append("wrk at 50 connections asks for the cold-load files in turn "
             "(`Accept-Encoding: gzip` to both; the plain server sends them as they are):")
    w.append("")
    w.append("| figure | postern (gzip, headers) | floor: plain lighttpd, same files | "
             "postern / floor | plain lighttpd, one "
             f"{r['small_size']:,}-byte file (`{r['small_file']}`) | reference (published) |")
    w.append("| --- | ---: | ---: | ---: | ---: | --- |")
    w.append(f"| requests/s | {n0(p['rps'])} | {n0(pl['rps'])} | **{x(p['rps'], pl['rps'])}** | "
             f"{n0(p2['rps'])} | Node: {REF['static_mem']:,} from memory, "
             f"{REF['static_reread']:,} re-reading (another machine) |")
    w.append(f"| cold loads/s ({len(r['files'])} requests each) | {n0(p['rps'] / len(r['files']))} | "
             f"{n0(pl['rps'] / len(r['files']))} | {x(p['rps'], pl['rps'])} | | |")
    w.append(f"| bytes per answer | {n0(p['bytes_per_req'][0])} | {n0(pl['bytes_per_req'][0])} | "
             f"{x(p['bytes_per_req'][0], pl['bytes_per_req'][0])} | {n0(p2['bytes_per_req'][0])} | |")
    w.append(f"| lighttpd CPU µs/request | {p['cpu_us']['front']:.1f} | {pl['cpu_us']['front']:.1f} | "
             f"{x(p['cpu_us']['front'], pl['cpu_us']['front'])} | {p2['cpu_us']['front']:.1f} | |")
    w.append("")
    if p["cpu_us"]["front"] > 5 * pl["cpu_us"]["front"]:
        w.append("Most of the difference is mod_deflate compressing every answer "
                 "again: without `deflate.cache-dir` lighttpd keeps no compressed copy.")
        w.append("")
    return w


# -- 5. shared state ---------------------------------------------------------------------------

def state_md(r, plots):
    w = ["## 5. Sign-ins and the shared SQLite state", "", run_line(r["meta"], "State", r), ""]
    w.append(f"postern under lighttpd with 1, 2 and 4 processes of each responder, "
             f"{r['conns']} connections. \"Budget counted\" is the relay as deployed: "
             "each request counts against `api_budget`, one SQLite write. \"No budget\" "
             "is the same with `api_budget = 0` (no write). A sign-in counts three rate "
             "keys, fetches the session document and writes a session row. Lock waits "
             "are the sleeps of state/store.c's busy handler (`clock_nanosleep` calls "
             "counted by `perf stat`), per 1,000 requests. The reference system "
             "published no sign-in figures; it keeps its state in memory.")
    w.append("")
    w.append("| processes | relay req/s, budget counted | no budget | counted / none | "
             "lock waits /1,000 | postern-jmap µs/req counted / none | sign-ins/s | "
             "sign-in p50 / p99 ms | lock waits /1,000 | postern-auth µs/sign-in |")
    w.append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    bw = lambda m: f"{m['busy_per_1000']:.1f}" if m.get("busy_per_1000") is not None else "–"  # noqa: E731
    for n in map(str, r["procs"]):
        v = r["by_procs"].get(n)
        if not v:
            continue
        a, b, s = v["relay_counted"], v["relay_uncounted"], v["signin"]
        w.append(f"| {n} | {n0(a['rps'])} | {n0(b['rps'])} | **{x(a['rps'], b['rps'])}** | {bw(a)} | "
                 f"{a['cpu_us']['app']:.0f} / {b['cpu_us']['app']:.0f} | {n0(s['rps'])} | "
                 f"{ms(s['p50'])} / {ms(s['p99'])} | {bw(s)} | {s['cpu_us']['app']:.0f} |")
    w.append("")
    w.append("![relay and sign-ins against processes](bench/state.png)")
    w.append("")
    plots.append(("state", None))
    return w


# -- 6. several nodes -----------------------------------------------------------------------

NODE_SIDES = (("sqlite", "SQLite, one node (the floor)"), ("pg", "PostgreSQL, one node"),
              ("pg2", "PostgreSQL, two nodes"))


def nodes_md(r, plots):
    w = ["## 6. Several nodes on PostgreSQL", "", run_line(r["meta"], "Nodes", r), ""]
    w.append("The relay (as in part 1, the budget counted) and sign-ins under lighttpd, "
             "each node with two processes of each responder, its state in SQLite, in a "
             "private PostgreSQL 15 on the same cores (Unix socket, fsync off: the "
             "database's cost, not the disk's), or in that PostgreSQL shared by two nodes "
             "on this machine with the connections split between them (their rates "
             "summed, the worse latencies kept; one connection goes to one node, and "
             "the two nodes run twice the responder processes on the same cores). "
             "Sides interleaved run by run. Goal: PostgreSQL on one node at least "
             "0.8× SQLite.")
    w.append("")
    w.append("| state | relay req/s c1 | p50 / p99 ms c1 | / SQLite c1 | relay req/s c50 | "
             f"p50 / p99 ms c50 | / SQLite c50 | sign-ins/s c{r['signin_conns']} | / SQLite |")
    w.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    base = r["sides"].get("sqlite", {})
    for key, label in NODE_SIDES:
        v = r["sides"].get(key)
        if not v:
            continue
        one, fifty = v["relay"].get("1", {}), v["relay"].get("50", {})
        si = v["signin"].get(str(r["signin_conns"]), {})
        b1, b50 = base.get("relay", {}).get("1", {}), base.get("relay", {}).get("50", {})
        bsi = base.get("signin", {}).get(str(r["signin_conns"]), {})
        w.append(f"| {label} | {n0(one.get('rps'))} | {ms(one.get('p50'))} / {ms(one.get('p99'))} | "
                 f"**{x(one.get('rps'), b1.get('rps'))}** | "
                 f"{n0(fifty.get('rps'))} | {ms(fifty.get('p50'))} / {ms(fifty.get('p99'))} | "
                 f"**{x(fifty.get('rps'), b50.get('rps'))}** | {n0(si.get('rps'))} | "
                 f"{x(si.get('rps'), bsi.get('rps'))} |")
    w.append("")
    w.append(f"Database connections after the runs: {r['connections']} for "
             f"{r['nodes_on_pg']} nodes, {r['connections'] / r['nodes_on_pg']:.1f} a node "
             "(one per responder process lighttpd starts: 12 a node in the shipped "
             "configuration with two of postern-jmap; pushd, not run here, keeps three).")
    w.append("")
    return w


# -- plots ---------------------------------------------------------------------------------

def gnuplot(script, data, tmp):
    for name, rows in data.items():
        with open(os.path.join(tmp, name), "w") as f:
            for row in rows:
                f.write(" ".join(str(v) for v in row) + "\n")
    path = os.path.join(tmp, "plot.gp")
    with open(path, "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", path], cwd=tmp, check=True, capture_output=True)


HEAD = ('set terminal pngcairo size 800,450 font "sans,10"\n'
        'set key outside right top box opaque\nset grid\n')


def plot_relay(res, web, tmp):
    r = res["relay"]
    f = r["fronts"][web]
    rows = []
    for c in map(str, r["conns"]):
        g = lambda side: f.get(side, {}).get(c, {}).get("rps", "NaN") or "NaN"  # noqa: E731
        rows.append((c, g("postern"), g("floor"), g("cgi")))
    gnuplot(HEAD + f'set output "{OUT}/relay-{web}.png"\n'
            f'set title "JMAP relay under {web}: requests per second"\n'
            'set logscale x\nset logscale y\nset xlabel "connections"\nset xrange [0.8:260]\n'
            'set ylabel "requests/s (log)"\nset xtics (1, 10, 50, 200)\n'
            f'set arrow from 50,{REF["rps50"]} to 200,{REF["rps50"]} nohead dt 2\n'
            f'set label "reference, 50 clients" at 50,{REF["rps50"] * 1.15}\n'
            'plot "d" u 1:2 w lp lw 2 t "postern", "d" u 1:3 w lp lw 2 t "floor", '
            '"d" u 1:4 w lp lw 2 t "CGI"\n', {"d": rows}, tmp)


def plot_latency(res, tmp):
    r = res["relay"]
    data, plots = {}, []
    for web, f in r["fronts"].items():
        for side in ("postern", "floor"):
            rows = [(c, f[side][c]["p50"] / 1000, f[side][c]["p99"] / 1000)
                    for c in map(str, r["conns"]) if c in f.get(side, {})]
            data[f"{web}-{side}"] = rows
            plots.append(f'"{web}-{side}" u 1:2 w lp lw 2 t "{web} {side} p50"')
            plots.append(f'"{web}-{side}" u 1:3 w lp dt 2 t "{web} {side} p99"')
    gnuplot(HEAD + f'set output "{OUT}/relay-latency.png"\n'
            'set title "JMAP relay: latency"\nset logscale x\nset logscale y\n'
            'set xlabel "connections"\nset ylabel "ms (log)"\nset xtics (1, 10, 50, 200)\n'
            'set xrange [0.8:260]\n'
            'plot ' + ", ".join(plots) + "\n", data, tmp)


def plot_tabs(res, tmp):
    rows = []
    for s in res["tabs"]["series"]:
        fl, p = s["floor"], s.get("pushd") or {}
        rows.append((s["n"], fl["total"] / KIB, p.get("total", float("nan")) / KIB,
                     p.get("daemon", float("nan")) / KIB, p.get("lighttpd", float("nan")) / KIB,
                     p.get("kserver", float("nan")) / KIB, fl["lighttpd"] / KIB,
                     fl["kserver"] / KIB))
    gnuplot(HEAD + f'set output "{OUT}/tabs-memory.png"\n'
            'set title "Memory per held event stream (server side)"\n'
            'set xlabel "streams held"\nset ylabel "KiB per stream"\nset yrange [0:55]\n'
            'set xrange [0:*]\n'
            f'plot "d" u 1:3 w lp lw 2 t "pushd: total", "d" u 1:2 w lp lw 2 t "floor: total", '
            '"d" u 1:5 w lp dt 2 t "pushd: lighttpd", "d" u 1:7 w lp dt 2 t "floor: lighttpd", '
            '"d" u 1:6 w lp dt 3 t "pushd: kernel", "d" u 1:8 w lp dt 3 t "floor: kernel", '
            '"d" u 1:4 w lp dt 3 t "pushd: daemon", '
            f'{REF["tab_push"]} w l dt 4 t "reference: push by subscription", '
            f'{REF["tab_relay"]} w l dt 4 t "reference: relay per tab"\n', {"d": rows}, tmp)


def plot_fanout(res, tmp):
    rows = [(s["n"], (s["floor"].get("spread") or float("nan")) * 1000,
             ((s.get("pushd") or {}).get("spread") or float("nan")) * 1000)
            for s in res["tabs"]["series"]]
    gnuplot(HEAD + f'set output "{OUT}/tabs-fanout.png"\n'
            'set title "One change to every held stream: first to last"\n'
            'set xlabel "streams held"\nset ylabel "ms"\nset xrange [0:*]\nset yrange [0:*]\n'
            'plot "d" u 1:3 w lp lw 2 t "pushd", "d" u 1:2 w lp lw 2 t "floor"\n',
            {"d": rows}, tmp)


def plot_state(res, tmp):
    r = res["state"]
    rows = []
    for n in map(str, r["procs"]):
        v = r["by_procs"].get(n)
        if v:
            rows.append((n, v["relay_counted"]["rps"], v["relay_uncounted"]["rps"],
                         v["signin"]["rps"]))
    gnuplot(HEAD + f'set output "{OUT}/state.png"\n'
            'set title "Shared SQLite state: throughput against processes"\n'
            'set xlabel "processes of each responder"\nset ylabel "per second"\n'
            'set xtics (1, 2, 4)\nset yrange [0:*]\n'
            'plot "d" u 1:2 w lp lw 2 t "relay, budget counted", '
            '"d" u 1:3 w lp lw 2 t "relay, no budget", "d" u 1:4 w lp lw 2 t "sign-ins"\n',
            {"d": rows}, tmp)


def make_plots(res, plots):
    if not shutil.which("gnuplot"):
        return "gnuplot is not installed: no plots (bench/deps installs gnuplot-nox)."
    os.makedirs(OUT, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="postern-bench-plot-")
    try:
        for kind, arg in plots:
            if kind == "relay":
                plot_relay(res, arg, tmp)
            elif kind == "latency":
                plot_latency(res, tmp)
            elif kind == "tabs":
                plot_tabs(res, tmp)
                plot_fanout(res, tmp)
            elif kind == "state":
                plot_state(res, tmp)
    except subprocess.CalledProcessError as e:
        return f"gnuplot failed: {e.stderr.decode(errors='replace')[-300:]}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return None


# -- at a glance ---------------------------------------------------------------------------

def glance(res):
    """The headline figures of every part measured, with targets."""
    rows = []
    rl = res.get("relay", {}).get("fronts", {})
    for web in sorted(rl, key=lambda k: k != "lighttpd"):
        p, f = rl[web]["postern"].get("50"), rl[web]["floor"].get("50")
        if p and f:
            rows.append((f"relay req/s at 50 connections, {web}", n0(p["rps"]), n0(f["rps"]),
                         x(p["rps"], f["rps"]), "≥ 0.5×", f"{REF['rps50']:,}"))
        p, f = rl[web]["postern"].get("1"), rl[web]["floor"].get("1")
        if p and f:
            rows.append((f"relay p50 at 1 connection, {web}", f"{ms(p['p50'])} ms",
                         f"{ms(f['p50'])} ms", x(p["p50"], f["p50"]), "",
                         "1.95–2.02 ms (with the mail server)"))
    ser = res.get("tabs", {}).get("series", [])
    if ser and ser[-1].get("pushd"):
        s = ser[-1]
        p, f = s["pushd"], s["floor"]
        rows.append((f"memory per held stream at {s['n']:,} streams, KiB", f"{p['total'] / KIB:.1f}",
                     f"{f['total'] / KIB:.1f}", x(p["total"], f["total"]), "≤ 1.2×",
                     f"{REF['tab_push']} (push by subscription)"))
        rows.append(("tabs in 512 MiB (server side)", n0(512 * 1024 * KIB / p["total"]),
                     n0(512 * 1024 * KIB / f["total"]), x(f["total"], p["total"]), "",
                     f"{REF['tabs512']['push']:,}"))
        rows.append((f"one change to all {s['n']:,} streams, ms",
                     n0((p.get("spread") or 0) * 1000), n0((f.get("spread") or 0) * 1000),
                     x(p.get("spread"), f.get("spread")), "≤ 1.2×", "–"))
    b = res.get("blobs")
    if b:
        rows.append((f"blob download MiB/s (floor: static file)", n0(b["mib"] / b["down_postern"]),
                     n0(b["mib"] / b["down_static"]), x(b["down_static"], b["down_postern"]),
                     "", "–"))
        growth = max(a["VmRSS"] - c["VmRSS"] for a, c in zip(b["final"], b["before"]))
        rows.append((f"postern-blob memory growth moving {b['mib']} MiB each way, KiB",
                     f"{growth:,}", "", "", "", "–"))
    st = res.get("static")
    if st:
        p, f = st["load"]["postern"], st["load"]["plain"]
        rows.append(("app files req/s (floor: plain lighttpd)", n0(p["rps"]), n0(f["rps"]),
                     x(p["rps"], f["rps"]), "", f"{REF['static_mem']:,} (Node, from memory)"))
        rows.append(("cold load, bytes on the wire (gzip; floor: plain)", f"{st['wire_gzip']:,}",
                     f"{st['wire_plain']:,}", x(st["wire_gzip"], st["wire_plain"]), "", "–"))
    sd = res.get("state", {}).get("by_procs", {})
    if sd:
        best = max(sd.values(), key=lambda v: v["signin"]["rps"])
        rows.append(("sign-ins/s (best of 1, 2, 4 processes)", n0(best["signin"]["rps"]), "", "",
                     "", "–"))
        v = sd.get("2") or next(iter(sd.values()))
        rows.append(("relay with the budget write / without, 2 processes",
                     n0(v["relay_counted"]["rps"]), n0(v["relay_uncounted"]["rps"]),
                     x(v["relay_counted"]["rps"], v["relay_uncounted"]["rps"]), "", "–"))
    nd = res.get("nodes", {}).get("sides", {})
    for conns in ("1", "50") if nd.get("pg") and nd.get("sqlite") else ():
        p, f = nd["pg"]["relay"].get(conns), nd["sqlite"]["relay"].get(conns)
        if p and f:
            rows.append((f"relay req/s at {conns} connection{'s' if conns != '1' else ''}, "
                         "PostgreSQL (floor: SQLite)",
                         n0(p["rps"]), n0(f["rps"]), x(p["rps"], f["rps"]),
                         "≥ 0.8× (issue 21)", "–"))
    if not rows:
        return []
    w = ["## At a glance", "",
         "| figure | postern | floor | postern / floor | target (issue 8) | reference (published) |",
         "| --- | ---: | ---: | ---: | --- | --- |"]
    w += ["| " + " | ".join(r) + " |" for r in rows]
    w += ["", "Each part below says when it ran, on what, and how loaded the machine was.", ""]
    return w


# -- the document ------------------------------------------------------------------------------

PARTS = (("relay", relay_md), ("tabs", tabs_md), ("blobs", blobs_md),
         ("static", static_md), ("state", state_md), ("nodes", nodes_md))


def block(res):
    plots, w = [], []
    w.append(BEGIN)
    w.append("<!-- Written by bench/run (bench/suite/report.py) from docs/bench/results.json; "
             "edits here are lost. -->")
    w.append("")
    w += glance(res)
    for name, fn in PARTS:
        if name in res:
            w += fn(res[name], plots)
        else:
            w += [f"*Part `{name}` not measured yet: `bench/run --only {name}`.*", ""]
    problem = make_plots(res, plots)
    if problem:
        w += [f"*{problem}*", ""]
    w.append(END)
    return "\n".join(w) + "\n"


INTRO = """# Benchmarks

What postern costs, measured against the floor beneath it on the same
machine in the same run. Absolute numbers drift between runs and machines;
the ratios hold better.

Run everything with one command (as root: it installs wrk, lighttpd,
Apache, gnuplot and the build dependencies from Debian, builds postern
optimised without sanitizers into `build/bench`, and runs on 127.0.0.1
only):

```sh
bench/run            # the full suite, about 25 minutes on 2 cores
bench/run --quick    # short runs and fewer streams, about 6 minutes
bench/run --only relay,static   # some parts; the others keep their figures
```

It prints every figure, keeps them in `docs/bench/results.json`, and
rewrites the part of this file between the `bench:begin` and `bench:end`
markers and the plots in `docs/bench/`. Nothing in it passes or fails.
The parts: 1. the JMAP relay under lighttpd and Apache against each web
server's own reverse proxy and CGI; 2. memory per held event stream;
3. blobs; 4. the app's files; 5. sign-ins and the shared SQLite state;
6. several nodes on PostgreSQL.
"""


def write(res):
    path = os.path.join(DOCS, "BENCHMARKS.md")
    text = block(res)
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = INTRO
    m = re.search(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", doc, re.S)
    if m:
        doc = doc[:m.start()] + text + doc[m.end():]
    else:
        # First time: the generated part goes after the introduction,
        # before the first section (hand-written sections stay below).
        i = doc.find("\n## ")
        i = len(doc) if i == -1 else i + 1
        doc = doc[:i] + text + "\n" + doc[i:]
    with open(path + ".tmp", "w") as f:
        f.write(doc)
    os.replace(path + ".tmp", path)
    return text
