#!/usr/bin/env python3
"""Faults, each shown to the user as a status and a JSON error, with no
crash, nothing half-written, and recovery once the fault clears.

The upstream is the Stalwart-behaviour test server behind
tests/harness/faulty.py, which refuses, hangs, resets mid-body or answers
garbage per path; the stack runs with small upstream timeouts. Faults:
every upstream fault for sign-in, the JMAP relay, uploads and downloads,
and pushd's upstream (relay and poll); the state database busy, locked,
read-only and on a full disk (a small tmpfs mounted in the test's folder;
the test skips those checks where mounting is not permitted); pushd killed
with SIGKILL during a fan-out to 1,000 streams; lighttpd's graceful
restart (SIGUSR1) with streams and requests in flight. Loopback only;
every wait has a deadline. Arguments name parts to run alone (e.g.
db_busy), for debugging."""

import http.client
from contextlib import closing
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from faulty import Faulty  # noqa: E402
from stack import SLOW, Stack, children, free_port, proc_args  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, changed, is_state, wait_for  # noqa: E402
from test_pushd_stalwart import Upstream  # noqa: E402

ALICE, BOB = "alice@example.test", "bob@example.test"
PASSWORDS = {ALICE: "alice-demo-pass", BOB: "bob-demo-pass"}
CONNECT_TIMEOUT = 1     # upstream_connect_timeout
TIMEOUT = 2             # upstream_timeout
SLACK = 4               # what a bounded wait may take beyond its timeout
BUSY = 5                # store.c's busy handler gives up after about this
TABS = 1000
UPSTREAM_MODES = ("refuse", "hang", "reset", "truncate", "garbage", "html", "huge",
                  "error")
DB_MB = 4               # the state database's tmpfs
KEEPALIVE_IDLE = 5      # lighttpd's server.max-keep-alive-idle (its default)


def responder_name(pid):
    """The postern responder a process runs, from its command line, or
    None."""
    names = [os.path.basename(a) for a in proc_args(pid)]
    return next((n for n in names if n.startswith("postern-")), None)


def holders(folder):
    """{pid: command line} of the processes with a file in folder open."""
    out = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(folder + "/")
                   for fd in fds):
                out[int(pid)] = " ".join(proc_args(pid))[:200]
        except OSError:
            continue
    return out


def responder_pids(lighttpd_pid):
    """{pid: name} of the postern responders this lighttpd runs now."""
    names = {pid: responder_name(pid) for pid in children(lighttpd_pid)}
    return {pid: name for pid, name in names.items() if name}


def fetch(c, method, path, body=None, headers=None):
    """The response, or a Response-like object with status 'cut' when the
    connection broke before a whole answer arrived."""
    try:
        return c.request(method, path, body, headers=headers)
    except (http.client.HTTPException, OSError) as e:
        return type("Cut", (), {"status": "cut", "body": repr(e).encode(),
                                "header": lambda self, n: None})()


def json_error(r):
    """The "error" code of a JSON error answer, or None."""
    if r.status == "cut":
        return None
    try:
        o = json.loads(r.body)
    except (ValueError, RecursionError):
        return None
    ct = r.header("Content-Type") or ""
    if not ct.startswith("application/json") or not isinstance(o, dict):
        return None
    return o.get("error") if isinstance(o.get("error"), str) and o.get("message") else None


def is_cut_json(r):
    """A relayed answer that began as 200 and broke: the app cannot parse
    it and reports the failure (a status can no longer be sent)."""
    if r.status == "cut":
        return True
    try:
        json.loads(r.body)
        return False
    except (ValueError, RecursionError):
        return r.status == 200


