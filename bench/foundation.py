#!/usr/bin/env python3
"""The foundation benchmark: postern's JMAP relay and sign-in against the
floor beneath them, in one run, on loopback.

    python3 bench/foundation.py [--duration 10] [--runs 3] [--rev HEAD | --worktree]

What it does (see docs/BENCHMARKS.md for the figures and how to read them):

  * builds postern (optimised, no sanitizers) from a commit (default HEAD,
    exported with git archive, so edits in progress in the work tree are not
    measured) or, with --worktree, from the work tree into build/bench;
  * compiles bench/standin.c, a tiny epoll HTTP/1.1 server that plays the
    JMAP server (session document for GET, ~1.5 KB methodResponses for POST);
  * starts postern behind lighttpd as FastCGI (tests/harness/stack.py, with
    rate limits so large they count but never refuse), signs in once;
  * starts a second lighttpd, same binary, same modules, one worker, with
    mod_proxy forwarding /jmap/ to the stand-in: the floor;
  * runs wrk (POST, 50 connections, 2 threads; and 1 connection) against
    both, N runs each interleaved, medians; CPU per request from
    /proc/<pid>/stat; idle memory from /proc/<pid>/smaps_rollup;
  * sign-ins per second (10 and 50 connections); the relay again with the
    responders as plain CGI;
  * prints a table and writes the "Foundation" section of docs/BENCHMARKS.md.

Every process it starts is stopped on the way out (also on error or Ctrl-C).
All traffic goes to 127.0.0.1 only; every load run is bounded in time.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
ACCOUNT = "bench@example.test"
JMAP_BODY = json.dumps({
    "using": ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"],
    "methodCalls": [["Mailbox/get", {"accountId": ACCOUNT}, "0"]],
}, separators=(",", ":"))
LOGIN_BODY = json.dumps({"username": ACCOUNT, "password": "x"},
                        separators=(",", ":"))
CONF_EXTRA = {
    # Counted on every request (the write happens), never refused.
    "api_budget": "100000000",
    "login_limit_user": "1000000",
    "login_limit_ip": "1000000",
    "login_limit_all": "100000000",
    "login_window": "1m",
    "log_level": "warning",
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def version_of(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
        text = (out.stdout or out.stderr).strip().splitlines()
        return text[0] if text else "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout=15):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"process {proc.args[0]} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


# -- /proc ------------------------------------------------------------------

def proc_stat(pid):
    """(comm, ppid, utime+stime, cutime+cstime) in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    comm = s[s.index("(") + 1:s.rindex(")")]
    rest = s[s.rindex(")") + 2:].split()
    return comm, int(rest[1]), int(rest[11]) + int(rest[12]), int(rest[13]) + int(rest[14])


