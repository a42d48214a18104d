#!/usr/bin/env python3
"""The filters' routes (/api/sieve, /api/sieve/check) against the real
Cyrus's ManageSieve (timsieved) behind a real lighttpd: GET with nothing
stored, PUT of a script that GET then returns active, CHECKSCRIPT of a
broken script naming its line, PUT of a broken one refused with the
previous script still there, bob seeing nothing of alice's; refused
before the server is asked: no session, no CSRF header, not JSON, too
big, a bad name, filters turned off. Then faults, against small fake
servers on 127.0.0.1: nothing listening, a server refusing the
credentials (the session stays), garbage after a good greeting, a
greeting that never comes (504 within upstream_timeout), and
sieve_tls = starttls against a server without STARTTLS (no password
sent). Then STARTTLS against a real server: a Cyrus of its own with a
self-signed certificate (tls=True) and a stack pointed at it, with
sieve_tls = starttls: the certificate as upstream_ca_file, a script
stored and read back, over TLS (a relay in between sees STARTTLS and
never the password; Cyrus logs the login as PLAIN+TLS); without the CA
file, 502 sieve_unavailable and nothing stored; sieve_host = localhost,
the name checked against the DNS name; the server presenting a
certificate for another name, trusted as the CA, refused by name (502).
Last, that each shipped web server configuration sends both routes to
the relay responder: lighttpd with CGI, and Apache as mod_proxy_fcgi,
mod_fcgid and .htaccess where it can run here."""

import base64
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
from client import Client  # noqa: E402
import cyrus  # noqa: E402
from stack import SLOW, Stack, free_port  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB = "alice@example.test", "bob@example.test"
MAX_REQUEST = 64 * 1024
GOOD = ('require ["fileinto", "mailbox"];\r\n'
        'if header :contains "subject" "invoice" {\r\n'
        '  fileinto :create "Invoices";\r\n'
        '}\r\n')
# An unknown command on line 4.
BROKEN = ('require "fileinto";\r\n'
          'if header :contains "subject" "x" {\r\n'
          '  fileinto "A";\r\n'
          '  frobnicate;\r\n'
          '}\r\n')
GREETING = (b'"IMPLEMENTATION" "fake"\r\n"SASL" "PLAIN"\r\n'
            b'"SIEVE" "fileinto vacation"\r\n"VERSION" "1.0"\r\nOK\r\n')
TIMEOUT = 2


