#!/usr/bin/env python3
"""A push service on loopback (RFC 8030's side that receives), for the tests
of pushd's Web Push sender: HTTPS on 127.0.0.1 with a certificate the test
makes, every POST recorded, and an answer per path that the test programs.

    with PushService() as ps:          # ps.ca_file: the CA for pushd to trust
        endpoint = ps.url("/push/a")   # https://127.0.0.1:PORT/push/a
        ps.set("/push/b", status=410)  # that subscription is gone
        ps.set("/push/c", status=429, headers={"Retry-After": "5"})
        ps.set("/push/d", hang=True)   # read, never answered until close()
        got = ps.wait(1, 10, path="/push/a")   # the requests so far
        got[0].headers["ttl"], got[0].body

    keys = subscriber_keys()           # {"p256dh", "auth", "private"}
    decrypt(keys, got[0].body)         # -> the plaintext (str)
    verify_vapid(got[0].headers["authorization"], endpoint)
                                       # -> {"ok": True, "aud", "exp", "sub", "k"}
                                       #    or {"ok": False, "why"}

It checks nothing about a push's content (the tests do, through
webpush_tool.mjs and the http_ece package); it only bounds the body:
413 over BODY_MAX, as push services refuse big ones, and 411 without a
Content-Length, so that a chunked push shows instead of passing unseen.
Every request is recorded, refused ones too. Standard library only;
Python 3.11.
"""

import base64
import dataclasses
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time

try:  # imported as a package (tests.harness.pushservice) ...
    from . import cyrus
except ImportError:  # ... or with tests/harness on sys.path
    import cyrus

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "webpush_tool.mjs")
# RFC 8030 7.2 lets a push service refuse big payloads; 4096 bytes of
# ciphertext is what the big ones promise, so twice that catches a sender
# that does not bound its pushes without refusing a correct one.
BODY_MAX = 8 << 10
# An oversized body is read and dropped up to this much before the 413.
DRAIN_MAX = 1 << 20
# A client that stops sending mid-request must not keep a thread forever.
IO_TIMEOUT = 30
TOOL_TIMEOUT = 60


@dataclasses.dataclass(frozen=True)
class Request:
    """One request as received: `monotonic` and `time` when its body was
    complete (time.monotonic(), time.time()), header names lower-case, the
    body raw; `status` is what the service answered (None: hung)."""
    monotonic: float
    time: float
    method: str
    path: str
    headers: dict
    body: bytes
    status: int | None


@dataclasses.dataclass(frozen=True)
class Behaviour:
    status: int = 201
    headers: dict | None = None
    delay: float = 0
    hang: bool = False


class _Server(http.server.ThreadingHTTPServer):
    """TLS per connection in the connection's own thread: a handshake that
    stalls must not stall accept() for everyone else."""
    daemon_threads = True

    def __init__(self, service, context):
        self.service = service
        self.context = context
        super().__init__(("127.0.0.1", 0), _Handler)

    def finish_request(self, request, client_address):
        request.settimeout(IO_TIMEOUT)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        self.service._opened(tls)
        try:
            self.RequestHandlerClass(tls, client_address, self)
        except (OSError, ssl.SSLError):
            pass
        finally:
            self.service._closed(tls)
            tls.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    # Keep-alive as a real push service allows it; HTTP/1.1 also answers
    # curl's "Expect: 100-continue".
    protocol_version = "HTTP/1.1"
    server_version = "postern-test-pushservice"

    def log_message(self, fmt, *args):
        pass

    def do_POST(self):
        self.server.service._handle(self)

    def _refuse_method(self):
        # Recorded too: a sender using the wrong method must show in the test.
        service = self.server.service
        service._record(self, self.path.split("?", 1)[0], b"", 405)
        self.close_connection = True
        service._answer(self, 405, {"Allow": "POST", "Connection": "close"}, b"POST only\n")

    do_GET = do_PUT = do_DELETE = do_HEAD = do_PATCH = _refuse_method