def children(ppid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            comm, parent, _, _ = proc_stat(int(d))
        except (OSError, ValueError):
            continue
        if parent == ppid:
            out.append((int(d), comm))
    return sorted(out)


def smaps(pid):
    """Pss and Rss of a process in KiB."""
    v = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            m = re.match(r"(\w+):\s+(\d+) kB", line)
            if m:
                v[m.group(1)] = int(m.group(2))
    return v.get("Pss", 0), v.get("Rss", 0)


def machine_busy():
    """Busy clock ticks of all CPUs together (from /proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]


QUIET = {"limit": 0.15, "wait": 120, "waited": 0.0, "gave_up": 0}


def wait_quiet():
    """Waits until the rest of the machine uses less than QUIET["limit"] of a
    core over a second (other people's builds and tests share these cores),
    for at most QUIET["wait"] seconds; then runs anyway and says so."""
    end = time.monotonic() + QUIET["wait"]
    t0 = time.monotonic()
    while True:
        b0 = machine_busy()
        time.sleep(1)
        busy = (machine_busy() - b0) / CLK_TCK
        if busy < QUIET["limit"]:
            break
        if time.monotonic() > end:
            QUIET["gave_up"] += 1
            log(f"  the machine stays busy ({busy:.2f} cores); measuring anyway")
            break
    QUIET["waited"] += time.monotonic() - t0 - 1


class CpuMeter:
    """CPU seconds of named processes over an interval. Each label names a
    pid and what to count: "own" (utime+stime), "reaped" (cutime+cstime: the
    children it waited for) or "both"."""

    def __init__(self, procs):
        self.procs = procs          # label -> (pid, what)
        self.t0 = None

    def sample(self):
        out = {}
        for label, (pid, what) in self.procs.items():
            try:
                _, _, own, kids = proc_stat(pid)
            except OSError:
                own = kids = 0
            out[label] = {"own": own, "reaped": kids, "both": own + kids}[what]
        return out

    def start(self):
        self.t0 = self.sample()
        self.m0 = machine_busy()

    def stop(self):
        t1 = self.sample()
        m1 = machine_busy()
        d = {k: (t1[k] - self.t0[k]) / CLK_TCK for k in t1}
        self.machine = (m1 - self.m0) / CLK_TCK
        return d


# -- HTTP checks ----------------------------------------------------------------

def http(port, method, path, body=b"", headers=None, timeout=10):
    """One request on a fresh connection; (status, headers, body, raw length
    of the whole answer). Reads Content-Length and chunked answers."""
    headers = dict(headers or {})
    req = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    for k, v in headers.items():
        req += f"{k}: {v}\r\n"
    if body or method == "POST":
        req += f"Content-Length: {len(body)}\r\n"
    req = req.encode() + b"\r\n" + body
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(req)
        buf = b""

        def need(n):
            nonlocal buf
            while len(buf) < n:
                d = s.recv(65536)
                if not d:
                    raise RuntimeError("connection closed early")
                buf += d

        while b"\r\n\r\n" not in buf:
            need(len(buf) + 1)
        head, _, buf = buf.partition(b"\r\n\r\n")
        raw = len(head) + 4
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs.setdefault(k.strip().lower(), []).append(v.strip())
        data = b""
        if "content-length" in hdrs:
            n = int(hdrs["content-length"][0])
            need(n)
            data, raw = buf[:n], raw + n
        elif "chunked" in ",".join(hdrs.get("transfer-encoding", [])):
            while True:
                while b"\r\n" not in buf:
                    need(len(buf) + 1)
                size_line, _, buf = buf.partition(b"\r\n")
                n = int(size_line.split(b";")[0], 16)
                need(n + 2)
                data += buf[:n]
                buf = buf[n + 2:]
                raw += len(size_line) + 2 + n + 2
                if n == 0:  # no trailers: "0\r\n\r\n" is all consumed
                    break
        return status, hdrs, data, raw


# -- processes --------------------------------------------------------------------

class Procs:
    """Processes this run started, stopped in reverse order."""

    def __init__(self):
        self.items = []     # (name, stop function)

    def add(self, name, stop):
        self.items.append((name, stop))

    def stop(self, name):
        for i, (nm, stop) in enumerate(self.items):
            if nm == name:
                del self.items[i]
                stop()
                return

    def stop_all(self):
        while self.items:
            name, stop = self.items.pop()
            try:
                stop()
            except Exception as e:  # keep stopping the others
                log(f"stopping {name}: {e}")


def stop_popen(p, sig=signal.SIGTERM, timeout=10):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def reap_pids(pids, timeout=10):
    """Waits for processes we caused to be started (lighttpd's FastCGI
    children) to be gone; kills by pid any that outlive their parent."""
    end = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < end:
        left = [p for p in left if not _gone(p)]
        if left:
            time.sleep(0.1)
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


def _gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        return s[s.rindex(")") + 2] == "Z"
    except OSError:
        return True


# -- wrk ------------------------------------------------------------------------------

WRK_LUA = r"""
%(request)s
%(cookie)s
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRKJSON {\"requests\":%%d,\"duration_us\":%%d,\"bytes\":%%d," ..
    "\"connect\":%%d,\"read\":%%d,\"write\":%%d,\"status\":%%d,\"timeout\":%%d," ..
    "\"p50\":%%d,\"p90\":%%d,\"p99\":%%d,\"p999\":%%d,\"mean\":%%f,\"max\":%%d}\n",
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9), latency.mean, latency.max))
end
"""


def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_lua(path, body, cookie=None):
    """A wrk script: POST body as JSON with the CSRF header (body None: GET)."""
    request = "" if body is None else (
        f'wrk.method = "POST"\nwrk.body = {lua_string(body)}\n'
        'wrk.headers["Content-Type"] = "application/json"\n'
        'wrk.headers["X-Postern-CSRF"] = "1"')
    with open(path, "w") as f:
        f.write(WRK_LUA % {
            "request": request,
            "cookie": f'wrk.headers["Cookie"] = {lua_string(cookie)}' if cookie else "",
        })
    return path


def wrk(url, lua, conns, threads, duration, meter=None):
    cmd = ["wrk", "-t", str(threads), "-c", str(conns), "-d", f"{duration}s",
           "--timeout", "10s", "--latency", "-s", lua, url]
    if meter:
        wait_quiet()
        meter.start()
    t0 = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True,
                         timeout=duration + 60)
    wall = time.monotonic() - t0
    cpu = meter.stop() if meter else {}
    m = re.search(r"^WRKJSON (.*)$", out.stdout, re.M)
    if out.returncode != 0 or not m:
        raise RuntimeError(f"wrk failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    r = json.loads(m.group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    r["non2xx"] = int(non2xx.group(1)) if non2xx else 0
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    r["errors"] = r["connect"] + r["read"] + r["write"] + r["timeout"]
    r["bytes_per_req"] = r["bytes"] / r["requests"] if r["requests"] else 0
    r["cpu"] = cpu
    r["wall"] = wall
    # CPU the machine spent beyond the processes measured (other people's
    # work, and kernel time not charged to these processes), in cores.
    r["others"] = max(0.0, meter.machine - sum(cpu.values())) / wall if meter else 0.0
    r["cpu_us_per_req"] = {k: v / r["requests"] * 1e6 for k, v in cpu.items()} \
        if r["requests"] else {}
    return r


def median_run(runs):
    """The medians of the figures over several runs, and the runs."""
    def med(f):
        return statistics.median(f(r) for r in runs)
    cpu_keys = runs[0]["cpu_us_per_req"].keys()
    return {
        "rps": med(lambda r: r["rps"]),
        "p50": med(lambda r: r["p50"]),
        "p99": med(lambda r: r["p99"]),
        "max": med(lambda r: r["max"]),
        "non2xx": sum(r["non2xx"] for r in runs),
        "errors": sum(r["errors"] for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "bytes_per_req": [round(r["bytes_per_req"], 1) for r in runs],
        "cpu_us": {k: med(lambda r, k=k: r["cpu_us_per_req"][k]) for k in cpu_keys},
        "others_max": max(r["others"] for r in runs),
        "runs": [{k: r[k] for k in ("rps", "p50", "p99", "non2xx", "errors",
                                     "requests", "others")} for r in runs],
    }


# -- the parts -------------------------------------------------------------------------

FLOOR_CONF = """# the floor: the same lighttpd, one worker, mod_proxy to the stand-in
server.modules = ( "mod_indexfile", "mod_setenv", "mod_deflate",
                   "mod_fastcgi", "mod_proxy", "mod_staticfile" )