class FakeSieve:
    """A ManageSieve server that misbehaves as mode says: "refuse" (NO to
    AUTHENTICATE), "garbage" (after the greeting), "silent" (no greeting
    ever), "plain" (a greeting without STARTTLS, then OK to everything).
    It keeps every line it was sent."""

    def __init__(self, mode):
        self.mode = mode
        self.received = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        self.stopping = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(c)
            threading.Thread(target=self.one, args=(c,), daemon=True).start()

    def one(self, c):
        try:
            if self.mode == "silent":
                while not self.stopping and c.recv(1024):
                    pass
                return
            c.sendall(GREETING)
            f = c.makefile("rb")
            line = f.readline()
            self.received.append(line)
            if self.mode == "refuse":
                c.sendall(b'NO "Authentication Error"\r\n')
            elif self.mode == "garbage":
                c.sendall(b"* OK IMAP4rev1 ready\r\n")
            else:
                while line:
                    c.sendall(b"OK\r\n")
                    line = f.readline()
                    self.received.append(line)
        except OSError:
            pass
        finally:
            c.close()

    def stop(self):
        self.stopping = True
        self.sock.close()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Suite:
    def __init__(self, t, stack):
        self.t, self.s = t, stack
        self.c = self.signed_in(ALICE)

    def signed_in(self, user):
        c = Client(self.s.url)
        r = c.login(user, USERS[user])
        if r.status != 200:
            raise RuntimeError(f"{user} could not sign in: {r}")
        return c

    def reconfigure(self, **conf):
        """Restarts lighttpd and its responders on postern.conf with conf
        (the sessions live on in the state database)."""
        self.s.conf_extra.update({k: str(v) for k, v in conf.items()})
        self.s.stop_lighttpd()
        self.s.write_conf(self.s.cyrus.base_url)
        self.s.start_lighttpd()

    def run(self):
        self.empty()
        self.store()
        self.refusals()
        self.faults()

    def empty(self):
        t = self.t
        r = self.c.request("GET", "/api/sieve")
        j = r.json() if r.status == 200 else {}
        t.ok(r.status == 200 and j.get("name") == "postern" and j.get("script") == ""
             and j.get("active") is False and j.get("scripts") == [],
             "GET with nothing stored: postern, empty, not active", f"{r.status} {r.body[:300]!r}")
        t.ok({"fileinto", "vacation"} <= set(j.get("extensions") or []),
             "the server's extensions are listed", j.get("extensions"))

    def store(self):
        t = self.t
        r = self.c.request("PUT", "/api/sieve", {"script": GOOD})
        t.ok(r.status == 200 and r.json() == {"name": "postern", "active": True},
             "PUT of a valid script: stored and active", f"{r.status} {r.body[:300]!r}")
        r = self.c.request("GET", "/api/sieve")
        j = r.json()
        t.ok(r.status == 200 and j.get("script") == GOOD and j.get("active") is True
             and j.get("name") == "postern" and j.get("scripts") == ["postern"],
             "GET returns it, active", f"{r.status} {r.body[:400]!r}")
        r = self.c.request("POST", "/api/sieve/check", {"script": GOOD})
        t.ok(r.status == 200 and r.json() == {"ok": True}, "CHECKSCRIPT of a valid script: ok",
             f"{r.status} {r.body[:300]!r}")
        r = self.c.request("POST", "/api/sieve/check", {"script": BROKEN})
        j = r.json()
        t.ok(r.status == 422 and j.get("error") == "sieve_invalid" and j.get("line") == 4
             and "line 4" in j.get("message", ""),
             "CHECKSCRIPT of a broken script: 422 sieve_invalid naming line 4",
             f"{r.status} {r.body[:300]!r}")
        r = self.c.request("PUT", "/api/sieve", {"script": BROKEN, "name": "postern"})
        j = r.json()
        t.ok(r.status == 422 and j.get("error") == "sieve_invalid" and j.get("line") == 4,
             "PUT of a broken script: 422 sieve_invalid with its line", f"{r.status} {r.body[:300]!r}")
        r = self.c.request("GET", "/api/sieve")
        t.ok(r.status == 200 and r.json().get("script") == GOOD and r.json().get("active") is True,
             "and the previous script is still there, active", f"{r.status} {r.body[:300]!r}")
        bob = self.signed_in(BOB)
        r = bob.request("GET", "/api/sieve")
        t.ok(r.status == 200 and r.json().get("script") == "" and r.json().get("scripts") == []
             and b"invoice" not in r.body, "bob sees nothing of alice's filters",
             f"{r.status} {r.body[:300]!r}")

    def refusals(self):
        t = self.t
        r = Client(self.s.url).request("GET", "/api/sieve")
        t.ok(r.status == 401 and r.json().get("error") == "unauthenticated", "no session: 401",
             f"{r.status} {r.body[:200]!r}")
        r = self.c.request("PUT", "/api/sieve", {"script": "keep;"}, csrf=False)
        t.ok(r.status == 403 and r.json().get("error") == "missing_csrf_header",
             "PUT without the CSRF header: 403", f"{r.status} {r.body[:200]!r}")
        r = self.c.request("POST", "/api/sieve/check", b"keep;", {"Content-Type": "text/plain"})
        t.ok(r.status == 415 and r.json().get("error") == "unsupported_media_type",
             "a body that is not JSON: 415", f"{r.status} {r.body[:200]!r}")
        r = self.c.request("PUT", "/api/sieve", b"{not json", {"Content-Type": "application/json"})
        t.ok(r.status == 400 and r.json().get("error") == "bad_request", "bad JSON: 400",
             f"{r.status} {r.body[:200]!r}")
        r = self.c.request("PUT", "/api/sieve", {"script": "keep;", "name": "../other"})
        t.ok(r.status == 400 and r.json().get("error") == "bad_request", "a bad name: 400",
             f"{r.status} {r.body[:200]!r}")
        r = self.c.request("PUT", "/api/sieve", {"name": "postern"})
        t.eq(r.status, 400, "no script: 400")
        r = self.c.request("PUT", "/api/sieve", {"script": "#" + "a" * MAX_REQUEST})
        t.ok(r.status == 413 and r.json().get("error") == "too_large", "a body over max_request: 413",
             f"{r.status} {r.body[:200]!r}")
        r = self.c.request("DELETE", "/api/sieve")
        t.eq(r.status, 405, "another method: 405")
        r = self.c.request("GET", "/api/sieve")
        t.ok(r.status == 200 and r.json().get("script") == GOOD,
             "none of them changed the script", f"{r.status} {r.body[:200]!r}")

    def faults(self):
        t = self.t
        self.reconfigure(sieve_host="off")
        for method, path, body in (("GET", "/api/sieve", None), ("PUT", "/api/sieve", {"script": "keep;"}),
                                   ("POST", "/api/sieve/check", {"script": "keep;"})):
            r = self.c.request(method, path, body)
            t.ok(r.status == 404 and r.json().get("error") == "not_found"
                 and r.json().get("message") == "No filters are set up here.",
                 f"sieve_host = off: {method} {path} is 404 not_found", f"{r.status} {r.body[:200]!r}")
        r = self.c.request("GET", "/api/config")
        t.eq(r.json().get("features", {}).get("filters"), False,
             "sieve_host = off: /api/config says there are no filters")

        self.reconfigure(sieve_host="127.0.0.1", sieve_port=free_port())
        r = self.c.request("GET", "/api/config")
        t.eq(r.json().get("features", {}).get("filters"), True, "else /api/config says there may be")
        r = self.c.request("GET", "/api/sieve")
        t.ok(r.status == 502 and r.json().get("error") == "sieve_unavailable",
             "nothing listening: 502 sieve_unavailable", f"{r.status} {r.body[:200]!r}")

        fake = FakeSieve("refuse")
        try:
            self.reconfigure(sieve_port=fake.port)
            r = self.c.request("GET", "/api/sieve")
            t.ok(r.status == 502 and r.json().get("error") == "sieve_refused",
                 "credentials refused: 502 sieve_refused", f"{r.status} {r.body[:200]!r}")
            t.ok(fake.received and fake.received[0].startswith(b'AUTHENTICATE "PLAIN" '),
                 "after AUTHENTICATE PLAIN", fake.received)
            r = self.c.request("GET", "/api/auth/session")
            t.eq(r.status, 200, "and the session stays (no sign-out)")
        finally:
            fake.stop()

        fake = FakeSieve("garbage")
        try:
            self.reconfigure(sieve_port=fake.port)
            r = self.c.request("PUT", "/api/sieve", {"script": "keep;"})
            t.ok(r.status == 502 and r.json().get("error") == "upstream_error",
                 "garbage after a good greeting: 502 upstream_error", f"{r.status} {r.body[:200]!r}")
        finally:
            fake.stop()

        fake = FakeSieve("silent")
        try:
            self.reconfigure(sieve_port=fake.port, upstream_timeout=TIMEOUT)
            start = time.monotonic()
            r = self.c.request("GET", "/api/sieve")
            took = time.monotonic() - start
            # The 504 is the deadline's; the time is printed, not judged.
            print(f"# the silent server's answer came after {took:.1f} s (upstream_timeout {TIMEOUT} s)")
            t.ok(r.status == 504 and r.json().get("error") == "upstream_timeout",
                 "a greeting that never comes: 504 upstream_timeout",
                 f"{r.status} {took:.1f}s {r.body[:200]!r}")
        finally:
            fake.stop()

        fake = FakeSieve("plain")
        try:
            self.reconfigure(sieve_port=fake.port, sieve_tls="starttls")
            r = self.c.request("GET", "/api/sieve")
            t.ok(r.status == 502 and r.json().get("error") == "sieve_unavailable",
                 "sieve_tls = starttls, none offered: 502 sieve_unavailable",
                 f"{r.status} {r.body[:200]!r}")
            t.ok(not any(b"AUTHENTICATE" in line for line in fake.received),
                 "and no password was sent", fake.received)
        finally:
            fake.stop()


