"""5. Sign-ins per second, and what the shared SQLite state costs under
load: postern under lighttpd with 1, 2 and 4 processes of each responder;
the relay with the per-request budget write (api_budget counted, as
deployed) and without it (api_budget = 0), and sign-ins (three rate
counters and a session row each), all at 50 connections. The responders'
waits for SQLite's write lock are counted as the sleeps of state/store.c's
busy handler (clock_nanosleep system calls, with perf stat when it is
installed: a kernel counter, it does not slow them)."""

import os
import shutil
import signal
import subprocess

import fronts
from common import fb, log, median_runs, wrk_meter

PROCS = (1, 2, 4)
CONNS = 50


class SleepCount:
    """clock_nanosleep calls of some processes while it is open."""

    def __init__(self, pids, path):
        self.path, self.proc = path, None
        if shutil.which("perf") and pids:
            self.proc = subprocess.Popen(
                ["perf", "stat", "-x", ",", "-o", path, "-e",
                 "syscalls:sys_enter_clock_nanosleep", "-p", ",".join(map(str, pids))],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        if not self.proc:
            return None
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        try:
            with open(self.path) as f:
                for line in f:
                    parts = line.split(",")
                    if len(parts) > 2 and "clock_nanosleep" in parts[2]:
                        return int(parts[0]) if parts[0].isdigit() else None
        except OSError:
            pass
        return None


def measure(name, front, app, url, lua, args, tmp):
    pids = front.responders(app)
    runs = []
    for _ in range(args.runs):
        sc = SleepCount(pids, os.path.join(tmp, "perf.txt"))
        r = fb.wrk(url, lua, CONNS, 2, args.duration, wrk_meter(front.cpu_groups(app))())
        r["busy_sleeps"] = sc.stop()
        log(f"  {name}: {r['rps']:,.0f}/s p50 {r['p50'] / 1000:.2f} ms p99 "
            f"{r['p99'] / 1000:.2f} ms, {r['cpu_us_per_req']['app']:.0f} µs {app} "
            f"+ {r['cpu_us_per_req']['front']:.0f} µs lighttpd a request, "
            f"{r['busy_sleeps']} lock waits, non-2xx {r['non2xx']} errors {r['errors']}")
        runs.append(r)
    m = median_runs(runs)
    sl = [r["busy_sleeps"] for r in runs if r["busy_sleeps"] is not None]
    m["busy_per_1000"] = (sorted(s / r["requests"] * 1000 for s, r in zip(sl, runs))
                          [len(sl) // 2] if sl and len(sl) == len(runs) else None)
    return m


def run(args, tmp):
    procs = fb.Procs()
    res = {"procs": list(PROCS), "conns": CONNS, "by_procs": {}}
    started = []
    try:
        standin, sport = fb.start_standin(tmp, procs)
        up = f"http://127.0.0.1:{sport}"
        for n in PROCS:
            log(f"state: {n} process(es) of each responder ...")
            a = fronts.site(os.path.join(tmp, f"counted-{n}"), up)
            b = fronts.site(os.path.join(tmp, f"uncounted-{n}"), up, {"api_budget": "0"})
            fa = fronts.start_lighttpd(a, jmap=n, auth=n)
            started.append(fa)
            fbb = fronts.start_lighttpd(b, jmap=n, auth=n)
            started.append(fbb)
            ca, cb = fb.sign_in(fa.port), fb.sign_in(fbb.port)
            fb.check_jmap(fa.port, "/api/jmap", ca)
            fb.check_jmap(fbb.port, "/api/jmap", cb)
            la = fb.write_lua(os.path.join(tmp, f"a{n}.lua"), fb.JMAP_BODY, ca)
            lb = fb.write_lua(os.path.join(tmp, f"b{n}.lua"), fb.JMAP_BODY, cb)
            ll = fb.write_lua(os.path.join(tmp, "login.lua"), fb.LOGIN_BODY)
            for f, lua, path in ((fa, la, "/api/jmap"), (fbb, lb, "/api/jmap"),
                                 (fa, ll, "/api/auth/login")):
                fb.wrk(f.url + path, lua, 10, 2, 1)
            res["by_procs"][str(n)] = {
                "relay_counted": measure(f"relay, budget counted, {n}p", fa, "postern-jmap",
                                         fa.url + "/api/jmap", la, args, tmp),
                "relay_uncounted": measure(f"relay, no budget, {n}p", fbb, "postern-jmap",
                                           fbb.url + "/api/jmap", lb, args, tmp),
                "signin": measure(f"sign-ins, {n}p", fa, "postern-auth",
                                  fa.url + "/api/auth/login", ll, args, tmp),
            }
            for f in started:
                f.stop()
            started = []
    finally:
        for f in started:
            f.stop()
        procs.stop_all()
    return res