server.bind = "127.0.0.1"
server.port = %(port)d
server.document-root = "%(www)s"
server.errorlog = "%(log)s"
server.tag = ""
server.stream-request-body = 2
server.stream-response-body = 2
$HTTP["url"] =~ "^/jmap/" {
  deflate.mimetypes = ()
  proxy.server = ( "" => (( "host" => "127.0.0.1", "port" => %(upstream)d )) )
}
"""


def prepare_source(args, tmp):
    """(srcdir, builddir, description) of what is measured; builds it."""
    if args.worktree:
        src = REPO
        build = args.builddir or os.path.join(REPO, "build", "bench")
        rev = sh(["git", "-C", REPO, "rev-parse", "--short", "HEAD"]).strip()
        dirty = sh(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"]).strip()
        desc = f"work tree at {rev}" + (" with uncommitted changes" if dirty else "")
    else:
        rev = sh(["git", "-C", REPO, "rev-parse", args.rev]).strip()
        src = os.path.join(tmp, "src")
        os.makedirs(src)
        archive = subprocess.Popen(["git", "-C", REPO, "archive", rev],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", src], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise RuntimeError(f"git archive {rev} failed")
        build = args.builddir or os.path.join(tmp, "build")
        subject = sh(["git", "-C", REPO, "log", "-1", "--format=%s", rev]).strip()
        desc = f"commit {rev[:7]} ({subject})"
    if not args.no_build:
        log(f"building {desc} in {build} ...")
        subprocess.run([os.path.join(src, "scripts", "build"), build], check=True,
                       stdout=subprocess.DEVNULL)
    for prog in ("fcgi/postern-jmap", "fcgi/postern-auth",
                 "cgi-bin/postern-jmap.cgi", "cgi-bin/postern-auth.cgi"):
        if not os.access(os.path.join(build, prog), os.X_OK):
            raise RuntimeError(f"{build}/{prog} is missing; build first")
    return src, build, desc


def start_standin(tmp, procs):
    binary = os.path.join(tmp, "standin")
    subprocess.run(["cc", "-O2", "-o", binary, os.path.join(HERE, "standin.c")],
                   check=True)
    port = free_port()
    logf = open(os.path.join(tmp, "standin.log"), "wb")
    p = subprocess.Popen([binary, str(port)], stdin=subprocess.DEVNULL,
                         stdout=logf, stderr=logf, start_new_session=True)
    procs.add("standin", lambda: (stop_popen(p), logf.close()))
    wait_port(port, p)
    return p, port


def start_floor(tmp, upstream_port, lighttpd, procs):
    port = free_port()
    www = os.path.join(tmp, "floor-www")
    os.makedirs(www, exist_ok=True)
    with open(os.path.join(www, "static.txt"), "w") as f:
        f.write(("postern " * 256)[:2048])   # the calibration file, 2 KB
    conf = os.path.join(tmp, "floor.conf")
    with open(conf, "w") as f:
        f.write(FLOOR_CONF % {"port": port, "www": www,
                              "log": os.path.join(tmp, "floor-error.log"),
                              "upstream": upstream_port})
    p = subprocess.Popen([lighttpd, "-D", "-f", conf], stdin=subprocess.DEVNULL,
                         start_new_session=True)
    procs.add("floor lighttpd", lambda: stop_popen(p))
    wait_port(port, p)
    return p, port


def start_stack(Stack, root, mode, upstream_port, procs):
    st = Stack(root, mode=mode, upstream=f"http://127.0.0.1:{upstream_port}",
               conf_extra=CONF_EXTRA)

    def stop():
        kids = []
        if st.lighttpd and st.lighttpd.poll() is None:
            kids = [pid for pid, _ in children(st.lighttpd.pid)]
        st.stop()
        reap_pids(kids)

    procs.add(f"postern {mode}", stop)
    # lighttpd and the responders it spawns write to the stderr they inherit:
    # give them a file, so that what postern logs during the run is kept.
    st.stderr_log = os.path.join(root + "-stderr.log")
    saved = os.dup(2)
    try:
        with open(st.stderr_log, "ab") as f:
            os.dup2(f.fileno(), 2)
        st.start()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    return st


def logged_problems(st):
    """The warning and error lines postern and lighttpd logged."""
    lines = []
    for path in (st.stderr_log, st.error_log):
        try:
            with open(path, errors="replace") as f:
                lines += [l.rstrip() for l in f if re.search(r"\b(error|warning|warn)\b", l, re.I)]
        except OSError:
            pass
    return lines


def sign_in(port):
    status, hdrs, body, _ = http(port, "POST", "/api/auth/login", LOGIN_BODY.encode(),
                                 {"Content-Type": "application/json",
                                  "X-Postern-CSRF": "1"})
    if status != 200:
        raise RuntimeError(f"sign-in answered {status}: {body[:300]!r}")
    for c in hdrs.get("set-cookie", []):
        m = re.match(r"(postern_session=[^;]+)", c)
        if m:
            return m.group(1)
    raise RuntimeError("sign-in set no postern_session cookie")


def check_jmap(port, path, cookie=None):
    """One relay request; returns the raw size of its answer."""
    h = {"Content-Type": "application/json", "X-Postern-CSRF": "1"}
    if cookie:
        h["Cookie"] = cookie
    status, hdrs, body, raw = http(port, "POST", path, JMAP_BODY.encode(), h)
    if status != 200:
        raise RuntimeError(f"{path} answered {status}: {body[:300]!r}")
    doc = json.loads(body)
    if "methodResponses" not in doc:
        raise RuntimeError(f"{path}: not a JMAP answer: {body[:200]!r}")
    return len(body), raw


def responders(st, name):
    return [pid for pid, comm in children(st.lighttpd.pid) if comm == name]


def memory(pids):
    """{label: (Pss, Rss)} in KiB and the sums."""
    per = {}
    for label, pid in pids:
        per[label] = smaps(pid)
    total = (sum(v[0] for v in per.values()), sum(v[1] for v in per.values()))
    return per, total


# -- report ----------------------------------------------------------------------------------

def fmt_rps(v):
    return f"{v:,.0f}"


def fmt_ms(us):
    return f"{us / 1000:.3f} ms"


def fmt_x(a, b):
    return f"{a / b:.2f}×" if b else "–"


def cpu_cell(cpu, keys):
    parts = [f"{cpu[k]:.1f} {k}" for k in keys if k in cpu]
    return " + ".join(parts) + f" = {sum(cpu[k] for k in keys if k in cpu):.1f} µs"


def build_report(R):
    m, f = R["relay50"], R["floor50"]
    m1, f1 = R["relay1"], R["floor1"]
    cgi, cgi1 = R["cgi50"], R.get("cgi1")
    L10, L50 = R["login10"], R["login50"]
    out = []
    w = out.append
    w("## Foundation")
    w("")
    w(f"Measured {R['date']} on {R['machine']} with `bench/foundation.py "
      f"--duration {R['duration']} --runs {R['runs']}`: {R['what']}.")
    w("")
    w("### Setup")
    w("")
    for line in R["setup"] + [R["setup_quiet"]]:
        w(f"- {line}")
    w("")
    w("### The relay against the floor (POST, 50 connections, 2 threads)")
    w("")
    w("| figure | postern FastCGI relay | floor: lighttpd mod_proxy | postern / floor |")
    w("| --- | --- | --- | --- |")
    w(f"| requests/s | {fmt_rps(m['rps'])} | {fmt_rps(f['rps'])} | {fmt_x(m['rps'], f['rps'])} |")
    w(f"| latency p50 | {fmt_ms(m['p50'])} | {fmt_ms(f['p50'])} | {fmt_x(m['p50'], f['p50'])} |")
    w(f"| latency p99 | {fmt_ms(m['p99'])} | {fmt_ms(f['p99'])} | {fmt_x(m['p99'], f['p99'])} |")
    w(f"| latency max | {fmt_ms(m['max'])} | {fmt_ms(f['max'])} | {fmt_x(m['max'], f['max'])} |")
    w(f"| 1 connection: p50 | {fmt_ms(m1['p50'])} | {fmt_ms(f1['p50'])} | {fmt_x(m1['p50'], f1['p50'])} |")
    w(f"| 1 connection: p99 | {fmt_ms(m1['p99'])} | {fmt_ms(f1['p99'])} | {fmt_x(m1['p99'], f1['p99'])} |")
    w(f"| 1 connection: max | {fmt_ms(m1['max'])} | {fmt_ms(f1['max'])} | {fmt_x(m1['max'], f1['max'])} |")
    w(f"| 1 connection: requests/s | {fmt_rps(m1['rps'])} | {fmt_rps(f1['rps'])} | {fmt_x(m1['rps'], f1['rps'])} |")
    mc, fc = m["cpu_us"], f["cpu_us"]
    w(f"| CPU per request (50 conn.) | {cpu_cell(mc, ['lighttpd', 'postern-jmap'])} "
      f"| {cpu_cell(fc, ['lighttpd'])} | {fmt_x(mc['lighttpd'] + mc['postern-jmap'], fc['lighttpd'])} |")
    w(f"| stand-in CPU per request | {mc['standin']:.1f} µs | {fc['standin']:.1f} µs | |")
    w(f"| load generator (wrk) CPU per request | {mc['wrk']:.1f} µs | {fc['wrk']:.1f} µs | |")
    w(f"| answers that were not 200 / socket errors | {m['non2xx'] + m1['non2xx']} / {m['errors'] + m1['errors']} "
      f"of {m['requests'] + m1['requests']:,} | {f['non2xx'] + f1['non2xx']} / {f['errors'] + f1['errors']} "
      f"of {f['requests'] + f1['requests']:,} | |")
    w("")
    w(f"Each figure is the median of {R['runs']} runs of {R['duration']} s, the two "
      "sides interleaved. CPU per request is the growth of utime+stime in "
      "`/proc/<pid>/stat` over a run divided by the requests wrk completed "
      f"(clock tick {1000 // CLK_TCK} ms); postern-jmap is the sum of its "
      f"{R['jmap_procs']} processes. "
      f"Every answer was checked for its size: a 200 relay answer is "
      f"{R['relay_raw']} bytes on the wire and wrk counted "
      f"{', '.join(str(x) for x in m['bytes_per_req'])} bytes per answer "
      f"(floor {R['floor_raw']}: {', '.join(str(x) for x in f['bytes_per_req'])}). "
      "wrk corrects its percentiles for coordinated omission (it adds the requests "
      "a stalled connection would have sent), so a few long stalls raise p99 far "
      "more than their number suggests; max is the longest single request.")
    w("")
    others = max(R[k]["others_max"] for k in ("relay50", "floor50", "relay1", "floor1", "static",
                                             "cgi50", "cgi1", "login10", "login50"))
    w(f"CPU time outside the measured processes (kernel work not charged to "
      f"them, and anything else running) was at most {others:.2f} cores in any run; "
      f"the quiet wait gave up {R['quiet_gave_up']} times and waited "
      f"{R['quiet_waited']:.0f} s in all.")
    w("")
    s = R["static"]
    w(f"How fast the machine was: the floor's lighttpd served a 2 KB static file at "
      f"{fmt_rps(s['rps'])} requests/s with {s['cpu_us']['lighttpd']:.1f} µs of lighttpd "
      f"CPU per request (performance.md measured ~190,000 and 4.6 µs on its machine), "
      f"so absolute figures here are about {190000 / s['rps']:.1f}× slower than there; "
      "compare ratios.")
    w("")
    w("### FastCGI against CGI (the same relay, 50 connections)")
    w("")
    w("| figure | FastCGI | CGI | FastCGI / CGI |")
    w("| --- | --- | --- | --- |")
    w(f"| requests/s | {fmt_rps(m['rps'])} | {fmt_rps(cgi['rps'])} | {fmt_x(m['rps'], cgi['rps'])} |")
    w(f"| latency p50 | {fmt_ms(m['p50'])} | {fmt_ms(cgi['p50'])} | {fmt_x(m['p50'], cgi['p50'])} |")
    w(f"| latency p99 | {fmt_ms(m['p99'])} | {fmt_ms(cgi['p99'])} | {fmt_x(m['p99'], cgi['p99'])} |")
    if cgi1:
        w(f"| 1 connection: p50 | {fmt_ms(m1['p50'])} | {fmt_ms(cgi1['p50'])} | {fmt_x(m1['p50'], cgi1['p50'])} |")
    cc = cgi["cpu_us"]
    w(f"| CPU per request | {sum(mc[k] for k in ('lighttpd', 'postern-jmap')):.1f} µs "
      f"| {cc['lighttpd']:.1f} lighttpd + {cc['cgi children']:.1f} responders = "
      f"{cc['lighttpd'] + cc['cgi children']:.1f} µs | "
      f"{fmt_x(mc['lighttpd'] + mc['postern-jmap'], cc['lighttpd'] + cc['cgi children'])} |")
    cgi_bad = cgi["non2xx"] + (cgi1["non2xx"] if cgi1 else 0)
    cgi_err = cgi["errors"] + (cgi1["errors"] if cgi1 else 0)
    w(f"| answers that were not 200 / socket errors | {m['non2xx']} / {m['errors']} | {cgi_bad} / {cgi_err} | |")
    w("")
    w("For latency and CPU a ratio below 1 is the fraction of the CGI figure that "
      "FastCGI needs. Under CGI every request forks and executes a responder, which reads "
      "postern.conf, the server secret and opens the SQLite database; its CPU "
      "is counted from lighttpd's reaped children (cutime+cstime).")
    w("")
    w("### Sign-ins per second (POST /api/auth/login, FastCGI)")
    w("")
    w("Each sign-in counts three rate keys, asks the stand-in for the session "
      "document (GET), seals the credentials and the document, and inserts a "
      "session row in SQLite.")
    w("")
    w("| connections | sign-ins/s | p50 | p99 | CPU per sign-in | not 200 / errors |")
    w("| --- | --- | --- | --- | --- | --- |")
    for n, L in ((10, L10), (50, L50)):
        lc = L["cpu_us"]
        w(f"| {n} | {fmt_rps(L['rps'])} | {fmt_ms(L['p50'])} | {fmt_ms(L['p99'])} | "
          f"{cpu_cell(lc, ['lighttpd', 'postern-auth', 'standin'])} | {L['non2xx']} / {L['errors']} |")
    w("")
    w("### Memory of the running stack, idle after warm-up")
    w("")
    w("| process | Pss | Rss |")
    w("| --- | --- | --- |")
    per, total = R["mem_idle"]
    for label, (pss, rss) in per.items():
        w(f"| {label} | {pss:,} KiB | {rss:,} KiB |")
    w(f"| **postern stack, all** | **{total[0]:,} KiB** | **{total[1]:,} KiB** |")
    fper, ftotal = R["mem_floor"]
    for label, (pss, rss) in fper.items():
        w(f"| floor: {label} | {pss:,} KiB | {rss:,} KiB |")
    sp, sr = R["mem_standin"]
    w(f"| stand-in (not part of either) | {sp:,} KiB | {sr:,} KiB |")
    aper, atotal = R["mem_after"]
    w(f"| postern stack after all FastCGI runs | {atotal[0]:,} KiB | {atotal[1]:,} KiB |")
    w("")
    w("Rss counts shared library pages in every process; Pss shares them out, "
      "so the Pss sum is what the stack costs together. Pss also falls when other "
      "programs on the machine map the same libraries (other people's test runs "
      "here), so it moves between runs; Rss does not.")
    w("")
    if R.get("notes"):
        w("### Notes")
        w("")
        for n in R["notes"]:
            w(f"- {n}")
        w("")
    w("### Reproduce")
    w("")
    w("```sh")
    w("apt-get install -y wrk lighttpd   # and the build dependencies (scripts/install-deps)")
    w(f"python3 bench/foundation.py --duration {R['duration']} --runs {R['runs']}"
      + ("" if R["rev_arg"] is None else f" --rev {R['rev_arg']}"))
    w("```")
    w("")
    w("It builds the commit (default HEAD) optimised without sanitizers from a "
      "`git archive` export (`--worktree` measures the work tree instead, built "
      "in `build/bench`), compiles `bench/standin.c` with `cc -O2`, runs "
      "everything on 127.0.0.1 with random ports, prints the table and "
      "rewrites this section. `--no-write` leaves this file alone; `--json FILE` "
      "saves every run.")
    return "\n".join(out) + "\n"


def write_benchmarks(section):
    path = os.path.join(REPO, "docs", "BENCHMARKS.md")
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ("# Benchmarks\n\nWhat postern costs, measured against the floor "
                "beneath it on the same machine in the same run (the method of "
                "the project brief's performance notes). Absolute numbers "
                "drift between runs and machines; the ratios hold better.\n\n")
    m = re.search(r"^## Foundation\n.*?(?=^## |\Z)", text, re.M | re.S)
    if m:
        text = text[:m.start()] + section + ("\n" if text[m.end():] else "") + text[m.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(path, "w") as f:
        f.write(text)
    return path


# -- main -------------------------------------------------------------------------------------

def run(args, tmp, procs):
    R = {"duration": args.duration, "quiet_gave_up": 0, "quiet_waited": 0.0, "runs": args.runs, "notes": [],
         "rev_arg": None if args.worktree else args.rev}
    lighttpd = shutil.which("lighttpd") or "/usr/sbin/lighttpd"
    for tool in ("wrk", "cc", lighttpd):
        if not shutil.which(tool):
            raise RuntimeError(f"{tool} is not installed (apt-get install -y wrk lighttpd gcc)")
    src, build, desc = prepare_source(args, tmp)
    R["what"] = desc
    os.environ["POSTERN_SRCDIR"] = src
    os.environ["POSTERN_BUILDDIR"] = build
    sys.path.insert(0, os.path.join(src, "tests", "harness"))
    from stack import Stack  # noqa: E402  (reads the two variables above)

    cpu_model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    R["machine"] = (f"{os.cpu_count()} cores ({cpu_model}), Linux {platform.release()}, "
                    f"{platform.machine()}")
    R["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    curl_v = version_of(["curl-config", "--version"])
    sqlite_v = version_of(["pkg-config", "--modversion", "sqlite3"])
    fcgi_v = version_of(["dpkg-query", "-W", "-f", "${Version}", "libfcgi0ldbl"])
    jsonc_v = version_of(["pkg-config", "--modversion", "json-c"])

    R["setup_quiet"] = (
        f"These cores are shared with other people's builds and tests: before each "
        f"measured run the script waits (up to {QUIET['wait']} s) until the rest of the "
        f"machine uses less than {QUIET['limit']:.2f} of a core, and records the CPU "
        "time spent outside the measured processes during each run.")
    standin, sport = start_standin(tmp, procs)
    log(f"stand-in on 127.0.0.1:{sport}")

    st = start_stack(Stack, os.path.join(tmp, "fcgi"), "fcgi", sport, procs)
    cookie = sign_in(st.port)
    R["relay_body"], R["relay_raw"] = check_jmap(st.port, "/api/jmap", cookie)
    floor, fport = start_floor(tmp, sport, lighttpd, procs)
    R["floor_body"], R["floor_raw"] = check_jmap(fport, "/jmap/")
    if R["relay_body"] != R["floor_body"]:
        raise RuntimeError("postern and the floor relay different bodies")
    log(f"postern on {st.url} (pid {st.lighttpd.pid}), floor on 127.0.0.1:{fport}")
    R["setup"] = [
        f"Tools: {version_of([lighttpd, '-v'])}; {version_of(['wrk', '--version']).split(' Copyright')[0]}; "
        f"{version_of(['cc', '--version'])}; Python {platform.python_version()}.",
        f"Libraries: {curl_v}, SQLite {sqlite_v}, libfcgi {fcgi_v}, json-c {jsonc_v}.",
        f"postern: {desc}, built with `scripts/build` (`-g -O2`, no sanitizers).",
        "Upstream: `bench/standin.c` (single-threaded epoll, keep-alive), "
        f"answering every POST with a fixed {R['relay_body']:,}-byte JMAP methodResponses "
        "document and every GET with a session document; one instance serves both sides.",
        "postern: lighttpd with `conf/lighttpd.conf` (one lighttpd worker, "
        "postern-jmap max-procs 2, postern-auth 1) from tests/harness/stack.py; "
        "rate limits so large that they are counted on every request but never refuse "
        "(`api_budget = 100000000`, `login_limit_* = 1000000+`, `login_window = 1m`), "
        "`log_level = warning`.",
        "Floor: the same lighttpd binary, one worker, the same modules plus mod_proxy, "
        "forwarding `/jmap/` to the stand-in (a new upstream connection per "
        "request, as mod_proxy does).",
        f"Load: wrk POST `{JMAP_BODY}` ({len(JMAP_BODY)} bytes) with "
        "`Content-Type: application/json`, `X-Postern-CSRF: 1` and the session "
        "cookie; no Accept-Encoding (so no gzip). 50 connections on 2 threads, "
        "1 connection on 1 thread; wrk runs on the same 2 cores.",
    ]

    jmap_pids = responders(st, "postern-jmap")
    auth_pids = responders(st, "postern-auth")
    if not jmap_pids or not auth_pids:
        raise RuntimeError(f"responders not found under lighttpd: {children(st.lighttpd.pid)}")
    R["jmap_procs"] = len(jmap_pids)

    relay_lua = write_lua(os.path.join(tmp, "relay.lua"), JMAP_BODY, cookie)
    floor_lua = write_lua(os.path.join(tmp, "floor.lua"), JMAP_BODY)
    login_lua = write_lua(os.path.join(tmp, "login.lua"), LOGIN_BODY)
    relay_url = st.url + "/api/jmap"
    floor_url = f"http://127.0.0.1:{fport}/jmap/"
    login_url = st.url + "/api/auth/login"

    # wrk's own CPU: what this process reaped while the run lasted.
    def fcgi_meter(pids, label):
        base = {"lighttpd": (st.lighttpd.pid, "own"), "standin": (standin.pid, "own"),
                "wrk": (os.getpid(), "reaped")}
        for i, pid in enumerate(pids):
            base[f"{label}#{i}"] = (pid, "own")
        return SummingMeter(base, label)

    def floor_meter():
        return CpuMeter({"lighttpd": (floor.pid, "own"), "standin": (standin.pid, "own"),
                         "wrk": (os.getpid(), "reaped")})

    # warm-up: connections, page cache, SQLite, both sides
    log("warm-up ...")
    wrk(relay_url, relay_lua, 50, 2, 2)
    wrk(floor_url, floor_lua, 50, 2, 2)
    wrk(login_url, login_lua, 10, 2, 1)
    time.sleep(1)
    R["mem_idle"] = memory([("lighttpd", st.lighttpd.pid)] +
                           [(f"postern-jmap #{i + 1}", p) for i, p in enumerate(jmap_pids)] +
                           [("postern-auth", p) for p in auth_pids])
    R["mem_floor"] = memory([("lighttpd (mod_proxy)", floor.pid)])
    R["mem_standin"] = smaps(standin.pid)

    def series(label, url, lua, conns, threads, mk):
        out = []
        for i in range(args.runs):
            r = wrk(url, lua, conns, threads, args.duration, mk())
            log(f"  {label} run {i + 1}: {r['rps']:,.0f} req/s p50 {r['p50'] / 1000:.3f} ms "
                f"p99 {r['p99'] / 1000:.3f} ms non-2xx {r['non2xx']} errors {r['errors']} "
                f"cpu/req {', '.join(f'{k} {v:.1f}' for k, v in r['cpu_us_per_req'].items())} µs "
                f"others {r['others']:.2f} cores")
            out.append(r)
        return out

    def interleaved(a, b):
        """Runs two series alternately: a1 b1 a2 b2 ... (drift hits both)."""
        ra, rb = [], []
        for i in range(args.runs):
            for (label, url, lua, conns, threads, mk), acc in ((a, ra), (b, rb)):
                r = wrk(url, lua, conns, threads, args.duration, mk())
                log(f"  {label} run {i + 1}: {r['rps']:,.0f} req/s p50 {r['p50'] / 1000:.3f} ms "
                    f"p99 {r['p99'] / 1000:.3f} ms non-2xx {r['non2xx']} errors {r['errors']} "
                    f"cpu/req {', '.join(f'{k} {v:.1f}' for k, v in r['cpu_us_per_req'].items())} µs "
                    f"others {r['others']:.2f} cores")
                acc.append(r)
        return ra, rb

    jm = lambda: fcgi_meter(jmap_pids, "postern-jmap")  # noqa: E731
    am = lambda: fcgi_meter(auth_pids, "postern-auth")  # noqa: E731

    log(f"relay vs floor, 50 connections, {args.runs} x {args.duration} s ...")
    a, b = interleaved(("postern", relay_url, relay_lua, 50, 2, jm),
                       ("floor", floor_url, floor_lua, 50, 2, floor_meter))
    R["relay50"], R["floor50"] = median_run(a), median_run(b)
    R["raw"] = {"relay50": a, "floor50": b}
    log("relay vs floor, 1 connection ...")
    a, b = interleaved(("postern c1", relay_url, relay_lua, 1, 1, jm),
                       ("floor c1", floor_url, floor_lua, 1, 1, floor_meter))
    R["relay1"], R["floor1"] = median_run(a), median_run(b)
    R["raw"].update({"relay1": a, "floor1": b})
    # The relay answers must still be right after the load.
    check_jmap(st.port, "/api/jmap", cookie)
    if args.relay_only:
        return R

    # How fast is this machine today? The same lighttpd serving a 2 KB file,
    # the first row of the floor table in performance.md.
    log("calibration: lighttpd static 2 KB file ...")
    static_lua = write_lua(os.path.join(tmp, "static.lua"), None)
    runs = series("static", f"http://127.0.0.1:{fport}/static.txt", static_lua, 50, 2,
                  floor_meter)
    R["static"] = median_run(runs)
    R["raw"]["static"] = runs

    log("sign-ins ...")
    for n in (10, 50):
        runs = series(f"sign-in c{n}", login_url, login_lua, n, 2, am)
        R[f"login{n}"] = median_run(runs)
        R["raw"][f"login{n}"] = runs
    time.sleep(1)
    R["mem_after"] = memory([("lighttpd", st.lighttpd.pid)] +
                            [(f"postern-jmap #{i + 1}", p) for i, p in enumerate(jmap_pids)] +
                            [("postern-auth", p) for p in auth_pids])
    R["logged_fcgi"] = logged_problems(st)
    R["sessions_created"] = sum(r["requests"] for n in (10, 50) for r in R["raw"][f"login{n}"])

    # Stop the FastCGI stack and the floor before the CGI runs.
    procs.stop("floor lighttpd")
    procs.stop("postern fcgi")

    log("CGI ...")
    cst = start_stack(Stack, os.path.join(tmp, "cgi"), "cgi", sport, procs)
    ccookie = sign_in(cst.port)
    check_jmap(cst.port, "/api/jmap", ccookie)
    cgi_lua = write_lua(os.path.join(tmp, "cgi.lua"), JMAP_BODY, ccookie)
    cgi_url = cst.url + "/api/jmap"

    def cgi_meter():
        return CpuMeter({"lighttpd": (cst.lighttpd.pid, "own"),
                         "cgi children": (cst.lighttpd.pid, "reaped"),
                         "standin": (standin.pid, "own"), "wrk": (os.getpid(), "reaped")})

    wrk(cgi_url, cgi_lua, 50, 2, 2)
    runs = series("cgi c50", cgi_url, cgi_lua, 50, 2, cgi_meter)
    R["cgi50"] = median_run(runs)
    R["raw"]["cgi50"] = runs
    runs = series("cgi c1", cgi_url, cgi_lua, 1, 1, cgi_meter)
    R["cgi1"] = median_run(runs)
    R["raw"]["cgi1"] = runs
    check_jmap(cst.port, "/api/jmap", ccookie)
    R["logged_cgi"] = logged_problems(cst)
    for mode in ("fcgi", "cgi"):
        lines = R[f"logged_{mode}"]
        if lines:
            shown = "; ".join(f"`{re.sub(r'/tmp/postern-bench-[^/]+/', '', l)[-160:]}`"
                              for l in lines[:4])
            R["notes"].append(f"postern ({mode}) logged {len(lines)} warnings or errors "
                              f"during the run: {shown}" + (" ..." if len(lines) > 4 else ""))
    return R


class SummingMeter(CpuMeter):
    """A CpuMeter that also sums labels "<name>#<i>" into "<name>"."""

    def __init__(self, procs, name):
        super().__init__(procs)
        self.name = name

    def stop(self):
        d = super().stop()
        parts = [k for k in d if k.startswith(self.name + "#")]
        d[self.name] = sum(d.pop(k) for k in parts)
        return d


def print_table(R):
    m, f, m1, f1 = R["relay50"], R["floor50"], R["relay1"], R["floor1"]
    rows = [
        ("relay c50 req/s", fmt_rps(m["rps"]), fmt_rps(f["rps"]), fmt_x(m["rps"], f["rps"])),
        ("relay c50 p50", fmt_ms(m["p50"]), fmt_ms(f["p50"]), fmt_x(m["p50"], f["p50"])),
        ("relay c50 p99", fmt_ms(m["p99"]), fmt_ms(f["p99"]), fmt_x(m["p99"], f["p99"])),
        ("relay c1 p50", fmt_ms(m1["p50"]), fmt_ms(f1["p50"]), fmt_x(m1["p50"], f1["p50"])),
        ("relay c1 req/s", fmt_rps(m1["rps"]), fmt_rps(f1["rps"]), fmt_x(m1["rps"], f1["rps"])),
        ("CPU/req lighttpd", f"{m['cpu_us']['lighttpd']:.1f} µs", f"{f['cpu_us']['lighttpd']:.1f} µs", ""),
        ("CPU/req postern-jmap", f"{m['cpu_us']['postern-jmap']:.1f} µs", "–", ""),
        ("CPU/req front+app", f"{m['cpu_us']['lighttpd'] + m['cpu_us']['postern-jmap']:.1f} µs",
         f"{f['cpu_us']['lighttpd']:.1f} µs",
         fmt_x(m['cpu_us']['lighttpd'] + m['cpu_us']['postern-jmap'], f['cpu_us']['lighttpd'])),
        ("CPU/req stand-in", f"{m['cpu_us']['standin']:.1f} µs", f"{f['cpu_us']['standin']:.1f} µs", ""),
        ("non-200 / errors", f"{m['non2xx'] + m1['non2xx']} / {m['errors'] + m1['errors']}",
         f"{f['non2xx'] + f1['non2xx']} / {f['errors'] + f1['errors']}", ""),
    ]
    if "cgi50" in R:
        rows += rest_rows(R)
    w = [max(len(r[i]) for r in rows + [("figure", "postern", "floor", "ratio")]) for i in range(4)]
    line = lambda r: "  ".join(c.ljust(w[i]) for i, c in enumerate(r))  # noqa: E731
    print(line(("figure", "postern", "floor", "ratio")))
    print(line(tuple("-" * x for x in w)))
    for r in rows:
        print(line(r))


def rest_rows(R):
    """The table's rows beyond the relay (CGI, sign-ins, calibration, memory)."""
    m, cgi, L10, L50 = R["relay50"], R["cgi50"], R["login10"], R["login50"]
    return [
        ("CGI c50 req/s", fmt_rps(cgi["rps"]), "", f"FastCGI/CGI {fmt_x(m['rps'], cgi['rps'])}"),
        ("CGI c50 p50 / p99", f"{fmt_ms(cgi['p50'])} / {fmt_ms(cgi['p99'])}", "", ""),
        ("CGI CPU/req", f"{cgi['cpu_us']['lighttpd'] + cgi['cpu_us']['cgi children']:.1f} µs", "", ""),
        ("CGI c1 p50", fmt_ms(R["cgi1"]["p50"]), "", ""),
        ("CGI non-200 / errors", f"{cgi['non2xx'] + R['cgi1']['non2xx']} / {cgi['errors'] + R['cgi1']['errors']}", "", ""),
        ("sign-ins/s c10", fmt_rps(L10["rps"]), "", f"p50 {fmt_ms(L10['p50'])}"),
        ("sign-ins/s c50", fmt_rps(L50["rps"]), "", f"p50 {fmt_ms(L50['p50'])}"),
        ("sign-in non-200 / errors", f"{L10['non2xx'] + L50['non2xx']} / {L10['errors'] + L50['errors']}", "", ""),
        ("static 2 KB (calibration)", "", fmt_rps(R["static"]["rps"]) + " req/s",
         f"lighttpd {R['static']['cpu_us']['lighttpd']:.1f} µs/req"),
        ("idle Pss (sum)", f"{R['mem_idle'][1][0]:,} KiB", f"{R['mem_floor'][1][0]:,} KiB", ""),
        ("idle Rss (sum)", f"{R['mem_idle'][1][1]:,} KiB", f"{R['mem_floor'][1][1]:,} KiB", ""),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=int, default=10, help="seconds per load run (default 10)")
    ap.add_argument("--runs", type=int, default=3, help="runs per figure, median (default 3)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--rev", default="HEAD", help="commit to measure (default HEAD)")
    g.add_argument("--worktree", action="store_true",
                   help="measure the work tree as it is (built in build/bench)")
    ap.add_argument("--builddir", help="build here instead")
    ap.add_argument("--no-build", action="store_true", help="use --builddir as it is")
    ap.add_argument("--no-write", action="store_true", help="do not write docs/BENCHMARKS.md")
    ap.add_argument("--json", help="save every figure and run to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--relay-only", action="store_true",
                    help="only the relay against the floor (50 and 1 connections); "
                    "prints the table, writes no docs")
    ap.add_argument("--quiet-wait", type=int, default=QUIET["wait"],
                    help="seconds to wait for a quiet machine before each run "
                    f"(default {QUIET['wait']})")
    ap.add_argument("--from-json", help="only rebuild the table and the section "
                    "from a file written by --json")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            R = json.load(f)
        for k, runs in R["raw"].items():
            R[k] = median_run(runs)
        print_table(R)
        section = build_report(R)
        if not args.no_write:
            log(f"wrote {write_benchmarks(section)}")
        return 0
    if args.duration < 1 or args.duration > 120 or args.runs < 1 or args.runs > 9:
        ap.error("--duration 1..120, --runs 1..9")
    if args.no_build and not args.builddir:
        ap.error("--no-build needs --builddir")
    QUIET["wait"] = max(0, args.quiet_wait)

    procs = Procs()
    tmp = tempfile.mkdtemp(prefix="postern-bench-")

    def on_term(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_term)
    try:
        R = run(args, tmp, procs)
        R["quiet_gave_up"], R["quiet_waited"] = QUIET["gave_up"], QUIET["waited"]
    except KeyboardInterrupt:
        log("interrupted; stopping everything")
        return 130
    finally:
        procs.stop_all()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    print_table(R)
    if args.relay_only:
        m, f = R["relay50"], R["floor50"]
        mc, fc = sum(m["cpu_us"].values()), sum(f["cpu_us"].values())
        print(f"# relay/floor at 50 connections: {m['rps'] / f['rps']:.2f}x "
              f"({m['rps']:,.0f} / {f['rps']:,.0f} req/s); load average "
              f"{os.getloadavg()[0]:.2f}; quiet wait gave up {QUIET['gave_up']} times")
        # On a busy machine the side with more processes gets more of the
        # cores; CPU per request (every process of a side, wrk included)
        # gives the ratio the two would reach on cores of their own.
        print(f"# CPU per request, all processes: postern {mc:.1f} µs, floor {fc:.1f} µs: "
              f"CPU-bound ratio {fc / mc:.2f}x")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(R, fh, indent=1, default=str)
        return 0
    keys = ("relay50", "relay1", "floor50", "floor1", "static", "cgi50", "cgi1",
            "login10", "login50")
    bad = sum(R[k]["non2xx"] for k in keys)
    errors = sum(R[k]["errors"] for k in keys)
    if bad or errors:
        R["notes"].append(f"{bad} answers were not 200 and {errors} requests failed at "
                          "the socket level: the figures are suspect.")
    section = build_report(R)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(R, f, indent=1, default=str)
    if not args.no_write:
        log(f"wrote {write_benchmarks(section)}")
    return 1 if bad or errors else 0


if __name__ == "__main__":
    sys.exit(main())