class PushService:
    def __init__(self, root=None):
        """root: a folder for the certificate and key (made and removed
        here when None). Starts serving at once."""
        self._own_root = root is None
        self.root = root or tempfile.mkdtemp(prefix="postern-push-")
        # pushd may run as another user than the test: it must read the CA.
        os.chmod(self.root, 0o755)
        self.ca_file = os.path.join(self.root, "push-ca.pem")
        key_file = os.path.join(self.root, "push-key.pem")
        cyrus.make_cert(self.ca_file, key_file)  # self-signed: its own CA
        os.chmod(self.ca_file, 0o644)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_file, key_file)
        self._lock = threading.Condition()
        self._requests = []
        self._behaviours = {}
        self._connections = set()
        self._stopping = threading.Event()
        self._server = _Server(self, context)
        self.port = self._server.server_address[1]
        self.origin = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def url(self, path):
        return self.origin + path

    def set(self, path, status=201, headers=None, delay=0, hang=False):
        """How POSTs to path (exact, query excluded) are answered from now
        on: status with headers (a header given as None is left out) after
        delay seconds, or never (hang) until close(). 201 adds a Location,
        429 a "Retry-After: 1", unless headers say otherwise."""
        with self._lock:
            self._behaviours[path] = Behaviour(status, dict(headers or {}), delay, hang)

    def clear(self):
        """Every path answered 201 again; the record is kept."""
        with self._lock:
            self._behaviours.clear()

    def requests(self, path=None):
        """The requests received so far, oldest first (a copy)."""
        with self._lock:
            return self._matching(path)

    def _matching(self, path):
        # Copies: a test that edits a record's headers edits its own.
        return [dataclasses.replace(r, headers=dict(r.headers))
                for r in self._requests if path is None or r.path == path]

    def wait(self, n, timeout, path=None):
        """Waits until n requests (to path, if given) have arrived or timeout
        seconds have passed; returns the requests either way, so that
        len(...) says which, and a test of "no push" is wait(1, t) == []."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                got = self._matching(path)
                left = deadline - time.monotonic()
                if len(got) >= n or left <= 0:
                    return got
                self._lock.wait(left)

    def close(self):
        """Stops serving: hung requests end without an answer, every open
        connection is closed. Idempotent."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for c in connections:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the server's side ------------------------------------------------

    def _opened(self, conn):
        with self._lock:
            self._connections.add(conn)

    def _closed(self, conn):
        with self._lock:
            self._connections.discard(conn)

    def _behaviour(self, path):
        with self._lock:
            return self._behaviours.get(path, Behaviour())

    def _record(self, handler, path, body, status):
        r = Request(time.monotonic(), time.time(), handler.command, path,
                    {k.lower(): v for k, v in handler.headers.items()}, body, status)
        with self._lock:
            self._requests.append(r)
            self._lock.notify_all()
            return len(self._requests)

    def _read_body(self, handler):
        """(body, None) or (None, refusal status): no chunked bodies, none
        over BODY_MAX; an oversized one is not read at all."""
        length = handler.headers.get("Content-Length")
        if handler.headers.get("Transfer-Encoding") or length is None:
            return None, 411
        try:
            n = int(length)
        except ValueError:
            return None, 400
        if n < 0:
            return None, 400
        if n > BODY_MAX:
            self._drain(handler, n)
            return None, 413
        body = handler.rfile.read(n)
        if len(body) < n:
            raise ConnectionError("body cut short")
        return body, None

    @staticmethod
    def _drain(handler, n):
        """Reads (and drops) what the client sends anyway, up to DRAIN_MAX:
        closing on unread data would reset the connection, and the client
        might lose the 413 before it reads it."""
        n = min(n, DRAIN_MAX)
        while n > 0:
            chunk = handler.rfile.read(min(n, 65536))
            if not chunk:
                return
            n -= len(chunk)

    def _handle(self, handler):
        path = handler.path.split("?", 1)[0]
        body, refusal = self._read_body(handler)
        if refusal:
            self._record(handler, path, b"", refusal)
            handler.close_connection = True
            self._answer(handler, refusal, {"Connection": "close"}, b"refused\n")
            return
        b = self._behaviour(path)
        if b.hang:
            self._record(handler, path, body, None)
            self._stopping.wait()
            handler.close_connection = True
            return
        seq = self._record(handler, path, body, b.status)
        if b.delay and self._stopping.wait(b.delay):
            handler.close_connection = True
            return
        self._answer(handler, b.status, self._headers(b, seq), b"" if b.status < 300 else b"push refused\n")

    def _headers(self, b, seq):
        """RFC 8030 5: a created message has a Location; RFC 8030 8.4: a 429
        may say when to come back. The test's own headers win."""
        headers = {}
        if b.status == 201:
            headers["Location"] = self.url(f"/message/{seq}")
        if b.status == 429:
            headers["Retry-After"] = "1"
        headers.update(b.headers or {})
        return {k: v for k, v in headers.items() if v is not None}

    def _answer(self, handler, status, headers, body):
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, str(value))
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(body)