class Relay:
    """A TCP relay on 127.0.0.1 to port, keeping every byte the client
    sent (what a packet capture on the wire would see of it)."""

    def __init__(self, port):
        self.target = port
        self.sent = bytearray()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                a, _ = self.sock.accept()
            except OSError:
                return
            try:
                b = socket.create_connection(("127.0.0.1", self.target), timeout=10)
            except OSError:
                a.close()
                continue
            self.conns += [a, b]
            threading.Thread(target=self.pump, args=(a, b, True), daemon=True).start()
            threading.Thread(target=self.pump, args=(b, a, False), daemon=True).start()

    def pump(self, src, dst, keep):
        try:
            while data := src.recv(65536):
                if keep:
                    self.sent += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def stop(self):
        self.sock.close()
        for c in self.conns:
            c.close()


class TlsSuite:
    """STARTTLS against Cyrus's timsieved with a self-signed certificate."""

    def __init__(self, t, stack, cyr, other_cert, other_key):
        self.t, self.s, self.cyr = t, stack, cyr
        self.other_cert, self.other_key = other_cert, other_key
        self.c = Client(stack.url)
        r = self.c.login(ALICE, USERS[ALICE])
        if r.status != 200:
            raise RuntimeError(f"alice could not sign in: {r}")

    def reconfigure(self, **conf):
        """postern.conf with conf (a None value leaves the key out); lighttpd
        and its responders restarted (the session lives on)."""
        for k, v in conf.items():
            if v is None:
                self.s.conf_extra.pop(k, None)
            else:
                self.s.conf_extra[k] = str(v)
        self.s.stop_lighttpd()
        self.s.write_conf(self.s.upstream)
        self.s.start_lighttpd()

    def tls_failures(self):
        with open(self.s.error_log, errors="replace") as f:
            return [line for line in f if "sieve: TLS with" in line]

    def run(self):
        t, c, cert = self.t, self.c, self.cyr.tls_cert
        script2 = GOOD.replace("invoice", "receipt")

        relay = Relay(self.cyr.sieve_port)
        try:
            self.reconfigure(sieve_tls="starttls", upstream_ca_file=cert, sieve_port=relay.port)
            r = c.request("PUT", "/api/sieve", {"script": GOOD})
            t.ok(r.status == 200 and r.json() == {"name": "postern", "active": True},
                 "TLS, the certificate as upstream_ca_file: PUT stored and active",
                 f"{r.status} {r.body[:300]!r}")
            r = c.request("GET", "/api/sieve")
            t.ok(r.status == 200 and r.json().get("script") == GOOD and r.json().get("active") is True,
                 "GET returns it (STARTTLS, then AUTHENTICATE over TLS)",
                 f"{r.status} {r.body[:300]!r}")
        finally:
            relay.stop()
        sent = bytes(relay.sent)
        secret = USERS[ALICE].encode()
        plain = [base64.b64encode(b"%s\0%s\0%s" % (z, ALICE.encode(), secret))
                 for z in (b"", ALICE.encode())]
        t.ok(sent.startswith(b"STARTTLS\r\n") and b"AUTHENTICATE" not in sent
             and secret not in sent and not any(p in sent for p in plain),
             "on the wire: STARTTLS first, no AUTHENTICATE or password in clear",
             sent[:120])
        log = self.cyr.syslog_text()
        # The shim's file exists wherever it was built: an empty log then fails.
        if os.path.exists(self.cyr.syslog):
            t.ok("starttls: TLS" in log and f"{ALICE} PLAIN+TLS User logged in" in log
                 and f"{ALICE} PLAIN User logged in" not in log,
                 "and Cyrus logged the STARTTLS and each login as PLAIN+TLS",
                 [line for line in log.splitlines() if "sieve" in line][-5:])
        else:
            print("# Cyrus's syslog is not caught here (no cc): its STARTTLS lines not checked")

        before = len(self.tls_failures())
        self.reconfigure(sieve_port=self.cyr.sieve_port, upstream_ca_file=None)
        r = c.request("PUT", "/api/sieve", {"script": script2})
        t.ok(r.status == 502 and r.json().get("error") == "sieve_unavailable",
             "TLS without the CA file (self-signed, unverifiable): PUT is 502 sieve_unavailable",
             f"{r.status} {r.body[:300]!r}")
        r = c.request("GET", "/api/sieve")
        t.ok(r.status == 502 and r.json().get("error") == "sieve_unavailable",
             "and GET too", f"{r.status} {r.body[:300]!r}")
        fails = self.tls_failures()[before:]
        t.ok(fails and "certificate" in fails[-1], "the log says why: the certificate", fails)

        self.reconfigure(sieve_host="localhost", upstream_ca_file=cert)
        r = c.request("GET", "/api/sieve")
        t.ok(r.status == 200 and r.json().get("script") == GOOD,
             "sieve_host = localhost (the DNS name in the certificate): 200, and the "
             "refused PUT stored nothing", f"{r.status} {r.body[:300]!r}")
        r = c.request("PUT", "/api/sieve", {"script": script2})
        t.ok(r.status == 200 and c.request("GET", "/api/sieve").json().get("script") == script2,
             "and a PUT over it is stored", f"{r.status} {r.body[:300]!r}")

        # timsieved reads its certificate at each STARTTLS (a process per
        # connection): now it presents one for other.test only, trusted as
        # the CA, so only the name can fail.
        for src, dest in ((self.other_cert, cert), (self.other_key, self.cyr.tls_key)):
            with open(src, "rb") as f, open(dest, "wb") as g:
                g.write(f.read())
        for host in ("localhost", "127.0.0.1"):
            self.reconfigure(sieve_host=host, upstream_ca_file=self.other_cert)
            before = len(self.tls_failures())
            r = c.request("PUT", "/api/sieve", {"script": GOOD})
            fails = self.tls_failures()[before:]
            t.ok(r.status == 502 and r.json().get("error") == "sieve_unavailable"
                 and fails and "mismatch" in fails[-1],
                 f"a trusted certificate for other.test only, sieve_host = {host}: "
                 "502 sieve_unavailable, refused by name", f"{r.status} {r.body[:300]!r} {fails}")