class Suite:
    def __init__(self, tap, stack, up, faulty, root):
        self.t = tap
        self.s = stack
        self.up = up
        self.f = faulty
        self.root = root
        self.streams = []

    # -- helpers -------------------------------------------------------------

    def signed_in(self, user=ALICE):
        c = Client(self.s.url, timeout=30)
        r = c.login(user, PASSWORDS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        c.account = r.json()["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        return c

    def db(self, sql, args=()):
        con = sqlite3.connect(self.s.state_db, timeout=30)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def sessions(self):
        return self.db("SELECT count(*) FROM sessions")[0][0]

    def echo(self, c):
        return fetch(c, "POST", "/api/jmap",
                     {"using": ["urn:ietf:params:jmap:core"],
                      "methodCalls": [["Core/echo", {"hello": 1}, "0"]]})

    def upload(self, c, data=b"fault test blob"):
        return fetch(c, "POST", f"/api/upload/{c.account}", data,
                     headers={"Content-Type": "text/plain"})

    def download(self, c, blob):
        return fetch(c, "GET", f"/api/blob/{c.account}/{blob}/f.txt?accept=text/plain")

    def fault(self, prefix, mode):
        if mode == "refuse":
            self.f.refuse()
        else:
            self.f.set(prefix, mode)

    def has_change(self, delivered):
        """A predicate: a state event carrying the Email state of this
        delivery (/_control/deliver's answer), not just any event."""
        aid, want = self.up.accounts[ALICE], delivered["states"]["Email"]
        return lambda e: is_state(e) and changed(e).get(aid, {}).get("Email") == want

    def heal(self, mode):
        if mode == "refuse":
            self.f.accept()
        self.f.clear()

    def check_error(self, r, took, mode, what, relayed=False, cut_wait=0):
        """A fault's answer: 502 upstream_error or 504 upstream_timeout in
        JSON, in bounded time; a relayed answer may instead be cut (a
        download with its Content-Length sent is seen cut only when
        lighttpd closes the connection: cut_wait more seconds)."""
        code = json_error(r)
        ok = (r.status, code) in ((502, "upstream_error"), (504, "upstream_timeout"))
        if relayed and not ok:
            ok = is_cut_json(r)
        self.t.ok(ok, f"{what}, upstream {mode}: a JSON 502/504 error"
                  + (" (or a visibly cut answer)" if relayed else ""),
                  f"{r.status} {r.body[:200]!r}")
        if mode == "hang":
            self.t.eq(code, "upstream_timeout", f"{what}, upstream hangs: 504 upstream_timeout")
        bound = TIMEOUT + SLACK * SLOW + (cut_wait if r.status in (200, "cut") else 0)
        self.t.ok(took < bound, f"{what}, upstream {mode}: answered within "
                  f"{bound} s", f"took {took:.1f} s")

    # -- the upstream's faults -------------------------------------------------

    def upstream_faults(self):
        c = self.signed_in()
        r = self.upload(c)
        blob = r.json()["blobId"] if r.status in (200, 201) else "none"
        self.echo(c)
        # Taken once each responder has answered: lighttpd may start them
        # after it listens.
        pids = responder_pids(self.s.lighttpd.pid)
        # And a status postern has no phrase for: no answer to pass on.
        for mode in UPSTREAM_MODES + ("oddstatus",):
            self.sign_in_fault(mode)
            self.relay_fault(c, mode)
            self.blob_fault(c, mode, blob)
        now = responder_pids(self.s.lighttpd.pid)
        self.t.ok(pids and set(pids) <= set(now), "no responder died under the upstream's faults",
                  f"before {pids}, after {now}")

    def sign_in_fault(self, mode):
        before = self.sessions()
        c = Client(self.s.url, timeout=30)
        self.fault("/.well-known/", mode)
        self.fault("/jmap/session", mode)
        t0 = time.monotonic()
        r = fetch(c, "POST", "/api/auth/login",
                  {"username": BOB, "password": PASSWORDS[BOB], "remember": False})
        self.check_error(r, time.monotonic() - t0, mode, "sign-in")
        self.t.ok(c.cookie is None, f"sign-in, upstream {mode}: no cookie")
        self.t.eq(self.sessions(), before, f"sign-in, upstream {mode}: no session stored")
        self.heal(mode)
        r = c.login(BOB, PASSWORDS[BOB])
        self.t.ok(r.status == 200 and c.cookie, f"sign-in, upstream {mode}: works "
                  "once the fault clears", r)
        fetch(c, "POST", "/api/auth/logout")

    def relay_fault(self, c, mode):
        self.fault("/jmap/$", mode)
        t0 = time.monotonic()
        r = self.echo(c)
        self.check_error(r, time.monotonic() - t0, mode, "JMAP relay", relayed=True)
        self.heal(mode)
        r = self.echo(c)
        self.t.ok(r.status == 200 and "methodResponses" in r.json(),
                  f"JMAP relay, upstream {mode}: works once the fault clears", r)
        self.t.ok(c.cookie is not None, f"JMAP relay, upstream {mode}: the session lives on")

    def blob_fault(self, c, mode, blob):
        self.fault("/jmap/upload/", mode)
        t0 = time.monotonic()
        r = self.upload(c)
        self.check_error(r, time.monotonic() - t0, mode, "upload")
        self.heal(mode)
        self.fault("/jmap/download/", mode)
        t0 = time.monotonic()
        r = self.download(c, blob)
        self.check_error(r, time.monotonic() - t0, mode, "download", relayed=True,
                         cut_wait=KEEPALIVE_IDLE)
        self.heal(mode)
        r = self.upload(c)
        self.t.ok(r.status in (200, 201), f"upload, upstream {mode}: works once the "
                  "fault clears", r)
        r = self.download(c, blob)
        self.t.eq(r.status, 200, f"download, upstream {mode}: works once the fault clears")

    # -- pushd's upstream --------------------------------------------------------

    def tabs(self, c, n, query="types=*&ping=5"):
        out = [Stream(self.s.port, c.cookie, query) for _ in range(n)]
        self.streams += out
        return out

    def pushd_faults(self, label):
        """pushd's upstream channel faulted: pushd lives, its tabs stay
        open (pings), and a change made while it was down arrives after."""
        c = self.signed_in()
        tabs = self.tabs(c, 5)
        self.t.ok(all(s.status == 200 for s in tabs), f"pushd {label}: tabs open")
        # The first poll's answer is the baseline: a change before it is
        # not news, and a first poll the fault stops is none.
        self.t.ok(wait_for(lambda: self.push_account("state"), 10 * SLOW),
                  f"pushd {label}: the account's states are known")
        for mode in UPSTREAM_MODES:
            if label == "relay":
                tabs = self.relaying(c, tabs, mode)
            try:
                self.pushd_fault(label, tabs, mode)
            finally:
                self.heal(mode)
        for s in tabs:
            s.close()

    def push_account(self, column="mode"):
        """A column (mode, state) of the row pushd keeps for the account
        with tabs."""
        try:
            # closing(): a connection's own "with" only ends a transaction,
            # and one left open keeps the file system from going read-only.
            with closing(sqlite3.connect(f"file:{self.s.state_db}?mode=ro", uri=True,
                                         timeout=5)) as db:
                row = db.execute(f"SELECT {column} FROM push_accounts WHERE tabs > 0"
                                 " ORDER BY updated DESC LIMIT 1").fetchone()
            return row[0] if row else None
        except sqlite3.Error:
            return None

    def relaying(self, c, tabs, mode):
        """Each relay-mode fault starts from a relayed stream, not from a
        fallback an earlier fault left (its retry backoff reaches 60 s):
        when the account is not relaying, pushd is restarted and the tabs
        opened again."""
        if wait_for(lambda: self.push_account() == "relay", 3 * SLOW):
            return tabs
        for s in tabs:
            s.close()
        self.s.stop_pushd()
        self.s.start_pushd()
        tabs = self.tabs(c, 5)
        up = wait_for(lambda: self.push_account() == "relay" and
                      self.push_account("state"), 10 * SLOW)
        self.t.ok(up and all(s.status == 200 for s in tabs),
                  f"pushd relay, upstream {mode}: relaying before the fault",
                  self.push_account())
        return tabs

    def pushd_fault(self, label, tabs, mode):
        self.fault("/jmap/eventsource", mode)
        self.fault("/jmap/$", mode)
        self.up.control("drop-streams", {})
        # Into the fault (pushd's reconnects and polls meet it) before the
        # checks; not a synchronisation: they hold at any moment of it.
        time.sleep(TIMEOUT + 1)
        ping = tabs[0].wait(lambda e: e.get("event") == "ping", 12)
        self.t.ok(ping is not None, f"pushd {label}, upstream {mode}: tabs still "
                  "open and pinged")
        self.t.ok(self.s.pushd.poll() is None, f"pushd {label}, upstream {mode}: "
                  "pushd is running")
        ev = self.up.control("deliver", {"account": ALICE, "subject": f"during {mode}"})
        self.heal(mode)
        got = [s.wait(self.has_change(ev), 20) for s in tabs]
        self.t.ok(all(got), f"pushd {label}, upstream {mode}: the change made "
                  "during the fault reaches every tab after it clears",
                  f"{sum(1 for g in got if g)}/{len(tabs)}")

    def pushd_relay_first(self):
        """The mail server takes pushd's first event stream request and
        never answers (a restart as the first tab opens): the account is
        polled meanwhile, and relayed once the stream answers, not polled
        for good as a server without an event stream is."""
        c = self.signed_in()
        for s in self.streams:
            s.close()
        self.s.stop_pushd()
        self.fault("/jmap/eventsource", "hang")
        try:
            self.s.start_pushd()
            tabs = self.tabs(c, 2)
            # The first poll's answer is the baseline: the change comes after.
            polled = wait_for(lambda: self.push_account("state"), 30 * SLOW)
            self.t.ok(polled, "pushd relay, first stream unanswered: the account is polled")
            ev = self.up.control("deliver", {"account": ALICE, "subject": "first hang"})
            got = [s.wait(self.has_change(ev), 30 * SLOW) for s in tabs]
            self.t.ok(all(got), "pushd relay, first stream unanswered: a change "
                      "reaches the tabs by polling", f"{sum(1 for g in got if g)}/2")
        finally:
            self.heal("hang")
        up = wait_for(lambda: self.push_account() == "relay", 30 * SLOW)
        self.t.ok(up, "pushd relay, first stream unanswered: relayed once it "
                  "answers", self.push_account())
        ev = self.up.control("deliver", {"account": ALICE, "subject": "first relayed"})
        got = [s.wait(self.has_change(ev), 20) for s in tabs]
        self.t.ok(all(got), "pushd relay, first stream unanswered: a change "
                  "reaches the tabs after", f"{sum(1 for g in got if g)}/2")
        for s in tabs:
            s.close()

    def pushd_poll_faults(self):
        """The same with pushd polling (push_mode = poll): pushd is
        restarted on the changed configuration, and back after."""
        self.s.stop_pushd()
        self.s.conf_extra["push_mode"] = "poll"
        self.s.write_conf(self.f.url)
        self.s.start_pushd()
        try:
            self.pushd_faults("poll")
        finally:
            self.s.stop_pushd()
            self.s.conf_extra["push_mode"] = "relay"
            self.s.write_conf(self.f.url)
            self.s.start_pushd()

    # -- the state database --------------------------------------------------------

    def hold(self, how, seconds):
        """Another process holding the database: 'busy' (a write
        transaction) or 'locked' (every lock of the WAL index, as a tool
        that locks the file would: readers wait too)."""
        if how == "locked":
            # SQLite's WAL-index locks: bytes 120-127 of the -shm file
            # (write, checkpoint, recover, the five read marks).
            take = ("import fcntl\nf=open(sys.argv[1]+'-shm','r+b')\n"
                    "fcntl.lockf(f,fcntl.LOCK_EX,8,120)\n")
        else:
            take = ("c=sqlite3.connect(sys.argv[1],isolation_level=None,timeout=30)\n"
                    "c.executescript('BEGIN IMMEDIATE; INSERT INTO rate(key,win,n,until)"
                    " VALUES(\"fault-test\",0,1,0) ON CONFLICT DO NOTHING;')\n")
        code = (f"import sqlite3,sys,time\n{take}"
                f"print('held',flush=True)\ntime.sleep({seconds})\n")
        p = subprocess.Popen([sys.executable, "-c", code, self.s.state_db],
                             stdout=subprocess.PIPE)
        line = p.stdout.readline()
        if line.strip() != b"held":
            p.wait()
            raise RuntimeError(f"could not {how} the database")
        return p

    def check_unavailable(self, r, what):
        self.t.ok(r.status == 503 and json_error(r) == "service_unavailable",
                  f"{what}: 503 service_unavailable in JSON", f"{r.status} {r.body[:200]!r}")

    def db_fault_requests(self, how, c, reads_fail):
        """Sign-in, a session check and a rate-limited request while the
        database is faulted."""
        b = Client(self.s.url, timeout=30)
        r = fetch(b, "POST", "/api/auth/login",
                  {"username": BOB, "password": PASSWORDS[BOB], "remember": False})
        self.check_unavailable(r, f"sign-in, database {how}")
        self.t.ok(b.cookie is None, f"sign-in, database {how}: no cookie")
        r = fetch(c, "GET", "/api/auth/session")
        if reads_fail:
            self.check_unavailable(r, f"session check, database {how}")
        else:
            self.t.eq(r.status, 200, f"session check, database {how}: still answered "
                      "(reads need no write lock)")
        self.t.ok(c.cookie is not None, f"database {how}: the session is not ended")
        r = self.echo(c)
        self.check_unavailable(r, f"rate-limited JMAP request, database {how}")

    def db_recovered(self, how, c, before):
        b = Client(self.s.url, timeout=30)
        r = b.login(BOB, PASSWORDS[BOB])
        self.t.ok(r.status == 200 and b.cookie, f"database {how}: sign-in works after", r)
        if before is not None:
            self.t.eq(self.sessions(), before + 1, f"database {how}: exactly the one "
                      "later session stored, nothing from the failed one")
        r = self.echo(c)
        self.t.eq(r.status, 200, f"database {how}: JMAP works after")
        r = fetch(c, "GET", "/api/auth/session")
        self.t.eq(r.status, 200, f"database {how}: the session check works after")
        self.t.eq(self.db("PRAGMA integrity_check")[0][0], "ok",
                  f"database {how}: integrity_check ok after")
        fetch(b, "POST", "/api/auth/logout")

    def db_busy(self, how):
        c = self.signed_in()
        before = self.sessions()
        p = self.hold(how, BUSY + 25)
        try:
            if how == "busy":
                self.db_fault_requests(how, c, reads_fail=False)
                r = fetch(Client(self.s.url), "GET", "/api/health")
                self.t.eq(r.status, 200, "health, database busy (a read)")
            else:
                before = self.db_locked_requests(c, before)
        finally:
            p.kill()
            p.wait()
        self.t.eq(self.s.pushd.poll(), None, f"database {how}: pushd is running")
        self.db_recovered(how, c, before)

    def db_locked_requests(self, c, before):
        """Under a foreign lock SQLite itself decides which connection gets
        through (a WAL reader may fall back to the file): each request is a
        503 in JSON or a whole success, never a 500, and the lock bites."""
        b = Client(self.s.url, timeout=30)
        answers = [("sign-in", fetch(b, "POST", "/api/auth/login",
                                     {"username": BOB, "password": PASSWORDS[BOB],
                                      "remember": False})),
                   ("session check", fetch(c, "GET", "/api/auth/session")),
                   ("JMAP", self.echo(c)),
                   ("health", fetch(Client(self.s.url), "GET", "/api/health"))]
        for what, r in answers:
            self.t.ok(r.status == 200 or (r.status == 503 and
                      json_error(r) == "service_unavailable"),
                      f"{what}, database locked: 200, or 503 service_unavailable in JSON",
                      f"{r.status} {r.body[:200]!r}")
        self.t.ok(any(r.status == 503 for _, r in answers),
                  "database locked: the lock bites (some request is a 503)")
        self.t.ok(answers[0][1].status == 200 or b.cookie is None,
                  "sign-in, database locked: no cookie unless it succeeded")
        return before + (1 if answers[0][1].status == 200 else 0)

    def remount(self, opts):
        """Remounts the database's file system. Read-only waits while a
        stopped process still holds a file open for writing (under
        valgrind a responder takes seconds to exit after lighttpd)."""
        end = time.monotonic() + 10 * SLOW
        while True:
            r = subprocess.run(["mount", "-o", f"remount,{opts}", self.dbdir],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return
            if time.monotonic() > end:
                raise RuntimeError(f"remount,{opts}: {r.stderr.strip()}; open there: "
                                   f"{holders(self.dbdir)}")
            time.sleep(0.2)

    def db_readonly(self):
        """The database's file system read-only: the responders and pushd
        start on it (a file system cannot become read-only under a writer),
        and SQLite cannot open a WAL database there at all. The responders
        answer 503 and open it once it is writable again, without a
        restart; pushd refuses to start, saying why (its supervisor starts
        it again)."""
        c = self.signed_in()
        before = self.sessions()
        self.s.stop_lighttpd()
        self.s.stop_pushd()
        self.remount("ro")
        try:
            try:
                self.s.start_pushd()
            except RuntimeError:
                pass
            code = self.s.pushd.wait(10 * SLOW) if self.s.pushd else None
            self.t.eq(code, 1, "database read-only: pushd refuses to start (exit 1)")
            self.t.ok("state.db: unable to open database file" in self.s.pushd_tail(),
                      "database read-only: pushd logs why", self.s.pushd_tail())
            self.s.pushd = None
            self.s.start_lighttpd()
            self.db_fault_requests("read-only", c, reads_fail=True)
            r = fetch(Client(self.s.url), "GET", "/api/health")
            self.check_unavailable(r, "health, database read-only")
        finally:
            self.remount("rw")
        self.s.start_pushd()
        self.db_recovered("read-only", c, before)

    def db_full(self):
        c = self.signed_in()
        filler = os.path.join(self.dbdir, "filler")
        results = []
        try:
            # Unbuffered: a write the full disk refused leaves nothing for
            # close() to flush again (a buffered one raised ENOSPC there).
            with open(filler, "wb", buffering=0) as f:
                try:
                    while True:
                        f.write(b"\0" * 65536)
                except OSError:
                    pass
            # The WAL may have room left: sign in until the disk says no.
            for i in range(40):
                b = Client(self.s.url, timeout=30)
                r = fetch(b, "POST", "/api/auth/login",
                          {"username": BOB, "password": PASSWORDS[BOB], "remember": False})
                results.append((r, b.cookie))
                if r.status == 503:
                    break
            self.check_unavailable(results[-1][0], "sign-in, disk full")
            self.t.ok(results[-1][1] is None, "sign-in, disk full: no cookie")
            bad = [r for r, _ in results if r.status not in (200, 503)]
            self.t.ok(not bad, "sign-in, disk full: every answer a 200 or a 503", bad)
            r = self.echo(c)
            self.t.ok(r.status in (200, 503) and (r.status == 200 or
                      json_error(r) == "service_unavailable"),
                      "JMAP, disk full: 200, or 503 in JSON", r)
        finally:
            os.unlink(filler)
        self.t.eq(self.s.pushd.poll(), None, "disk full: pushd is running")
        stored = [b for r, b in results if r.status == 200]
        for cookie in stored:
            b = Client(self.s.url)
            b.cookie = cookie
            self.t.eq(fetch(b, "GET", "/api/auth/session").status, 200,
                      "disk full: a sign-in answered 200 has its session stored")
        self.db_recovered("full", c, None)

    # -- pushd killed, lighttpd reloaded -----------------------------------------

    def pushd_killed(self):
        c = self.signed_in()
        tabs = self.tabs(c, TABS)
        self.t.eq(sum(s.status == 200 for s in tabs), TABS, f"{TABS} tabs open")
        stop = threading.Event()

        def deliver():
            for i in range(50):
                if stop.is_set():
                    return
                try:
                    self.up.control("deliver", {"account": ALICE, "subject": f"fan {i}"})
                except OSError:
                    return
        th = threading.Thread(target=deliver)
        th.start()
        # Kill pushd once the fan-out has begun.
        tabs[-1].wait(is_state, 15)
        self.s.pushd.send_signal(signal.SIGKILL)
        self.s.pushd.wait(10 * SLOW)
        stop.set()
        th.join(30)
        closed = sum(1 for s in tabs if s.wait_closed(20))
        self.t.eq(closed, TABS, "pushd killed: every tab's stream ends (the app reconnects)")
        r = self.echo(c)
        self.t.eq(r.status, 200, "pushd killed: JMAP still answered")
        self.t.eq(self.s.lighttpd.poll(), None, "pushd killed: lighttpd still runs")
        r = fetch(c, "GET", "/api/events?types=*")
        self.t.ok(r.status in (502, 503) or r.status == "cut",
                  "pushd down: /api/events fails at once, not hangs", r)
        for s in tabs:
            s.close()
        self.t.eq(self.db("PRAGMA integrity_check")[0][0], "ok",
                  "pushd killed: integrity_check ok")
        self.s.pushd = None
        self.s.start_pushd()
        tabs, statuses = self.reconnect(c, TABS)
        self.t.ok(len(tabs) == TABS, f"pushd restarted: {TABS} tabs reconnect",
                  f"{len(tabs)} in; other answers {statuses}")
        ev = self.up.control("deliver", {"account": ALICE, "subject": "after restart"})
        got = sum(1 for s in tabs if s.wait(self.has_change(ev), 30))
        self.t.eq(got, TABS, "pushd restarted: a change reaches every tab")
        for s in tabs:
            s.close()

    def reconnect(self, c, n, within=30):
        """n tabs that reconnect as the app does (lighttpd may hold a
        backend that was down as down for a second): retried every second
        until they are in. The open ones, and the other answers seen."""
        done, seen = [], {}
        deadline = time.monotonic() + within
        while len(done) < n and time.monotonic() < deadline:
            for s in self.tabs(c, n - len(done)):
                if s.status == 200:
                    done.append(s)
                else:
                    seen[s.status] = seen.get(s.status, 0) + 1
                    s.close()
            if len(done) < n:
                time.sleep(1)
        return done, seen

    def lighttpd_reload(self):
        c = self.signed_in()
        tabs = self.tabs(c, 20)
        results = []

        cuts = []

        def slow_requests():
            for _ in range(20):
                r = self.echo(c)
                results.append(r.status)
                if r.status != 200:
                    cuts.append(r.body[:200])
                    return
        aid = self.up.accounts[ALICE]

        def in_flight():
            return self.up.control("stats")["inFlight"].get(aid, 0) > 0
        th = threading.Thread(target=slow_requests)
        self.up.control("config", {"apiDelay": 0.2})
        th.start()
        # SIGUSR1 while a request is with the mail server (apiDelay holds
        # each for 0.2 s): lighttpd has taken it and must finish it. A
        # request not yet taken would wait out the graceful restart.
        busy = wait_for(in_flight, 10 * SLOW, 0.02)
        first = len(results)
        pid = self.s.lighttpd.pid
        t_reload = time.monotonic()
        os.kill(pid, signal.SIGUSR1)
        th.join(120)
        self.up.control("config", {"apiDelay": 0})
        # lighttpd 1.4.69 accepts nothing until its graceful restart is
        # over (30-60 s here): a request sent meanwhile waits, and
        # the client may give up; it never gets a wrong answer.
        self.t.ok(busy and len(results) > first and results[first] == 200 and
                  set(results) <= {200, "cut"},
                  "lighttpd reload: requests in flight succeed; none gets a wrong "
                  "answer", f"{results} {cuts}; in flight at the reload: "
                  f"{'number ' + str(first + 1) if busy else 'none'}")
        self.t.eq(self.s.lighttpd.poll(), None, "lighttpd reload: lighttpd still runs")
        ended = sum(1 for s in tabs if s.wait_closed(30))
        self.t.eq(ended, len(tabs), "lighttpd reload: the old streams end (not left hanging)")
        # A browser closes an ended stream's socket and reconnects; until
        # every client has, lighttpd 1.4.69 does not accept again (see
        # docs/SECURITY.md, denial of service).
        for s in tabs:
            s.close()
        deadline = time.monotonic() + 120
        r = None
        while time.monotonic() < deadline:
            r = self.echo(c)
            if r.status == 200:
                break
            time.sleep(0.2)
        print(f"# lighttpd accepted again {time.monotonic() - t_reload:.1f} s "
              "after SIGUSR1")
        self.t.ok(getattr(r, "status", None) == 200, "lighttpd reload: a request after it "
                  "succeeds", r and r.body[:300])
        new, seen = self.reconnect(c, 20)
        self.t.ok(len(new) == 20, "lighttpd reload: streams reconnect",
                  f"{len(new)} in; other answers {seen}")
        ev = self.up.control("deliver", {"account": ALICE, "subject": "after reload"})
        got = sum(1 for s in new if s.wait(self.has_change(ev), 20))
        self.t.eq(got, 20, "lighttpd reload: a change reaches the reconnected streams")
        for s in tabs + new:
            s.close()

    def run(self, dbdir, only):
        self.dbdir = dbdir
        parts = [("upstream_faults", self.upstream_faults, ()),
                 ("pushd_relay_faults", self.pushd_faults, ("relay",)),
                 ("pushd_relay_first", self.pushd_relay_first, ()),
                 ("pushd_poll_faults", self.pushd_poll_faults, ()),
                 ("db_busy", self.db_busy, ("busy",)),
                 ("db_locked", self.db_busy, ("locked",))]
        if dbdir:
            parts += [("db_readonly", self.db_readonly, ()),
                      ("db_full", self.db_full, ())]
        parts += [("pushd_killed", self.pushd_killed, ()),
                  ("lighttpd_reload", self.lighttpd_reload, ())]
        for name, fn, args in parts:
            if not only or name in only:
                self.t.run(name, fn, *args)
        for s in self.streams:
            s.close()


def mount_tmpfs(path):
    os.makedirs(path)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DB_MB}m,mode=0700",
                        "tmpfs", path], capture_output=True)
    return r.returncode == 0