# --- the subscriber's side, through webpush_tool.mjs ----------------------

class WebPushToolError(Exception):
    pass


def node():
    """The node to run the tool with: $NODE, else the one on PATH (as
    tests/browser/node.sh finds it); None when there is none."""
    return os.environ.get("NODE") or shutil.which("node")


def _tool(command, payload=None):
    """(exit status, parsed JSON stdout) of one webpush_tool.mjs command."""
    exe = node()
    if not exe:
        raise WebPushToolError("node is not installed")
    stdin = None if payload is None else json.dumps(payload)
    proc = subprocess.run([exe, TOOL, command], input=stdin, capture_output=True,
                          text=True, timeout=TOOL_TIMEOUT)
    try:
        out = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        out = None
    if out is None:
        raise WebPushToolError(f"webpush_tool {command} (exit {proc.returncode}): "
                               f"{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.returncode, out


def tool_unavailable():
    """None when the tool can run here, else why not (for a TAP SKIP):
    node missing, or the http_ece package not installed (npm ci)."""
    try:
        _tool("check")
    except (WebPushToolError, OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return None


def subscriber_keys():
    """A browser's subscription keys: {"p256dh": b64url (65-byte public
    key), "auth": b64url (16 bytes), "private": b64url (32-byte key)}."""
    return _tool("keys")[1]


def decrypt(sub_keys, body):
    """The plaintext (str) of a push body (bytes, aes128gcm as RFC 8291
    sends it) for the subscription sub_keys (from subscriber_keys());
    raises WebPushToolError with the reason when it does not decrypt."""
    return decrypt_info(sub_keys, body)["plaintext"]


def decrypt_info(sub_keys, body):
    """decrypt()'s whole answer: {"plaintext", "rs", "keyid" (the sender's
    public key, b64url), "salt" (b64url)}."""
    payload = {"private": sub_keys["private"], "p256dh": sub_keys["p256dh"],
               "auth": sub_keys["auth"], "body": base64.b64encode(body).decode("ascii")}
    return _tool("decrypt", payload)[1]


def verify_vapid(authorization, endpoint, now=None):
    """The tool's verdict on an Authorization header for a push to endpoint
    (RFC 8292): {"ok": True, "aud", "exp", "sub", "k"} or {"ok": False,
    "why"}. now (unix seconds) defaults to the clock."""
    payload = {"authorization": authorization, "endpoint": endpoint}
    if now is not None:
        payload["now"] = now
    return _tool("vapid", payload)[1]


def encrypt(sub_keys, plaintext):
    """The body (bytes) an application server would send: for self-tests."""
    return base64.b64decode(_tool("encrypt", {"p256dh": sub_keys["p256dh"],
                                              "auth": sub_keys["auth"],
                                              "plaintext": plaintext})[1]["body"])


def sign_vapid(claims, header=None):
    """A VAPID header signed with a fresh key, claims and JWT header taken
    as given (to make bad ones): {"authorization", "k", "jwt"}. Self-tests."""
    payload = {"claims": claims}
    if header is not None:
        payload["header"] = header
    return _tool("sign", payload)[1]
