"""1. The JMAP relay: requests per second, p50/p99 latency and CPU per
request at 1, 10, 50 and 200 connections; postern (FastCGI), the floor
(the same web server's own reverse proxy to the same stand-in) and plain
CGI, under lighttpd and under Apache, in one run. The two FastCGI sides
are interleaved run by run, so drift hits both."""

import os
import time

import fronts
import traceback

from common import REST, fb, log, median_runs, ticks, wrk_meter

CONNS = (1, 10, 50, 200)


def threads(conns):
    return 1 if conns == 1 else 2


def say(label, r):
    cpu = ", ".join(f"{k} {v:.0f}" for k, v in r["cpu_us_per_req"].items())
    log(f"  {label}: {r['rps']:,.0f} req/s p50 {r['p50'] / 1000:.2f} ms "
        f"p99 {r['p99'] / 1000:.2f} ms non-2xx {r['non2xx']} errors {r['errors']} "
        f"cpu/req µs {cpu}; others {r['others']:.2f} cores")


class Side:
    """One thing under load: a URL, its wrk script and its CPU meter."""

    def __init__(self, name, front, path, lua, app=None, standin=None):
        self.name, self.front = name, front
        self.url = front.url + path
        self.lua = lua
        groups = front.cpu_groups(app)
        if front.name == "apache-cgi":
            groups["front"] = REST
        if standin:
            groups["standin"] = lambda: ticks(standin.pid)
        self.meter = wrk_meter(groups)
        self.runs = {c: [] for c in CONNS}

    def once(self, conns, duration):
        if self.name == "cgi":
            # a CGI request at 200 connections waits seconds for its turn
            duration = max(duration, 8)
        r = fb.wrk(self.url, self.lua, conns, threads(conns), duration, self.meter())
        say(f"{self.front.name} {self.name} c{conns}", r)
        self.runs[conns].append(r)

    def warm(self):
        fb.wrk(self.url, self.lua, 10, 2, 1)

    def medians(self):
        return {str(c): median_runs(rs) for c, rs in self.runs.items() if rs}


def start(kind, web, tmp, sport, builddir):
    up = f"http://127.0.0.1:{sport}"
    if kind == "floor":
        return (fronts.start_lighttpd_floor if web == "lighttpd"
                else fronts.start_apache_floor)(tmp, sport)
    st = fronts.site(os.path.join(tmp, f"{web}-{kind}"), up)
    if web == "lighttpd":
        return fronts.start_lighttpd(st, mode=kind)
    if kind == "fcgi":
        return fronts.start_apache_postern(st, builddir)
    return fronts.start_apache_cgi(st, builddir)


def postern_side(name, front, tmp, standin):
    cookie = fb.sign_in(front.port)
    body, raw = fb.check_jmap(front.port, "/api/jmap", cookie)
    lua = fb.write_lua(os.path.join(tmp, f"{front.name}.lua"), fb.JMAP_BODY, cookie)
    app = "postern-jmap" if name == "postern" else None
    s = Side(name, front, "/api/jmap", lua, app, standin)
    s.body, s.raw = body, raw
    return s


def idle_pss(front, *apps):
    """Pss (KiB) of the web server, its workers and the responders named
    apps, idle after warm-up: what the stack costs together."""
    pids = [front.pid] + [p for p, _ in fb.children(front.pid)]
    for app in apps:
        pids += [p for p in front.responders(app) if p not in pids]
    time.sleep(1)
    total = 0
    for p in pids:
        try:
            total += fb.smaps(p)[0]
        except OSError:     # a worker that has just gone
            pass
    return total


def measure_front(web, args, tmp, standin, sport):
    out = {}
    started = []
    try:
        pf = start("fcgi", web, tmp, sport, args.builddir)
        started.append(pf)
        fl = start("floor", web, tmp, sport, args.builddir)
        started.append(fl)
        post = postern_side("postern", pf, tmp, standin)
        floor = Side("floor", fl, "/jmap/",
                     fb.write_lua(os.path.join(tmp, f"{fl.name}.lua"), fb.JMAP_BODY),
                     standin=standin)
        floor.body, floor.raw = fb.check_jmap(fl.port, "/jmap/")
        if post.body != floor.body:
            raise RuntimeError(f"{web}: postern and the floor relay different bodies")
        post.warm()
        floor.warm()
        out["idle_pss"] = {"postern": idle_pss(pf, "postern-jmap", "postern-auth"),
                           "floor": idle_pss(fl)}
        for c in CONNS:
            for _ in range(args.runs):
                post.once(c, args.duration)
                floor.once(c, args.duration)
        fb.check_jmap(pf.port, "/api/jmap", fb.sign_in(pf.port))
        out["postern"], out["floor"] = post.medians(), floor.medians()
        out["bytes"] = {"postern": post.raw, "floor": floor.raw, "body": post.body}
        out["jmap_procs"] = len(pf.responders("postern-jmap"))
        for f in started:
            f.stop()
        started = []
        cf = start("cgi", web, tmp, sport, args.builddir)
        started.append(cf)
        cgi = postern_side("cgi", cf, tmp, standin)
        cgi.warm()
        for c in CONNS:
            for _ in range(args.cgi_runs):
                cgi.once(c, args.duration)
        out["cgi"] = cgi.medians()
    finally:
        for f in started:
            f.stop()
    return out


def run(args, tmp):
    procs = fb.Procs()
    res = {"conns": list(CONNS), "duration": args.duration, "runs": args.runs,
           "cgi_runs": args.cgi_runs, "fronts": {}}
    try:
        standin, sport = fb.start_standin(tmp, procs)
        for web in args.fronts:
            if web == "apache" and not os.access(fronts.APACHE, os.X_OK):
                log("relay: apache2 is not installed (bench/deps installs it); skipped")
                continue
            log(f"relay under {web} ...")
            try:
                res["fronts"][web] = measure_front(web, args, tmp, standin, sport)
            except Exception:   # the other web server's figures still count
                log(traceback.format_exc())
                res.setdefault("failed", {})[web] = traceback.format_exc(limit=1)[-300:]
    finally:
        procs.stop_all()
    return res