def main():
    tap = Tap()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 3 * TABS:
        print(f"1..0 # SKIP needs {3 * TABS} descriptors, the limit is {hard}")
        return 0
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    root = tempfile.mkdtemp(prefix="postern-it-faults-")
    dbdir = os.path.join(root, "db")
    mounted = mount_tmpfs(dbdir)
    if not mounted:
        print("# cannot mount a tmpfs: the read-only and disk-full checks are skipped")
    port = free_port()
    up = Upstream(root, port)
    faulty = Faulty(up.port).start()
    stack = Stack(root, mode="fcgi", upstream=faulty.url, port=port,
                  conf_extra={"push_poll_interval": "1s", "push_mode": "relay",
                              "upstream_connect_timeout": f"{CONNECT_TIMEOUT}s",
                              "upstream_timeout": f"{TIMEOUT}s",
                              "login_limit_user": "1000", "login_limit_ip": "1000",
                              "api_budget": "1000000",
                              # 1,000 tabs of one session, from one address.
                              "push_streams_per_session": "0",
                              "push_streams_per_ip": "0",
                              "state_db": os.path.join(dbdir, "state.db")})
    stack.state_db = os.path.join(dbdir, "state.db")
    try:
        stack.start()
    except Exception as e:
        faulty.stop()
        up.stop()
        tap.bail(f"the stack did not start: {e}")
    if stack.pushd is None:
        stack.stop()
        faulty.stop()
        up.stop()
        print("1..0 # SKIP pushd was not built")
        return 0
    try:
        tap.run("suite", Suite(tap, stack, up, faulty, root).run,
                dbdir if mounted else None, sys.argv[1:])
    finally:
        if tap.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail().replace("\n", "\n# "))
            print("# lighttpd error log tail:\n# " + stack.log_tail().replace("\n", "\n# "))
        stack.stop()
        faulty.stop()
        up.stop()
        if mounted:
            subprocess.run(["umount", "-l", dbdir])
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
