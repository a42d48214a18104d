#!/usr/bin/env python3
"""pushd against a real Cyrus (poll mode, the only one Cyrus allows) behind
a real lighttpd: tabs hold event streams through lighttpd's mod_fastcgi,
mail delivered over LMTP reaches the right tabs, Last-Event-ID, sign-out,
and a pushd restart. Every wait is for a condition with a deadline."""

import json
import os
import resource
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB = "alice@example.test", "bob@example.test"
INTERVAL = 1                  # push_poll_interval, seconds
MARGIN = 8                    # what a loaded machine may add to it


class Stream:
    """One tab's /api/events, read incrementally over a raw socket
    (HTTP/1.0: lighttpd streams the body and closes at its end)."""

    def __init__(self, port, cookie, query="types=*", headers=None, http11=False,
                 source=None, head_timeout=15):
        # source: the loopback address the client connects from (another
        # client, as lighttpd and pushd see it).
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10,
                                             source_address=(source, 0) if source else None)
        self.chunked = None       # the raw bytes still to de-chunk (HTTP/1.1)
        self.raw = b""            # every body byte, comments included
        lines = [f"GET /api/events?{query} HTTP/1.{1 if http11 else 0}",
                 "Host: 127.0.0.1", "Accept: text/event-stream"]
        if cookie:
            lines.append(f"Cookie: postern_session={cookie}")
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buf = b""
        self.closed = False
        self.events = []          # every event seen, in order
        self.status, self.headers = self._head(time.monotonic() + head_timeout)

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0 or self.closed:
            return False
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return False
        if self.chunked is None:
            self.buf += data
            self.raw += data
        else:
            self.chunked += data
            self._dechunk()
        return True

    def _dechunk(self):
        while b"\r\n" in self.chunked:
            line, rest = self.chunked.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            if size == 0:
                self.closed = True
                return
            if len(rest) < size + 2:
                return
            self.buf += rest[:size]
            self.raw += rest[:size]
            self.chunked = rest[size + 2:]

    def _head(self, deadline):
        while b"\r\n\r\n" not in self.buf:
            if not self._fill(deadline):
                return 0, {}
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding") == "chunked":
            self.chunked, self.buf = self.buf, b""
            self._dechunk()
        else:
            self.raw = self.buf
        return status, headers

    def body(self, timeout=5):
        deadline = time.monotonic() + timeout
        while self._fill(deadline):
            pass
        return self.buf

    def _parse(self):
        while b"\n\n" in self.buf:
            block, self.buf = self.buf.split(b"\n\n", 1)
            ev = {}
            for line in block.decode().split("\n"):
                if line.startswith(":"):
                    continue
                k, _, v = line.partition(":")
                ev[k] = v[1:] if v.startswith(" ") else v
            if "data" in ev:
                self.events.append(ev)

    def wait(self, pred, timeout):
        """The first event from now on for which pred holds, or None."""
        deadline = time.monotonic() + timeout
        seen = len(self.events)
        while True:
            self._parse()
            for ev in self.events[seen:]:
                if pred(ev):
                    return ev
            seen = len(self.events)
            if not self._fill(deadline):
                self._parse()
                for ev in self.events[seen:]:
                    if pred(ev):
                        return ev
                return None

    def wait_closed(self, timeout):
        deadline = time.monotonic() + timeout
        while not self.closed and time.monotonic() < deadline:
            self._fill(deadline)
            self._parse()
        return self.closed

    def close(self):
        self.sock.close()


def is_state(ev):
    return ev.get("event") == "state"


def changed(ev):
    return json.loads(ev["data"]).get("changed", {})