def tls_part(t, root):
    """A Cyrus with tls=True and a stack on it (seed=False), one start each."""
    started = time.monotonic()
    cyr = cyrus.Cyrus(os.path.join(root, "tls-cyrus"), cyrus.free_port(), cyrus.free_port(),
                      tls=True)
    stack = None
    try:
        cyr.start()
        cyr.add_user(ALICE, USERS[ALICE])
        other = (os.path.join(root, "other-cert.pem"), os.path.join(root, "other-key.pem"))
        cyrus.make_cert(*other, san="DNS:other.test", cn="other.test")
        stack = Stack(os.path.join(root, "tls"), seed=False, upstream=cyr.base_url,
                      conf_extra={"sieve_port": str(cyr.sieve_port)})
        stack.start()
        t.run("filters over STARTTLS (Cyrus with a certificate)",
              TlsSuite(t, stack, cyr, *other).run)
    except Exception as e:
        t.ok(False, "the STARTTLS part runs", repr(e))
    finally:
        if stack:
            stack.stop()
        cyr.stop()
    print(f"# the STARTTLS part took {time.monotonic() - started:.1f} s")


def routed(t, root, label, **kind):
    """GET /api/sieve and POST /api/sieve/check reach postern-jmap."""
    stack = Stack(os.path.join(root, label), seed=False, **kind)
    try:
        stack.start()
        c = Client(stack.url)
        r = c.login(ALICE, USERS[ALICE])
        t.eq(r.status, 200, f"{label}: alice signs in")
        r = c.request("GET", "/api/sieve")
        t.ok(r.status == 200 and "extensions" in r.json(), f"{label}: GET /api/sieve is served",
             f"{r.status} {r.body[:200]!r}")
        r = c.request("POST", "/api/sieve/check", {"script": "keep;"})
        t.ok(r.status == 200 and r.json() == {"ok": True}, f"{label}: POST /api/sieve/check is served",
             f"{r.status} {r.body[:200]!r}")
    except Exception as e:
        t.ok(False, f"{label}: the stack runs", repr(e))
    finally:
        stack.stop()


def main():
    t = Tap()
    root = tempfile.mkdtemp(prefix="postern-it-sieve-")
    os.chmod(root, 0o755)
    stack = Stack(os.path.join(root, "lighttpd"), seed=False, conf_extra={"max_request": str(MAX_REQUEST),
                                                "push_mode": "poll"})
    try:
        stack.start()
    except Exception as e:
        t.bail(f"the stack did not start: {e}")
    try:
        t.run("filters (ManageSieve)", Suite(t, stack).run)
    finally:
        stack.stop()
    try:
        tls_part(t, root)
        routed(t, root, "lighttpd-cgi", mode="cgi")
        for mode in apache.MODES:
            if apache.skip_reason(mode):
                print(f"# Apache {mode} left out: {apache.skip_reason(mode)}")
            else:
                routed(t, root, f"apache-{mode}", mode=mode, server="apache")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