def wait_for(pred, timeout, interval=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    return pred()


def message(n):
    return (f"From: carol@example.test\r\nTo: alice@example.test\r\n"
            f"Subject: push test {n}\r\nMessage-ID: <push-{n}-{time.time()}@example.test>\r\n"
            f"Date: Wed, 02 Dec 2026 10:00:00 +0000\r\n\r\nHello {n}.\r\n").encode()


# -- FastCGI straight to pushd's socket: what lighttpd never does ----------

def fcgi_record(rtype, rid, content=b"", pad=None):
    pad = (8 - len(content) % 8) % 8 if pad is None else pad
    return (bytes([1, rtype, rid >> 8, rid & 255, len(content) >> 8, len(content) & 255,
                   pad, 0]) + content + b"\0" * pad)


def fcgi_nv(name, value):
    def length(n):
        return bytes([n]) if n < 128 else (n | 0x80000000).to_bytes(4, "big")
    name, value = name.encode(), value.encode()
    return length(len(name)) + length(len(value)) + name + value


def fcgi_nv_parse(b):
    out, i = {}, 0
    while i < len(b):
        lens = []
        for _ in range(2):
            if b[i] < 128:
                lens.append(b[i])
                i += 1
            else:
                lens.append(int.from_bytes(b[i:i + 4], "big") & 0x7fffffff)
                i += 4
        out[b[i:i + lens[0]].decode()] = b[i + lens[0]:i + lens[0] + lens[1]].decode()
        i += lens[0] + lens[1]
    return out


def fcgi_params(method, uri, cookie=None, extra=None):
    p = {"REQUEST_METHOD": method, "REQUEST_URI": uri, "REMOTE_ADDR": "127.0.0.1",
         "SERVER_PROTOCOL": "HTTP/1.1"}
    if cookie:
        p["HTTP_COOKIE"] = f"postern_session={cookie}"
    p.update(extra or {})
    return b"".join(fcgi_nv(k, v) for k, v in p.items())


class Raw:
    """A FastCGI client on pushd's own socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.closed = False

    def send(self, data):
        self.sock.sendall(data)

    def begin(self, rid, role=1, keep=True):
        self.send(fcgi_record(1, rid, bytes([0, role, 1 if keep else 0, 0, 0, 0, 0, 0])))

    def record(self, timeout=5):
        """The next record as (type, id, content), or None (closed or late)."""
        deadline = time.monotonic() + timeout
        while True:
            if len(self.buf) >= 8:
                clen = self.buf[4] << 8 | self.buf[5]
                total = 8 + clen + self.buf[6]
                if len(self.buf) >= total:
                    rec = (self.buf[1], self.buf[2] << 8 | self.buf[3], self.buf[8:8 + clen])
                    self.buf = self.buf[total:]
                    return rec
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return None
            except OSError:
                data = b""
            if not data:
                self.closed = True
                return None
            self.buf += data

    def response(self, rid, timeout=5):
        """STDOUT of request rid until its END_REQUEST: (stdout, ended)."""
        out = b""
        while True:
            rec = self.record(timeout)
            if rec is None:
                return out, False
            if rec[1] == rid and rec[0] == 6:
                out += rec[2]
            elif rec[1] == rid and rec[0] == 3:
                return out, True

    def close(self):
        self.sock.close()


class PushSuite:
    def __init__(self, tap, stack):
        self.t = tap
        self.s = stack
        self.streams = []

    def signed_in(self, user):
        c = Client(self.s.url)
        r = c.login(user, USERS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        return c

    def open(self, client, query="types=*", headers=None):
        st = Stream(self.s.port, client.cookie if client else None, query, headers)
        self.streams.append(st)
        return st

    def db_rows(self):
        with sqlite3.connect(self.s.state_db, timeout=5) as db:
            return db.execute("SELECT mode, state, tabs FROM push_accounts").fetchall()

    def baseline(self, n):
        """Until n accounts have been polled once (their states known)."""
        return wait_for(lambda: len([r for r in self.db_rows() if r[1]]) >= n, 20)

    def health_push(self):
        return Client(self.s.url).request("GET", "/api/health").json().get("push", {})

    # -- checks ---------------------------------------------------------------

    def refusals(self):
        t, c = self.t, Client(self.s.url)
        r = c.request("GET", "/api/events?types=*")
        t.eq(r.status, 401, "no cookie: 401")
        t.eq(r.json().get("error"), "unauthenticated", "no cookie: unauthenticated JSON")
        alice = self.signed_in(ALICE)
        r = alice.request("GET", "/api/events?types=Em%40il")
        t.eq((r.status, r.json().get("error")), (400, "bad_request"), "bad types: 400")
        r = alice.request("GET", "/api/events?closeafter=maybe")
        t.eq(r.status, 400, "bad closeafter: 400")
        r = alice.request("POST", "/api/events", b"")
        t.eq((r.status, r.json().get("error")), (400, "bad_request"),
             "POST /api/events without visible: 400")
        r = alice.request("PUT", "/api/events", b"")
        t.eq(r.status, 405, "PUT /api/events: 405")
        r = c.request("POST", "/api/push/unknown-token", {"@type": "StateChange"}, csrf=False)
        t.eq(r.status, 404, "unknown push token: 404")
        t.eq(r.json().get("error"), "not_found", "unknown push token: not_found JSON")
        r = c.request("GET", "/api/push/unknown-token")
        t.eq(r.status, 405, "GET /api/push/...: 405")

    def fastcgi(self):
        t = self.t
        alice = self.signed_in(ALICE)
        r = Raw(self.s.pushd_socket)
        r.send(fcgi_record(9, 0, fcgi_nv("FCGI_MPXS_CONNS", "") + fcgi_nv("FCGI_MAX_REQS", "")))
        rec = r.record()
        t.ok(rec is not None and rec[0] == 10 and
             fcgi_nv_parse(rec[2]).get("FCGI_MPXS_CONNS") == "1",
             "GET_VALUES: FCGI_MPXS_CONNS is 1", rec)
        r.send(fcgi_record(20, 0, b"12345678"))
        rec = r.record()
        t.ok(rec is not None and rec[0] == 11 and rec[2][0] == 20,
             "an unknown management record: UNKNOWN_TYPE", rec)
        r.begin(5, role=2)
        rec = r.record()
        t.ok(rec is not None and rec[0] == 3 and rec[1] == 5 and rec[2][4] == 3,
             "another role than responder: END_REQUEST with UNKNOWN_ROLE", rec)
        # Two requests at once on one connection, their records interleaved
        # and the params of each split in two.
        p1 = fcgi_params("GET", "/api/events?types=*")
        p2 = fcgi_params("POST", "/api/push/nobody", extra={"CONTENT_LENGTH": "2"})
        r.begin(1)
        r.begin(2)
        r.send(fcgi_record(4, 1, p1[:7]) + fcgi_record(4, 2, p2[:30]) +
               fcgi_record(4, 1, p1[7:]) + fcgi_record(4, 2, p2[30:]) +
               fcgi_record(4, 2, b"") + fcgi_record(4, 1, b"") +
               fcgi_record(5, 2, b"{}") + fcgi_record(5, 2, b"") + fcgi_record(5, 1, b""))
        got = {}
        while sum(v.endswith(b"<END>") for v in got.values()) < 2:
            rec = r.record()
            if rec is None:
                break
            if rec[0] == 6:
                got.setdefault(rec[1], b"")
                got[rec[1]] += rec[2]
            if rec[0] == 3:
                got[rec[1]] = got.get(rec[1], b"") + b"<END>"
        t.ok(got.get(1, b"").startswith(b"Status: 401") and got[1].endswith(b"<END>"),
             "multiplexed: the first request answered 401", got)
        t.ok(got.get(2, b"").startswith(b"Status: 404") and got[2].endswith(b"<END>"),
             "multiplexed: the second answered 404", got)
        # The connection was kept: a stream on it, then the web server aborts.
        r.begin(1)
        r.send(fcgi_record(4, 1, fcgi_params("GET", "/api/events?types=*", alice.cookie)) +
               fcgi_record(4, 1, b"") + fcgi_record(5, 1, b""))
        rec = r.record()
        t.ok(rec is not None and rec[0] == 6 and rec[2].startswith(b"Status: 200"),
             "kept connection: a stream opens on it", rec)
        r.send(fcgi_record(2, 1))
        out, ended = r.response(1)
        t.ok(ended, "ABORT_REQUEST: the stream ends with END_REQUEST")
        r.begin(3)
        r.send(fcgi_record(4, 3, b"x" * 65535) * 1 + fcgi_record(4, 3, b"y" * 65535) * 1)
        t.ok(not r.closed, "params near the cap are taken in")
        r.send(fcgi_record(4, 3, b"") + fcgi_record(5, 3, b""))
        out, ended = r.response(3)
        t.ok(ended and out.startswith(b"Status: 400"), "params over the cap: 400", out[:80])
        r.send(b"\2\1\0\1\0\0\0\0")
        t.ok(r.record() is None and r.closed, "a malformed record: the connection is closed")
        r.close()
        # A reader that stops reading: pushd queues a bounded amount for it,
        # then drops it (the answers to 40,000 GET_VALUES never read).
        r = Raw(self.s.pushd_socket)
        r.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        query = fcgi_record(9, 0, fcgi_nv("FCGI_MPXS_CONNS", ""))
        try:
            r.sock.settimeout(20)
            for _ in range(40):
                r.send(query * 1000)
        except OSError:
            pass
        got = 0
        while r.record(10) is not None:
            got += 1
        t.ok(r.closed and got < 40000, "a FastCGI peer that does not read is dropped",
             (r.closed, got))
        r.close()
        r = Raw(self.s.pushd_socket)
        r.begin(1, keep=False)
        r.send(fcgi_record(4, 1, fcgi_params("GET", "/api/nothing")) + fcgi_record(4, 1, b"") +
               fcgi_record(5, 1, b""))
        out, ended = r.response(1)
        t.ok(ended and out.startswith(b"Status: 404"), "an unknown path: 404", out[:80])
        t.ok(r.record() is None and r.closed, "without keep-conn pushd closes after the answer")
        r.close()

    def descriptors(self):
        """A second pushd with 80 descriptors: it keeps 32 for itself and
        refuses connections beyond the other 48, and goes on serving."""
        t = self.t
        conf = os.path.join(self.s.root, "pushd-small.conf")
        sock_path = os.path.join(self.s.root, "run", "pushd-small.sock")
        with open(self.s.conf_path) as f, open(conf, "w") as out:
            for line in f:
                if not line.startswith("pushd_socket"):
                    out.write(line)
            out.write(f"pushd_socket = {sock_path}\n")

        def small_limit():
            resource.setrlimit(resource.RLIMIT_NOFILE, (80, 80))
        with open(os.path.join(self.s.root, "pushd-small.log"), "ab") as log:
            p = subprocess.Popen([self.s.pushd_bin(), "-f", conf], stdin=subprocess.DEVNULL,
                                 stdout=log, stderr=log, preexec_fn=small_limit)
        try:
            t.ok(wait_for(lambda: os.path.exists(sock_path), 20), "a pushd with 80 descriptors starts")
            conns = [Raw(sock_path) for _ in range(56)]
            # The refused ones see their end at once; the others stay open
            # (for the 10 s a request head may take).
            # Wait for them with a deadline well inside that 10 s, so a
            # loaded machine does not turn a late close into a miss.
            closed = set()
            end = time.monotonic() + 8
            while len(closed) < 8 and time.monotonic() < end:
                open_socks = [c.sock for c in conns if c not in closed]
                ready, _, _ = select.select(open_socks, [], [], 0.5)
                for c in conns:
                    if c not in closed and c.sock in ready and c.record(0.5) is None \
                            and c.closed:
                        closed.add(c)
            # Then a while longer: a ninth refusal must show too.
            ready, _, _ = select.select([c.sock for c in conns if c not in closed], [], [], 1)
            for c in conns:
                if c not in closed and c.sock in ready and c.record(0.5) is None and c.closed:
                    closed.add(c)
            refused = len(closed)
            t.eq(refused, 8, "connections past its budget of 48 are refused")
            for c in conns:
                c.close()
            r = wait_for(lambda: Raw(sock_path), 5)
            r.send(fcgi_record(9, 0, fcgi_nv("FCGI_MAX_CONNS", "")))
            rec = r.record()
            t.ok(rec is not None and fcgi_nv_parse(rec[2]).get("FCGI_MAX_CONNS") == "48",
                 "and serves on: FCGI_MAX_CONNS is 48", rec)
            r.close()
        finally:
            p.send_signal(signal.SIGTERM)
            t.eq(p.wait(30), 0, "that pushd stops cleanly too")

    def streaming(self):
        """HTTP/1.1 as browsers use it (chunked), and nothing held back by
        lighttpd: the first ping of a ping=5 stream arrives 5 s after it
        opened, before a second one would be due: a buffering server
        shows a ping only with later ones, if at all, while a busy machine
        would have to hold it back another 5 s."""
        t = self.t
        bob = self.signed_in(BOB)
        st = Stream(self.s.port, bob.cookie, "types=*&ping=5", http11=True)
        opened = time.monotonic()      # pushd's ping timer runs from its answer
        t.ok(st.status == 200 and st.chunked is not None, "HTTP/1.1: a chunked stream",
             st.headers)
        ev = st.wait(lambda ev: ev.get("event") == "ping", 10)
        took = time.monotonic() - opened
        t.ok(ev is not None and 4.5 <= took < 10, "the ping arrives on time (streamed, "
             "not buffered)", (ev, took))
        t.ok(ev is not None and json.loads(ev["data"]).get("interval") == 5000,
             "ping data: the interval in milliseconds", ev)
        st.close()

    def fan_out(self):
        t = self.t
        alice, bob = self.signed_in(ALICE), self.signed_in(BOB)
        a = self.open(alice, "types=*&ping=5")
        b = self.open(alice, "types=Email,Mailbox,Thread&closeafter=no")
        c = self.open(bob, "types=*")
        d = self.open(alice, "types=Mailbox")
        f = self.open(alice, "types=*&closeafter=state")
        t.eq(a.status, 200, "a tab opens its stream: 200")
        t.ok(a.headers.get("content-type", "").startswith("text/event-stream"),
             "Content-Type text/event-stream", a.headers)
        t.eq(a.headers.get("cache-control"), "no-store", "Cache-Control: no-store")
        t.eq(a.headers.get("x-accel-buffering"), "no", "X-Accel-Buffering: no")
        t.ok(all(s.status == 200 for s in (b, c, d, f)), "every tab's stream opens")
        t.ok(self.baseline(2), "pushd polled both accounts", self.db_rows())
        push = wait_for(lambda: (lambda p: p if p.get("tabs", {}).get("poll") == 5 else None)(
            self.health_push()), 10)
        t.eq((push or self.health_push()).get("accounts"), {"poll": 2},
             "/api/health: two accounts in poll mode")
        t.eq((push or self.health_push()).get("tabs"), {"poll": 5},
             "/api/health: five tabs in poll mode")

        self.s.cyrus.deliver(ALICE, message(1))
        e1 = a.wait(is_state, INTERVAL + MARGIN)
        t.ok(e1 is not None, "mail to alice reaches her first tab", a.events)
        if e1 is None:
            return None
        ch = changed(e1)
        t.eq(list(ch), [ALICE], "the StateChange names alice's account")
        t.ok("Email" in ch.get(ALICE, {}), "and its Email state", ch)
        t.eq(json.loads(e1["data"]).get("@type"), "StateChange", "JMAP's StateChange format")
        t.ok(e1.get("id", "").isdigit(), "the event carries an id", e1)
        e1b = b.wait(is_state, INTERVAL + MARGIN)
        t.ok(e1b is not None and e1b["id"] == e1["id"], "and her second tab, same event", e1b)
        ed = d.wait(is_state, INTERVAL + MARGIN)
        t.ok(ed is not None and list(changed(ed).get(ALICE, {})) == ["Mailbox"],
             "types=Mailbox: only the Mailbox state", ed)
        ef = f.wait(is_state, INTERVAL + MARGIN)
        t.ok(ef is not None, "closeafter=state: the tab gets the event")
        t.ok(f.wait_closed(5), "closeafter=state: then its stream ends")
        t.ok(c.wait(is_state, 3 * INTERVAL + 1) is None, "bob's tab gets nothing of alice's mail",
             c.events)
        self.bob, self.bob_tab = bob, c

        self.s.cyrus.deliver(ALICE, message(2))
        e2 = a.wait(is_state, INTERVAL + MARGIN)
        t.ok(e2 is not None and int(e2["id"]) > int(e1["id"]), "event ids increase",
             (e1, e2))
        # 5 s after the last event (pings mark idle time), and what a
        # loaded machine may add.
        ping = a.wait(lambda ev: ev.get("event") == "ping" and ev.get("id"), 5 + MARGIN)
        t.ok(ping is not None, "ping=5: a ping with an id within its interval")
        return alice, a, e1, e2

    def replay(self, alice, e1, e2):
        t = self.t
        # A session of its own: alice's first one holds 3 streams, and a
        # closed one counts until lighttpd notices (at its next write).
        alice = self.signed_in(ALICE)
        r = self.open(alice, "types=*", {"Last-Event-ID": e1["id"]})
        ev = r.wait(lambda ev: True, 5)
        t.ok(ev is not None and ev.get("event") == "state" and ev.get("id") == e2["id"]
             and ev.get("data") == e2["data"], "Last-Event-ID: the missed event is replayed",
             (ev, e2))
        r.close()
        r = self.open(alice, "types=*", {"Last-Event-ID": "12345"})
        ev = r.wait(lambda ev: True, 5)
        t.ok(ev is not None and ev.get("event") == "resync",
             "an unknown Last-Event-ID: a resync event", ev)
        r.close()

    def sign_out(self):
        t = self.t
        other = self.signed_in(ALICE)
        h = self.open(other, "types=*")
        t.eq(h.status, 200, "a second session's tab opens")
        r = other.request("POST", "/api/auth/logout", {})
        t.eq(r.status, 200, "that session signs out")
        t.ok(h.wait_closed(INTERVAL + MARGIN), "the signed-out session's stream ends")

    def password_change(self):
        """The mail server refuses the password pushd polls with: the
        session ends (as the relay would end it) and so does the stream."""
        t = self.t
        self.s.cyrus.add_user(BOB, "a-new-password-for-bob", create_mailboxes=False)
        try:
            t.ok(self.bob_tab.wait_closed(INTERVAL + MARGIN),
                 "password changed on the mail server: bob's stream ends")
            r = self.bob.request("GET", "/api/auth/session")
            t.eq(r.status, 401, "and his session is over")
        finally:
            self.s.cyrus.add_user(BOB, USERS[BOB], create_mailboxes=False)

    def restart(self, alice, a, e2):
        t = self.t
        self.s.stop_pushd(signal.SIGKILL)
        t.ok(a.wait_closed(10), "pushd killed: the open stream ends")
        self.s.start_pushd()

        def reconnect():
            st = Stream(self.s.port, alice.cookie, "types=*",
                        {"Last-Event-ID": e2["id"]})
            if st.status == 200:
                return st
            st.close()
            return None
        st = wait_for(reconnect, 20, 0.5)
        t.ok(st is not None, "pushd restarted: the tab reconnects")
        if st is None:
            return
        self.streams.append(st)
        ev = st.wait(lambda ev: True, 5)
        t.ok(ev is not None and ev.get("event") == "resync",
             "after a restart the old id cannot be replayed: resync", ev)
        t.ok(self.baseline(1), "the account is polled again")
        self.s.cyrus.deliver(ALICE, message(3))
        e3 = st.wait(is_state, INTERVAL + MARGIN)
        t.ok(e3 is not None, "and mail reaches the reconnected tab")
        t.ok(e3 is not None and int(e3["id"]) > int(e2["id"]),
             "ids keep increasing across restarts")

    def run(self):
        # A request whose head never completes: closed after 10 s, checked
        # at the end (the rest of the suite takes longer than that).
        stalled = Raw(self.s.pushd_socket)
        stalled.begin(1)
        stalled.send(fcgi_record(4, 1, fcgi_nv("REQUEST_METHOD", "GET")))
        started = time.monotonic()
        self.t.run("refusals", self.refusals)
        self.t.run("fastcgi", self.fastcgi)
        self.t.run("descriptors", self.descriptors)
        self.t.run("streaming", self.streaming)
        got = None
        try:
            got = self.fan_out()
        except Exception:
            self.t.run("fan_out", lambda: (_ for _ in ()).throw(RuntimeError("fan_out")))
            raise
        if got:
            alice, a, e1, e2 = got
            self.t.run("replay", self.replay, alice, e1, e2)
            self.t.run("sign_out", self.sign_out)
            self.t.run("password_change", self.password_change)
            self.t.run("restart", self.restart, alice, a, e2)
        stalled.record(max(1, started + 10 + MARGIN - time.monotonic()))
        self.t.ok(stalled.closed, "a request head not complete in 10 s: closed")
        stalled.close()
        for st in self.streams:
            st.close()
        code = self.s.stop_pushd()
        self.t.eq(code, 0, "pushd stops cleanly on SIGTERM")
        self.t.run("pushd_down", self.pushd_down)

    def pushd_down(self):
        """With pushd stopped the responders go on: /api/health reports it
        down and stays ok, /api/config promises no push; both come back
        when pushd does."""
        t, c = self.t, Client(self.s.url)
        r = c.request("GET", "/api/health")
        t.eq((r.status, r.json().get("status"), r.json().get("pushd")), (200, "ok", "down"),
             "pushd stopped: /api/health is 200, status ok, pushd down")
        r = c.request("GET", "/api/config")
        t.eq(r.json()["features"]["push"], False, "pushd stopped: features.push is false")
        self.s.start_pushd()
        r = c.request("GET", "/api/health")
        t.eq((r.json().get("status"), r.json().get("pushd")), ("ok", "up"),
             "pushd started again: /api/health says up")
        r = c.request("GET", "/api/config")
        t.eq(r.json()["features"]["push"], True, "and features.push is true again")


def main():
    tap = Tap()
    root = tempfile.mkdtemp(prefix="postern-it-pushd-")
    stack = Stack(root, mode="fcgi", conf_extra={"push_poll_interval": f"{INTERVAL}s"})
    try:
        stack.start()
    except Exception as e:
        tap.bail(f"the stack did not start: {e}")
    if stack.pushd is None:
        tap.bail("pushd was not built")
    try:
        tap.run("suite", PushSuite(tap, stack).run)
    finally:
        if tap.failed:
            print("# pushd log tail:\n# " + stack.pushd_tail().replace("\n", "\n# "))
            print("# lighttpd error log tail:\n# " + stack.log_tail().replace("\n", "\n# "))
        stack.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
