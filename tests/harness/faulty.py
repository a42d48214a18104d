#!/usr/bin/env python3
"""A faulty upstream for the fault tests: a loopback HTTP proxy in front of
a real JMAP server whose behaviour the test switches per path prefix.

    f = Faulty(backend_port)       # e.g. the Stalwart test server's port
    f.start()                      # f.url is http://127.0.0.1:PORT
    f.set("/jmap/", "hang")        # every request under /jmap/ now hangs
    f.clear()                      # everything passes through again
    f.refuse(); f.accept()         # stop / start listening (same port)
    f.stop()

A prefix ending in "$" matches that path only. Modes (one request per connection, so a mode applies to the very next
request, never to a kept-alive connection):

    pass       forwarded to the backend, its answer streamed back
    hang       the request is read and never answered (until the mode
               changes or HANG_MAX seconds pass)
    reset      the backend's answer is cut after half its body and the
               connection reset (RST)
    truncate   a Content-Length of twice what is sent, then a clean close
    garbage    200 application/json that is not JSON
    html       200 text/html (a captive portal's page)
    huge       200 application/json of HUGE bytes that never form JSON
    error      503 with an HTML body
    oddstatus  299 (a status no registry has) with a JSON body

Standard library only; binds 127.0.0.1. CLI: faulty.py --backend PORT
[--port N] prints {"port": N}; POST /_faulty/set {"prefix", "mode"} and
POST /_faulty/clear switch it."""

import argparse
import json
import socket
import struct
import sys
import threading
import time

MODES = ("pass", "hang", "reset", "truncate", "garbage", "html", "huge", "error",
         "oddstatus")
HANG_MAX = 120
HUGE = 64 << 20
HEAD_MAX = 64 << 10


def read_request(sock):
    """(head bytes, path, body bytes) of one request, or None."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        data = sock.recv(65536)
        if not data or len(buf) > HEAD_MAX:
            return None
        buf += data
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    path = lines[0].split(" ")[1] if " " in lines[0] else "/"
    length = 0
    for line in lines[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            length = int(v.strip() or 0)
    while len(body) < length:
        data = sock.recv(65536)
        if not data:
            return None
        body += data
    # One request per connection, both ways.
    kept = [ln for ln in lines if not ln.lower().startswith("connection:")]
    head = ("\r\n".join(kept) + "\r\nConnection: close").encode("latin-1")
    return head, path, body


def matches(prefix, path):
    """A prefix of the path, or with a final "$" the whole path (no query)."""
    if prefix.endswith("$"):
        return path.split("?", 1)[0] == prefix[:-1]
    return path.startswith(prefix)


def complete(data):
    """Whether data holds a whole answer with a Content-Length."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return len(body) >= int(v.strip())
    return False


def rst_close(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def canned(status, ctype, body, length=None):
    reason = {200: "OK", 299: "Odd", 503: "Service Unavailable"}[status]
    n = len(body) if length is None else length
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {n}\r\nConnection: close\r\n\r\n").encode() + body


class Faulty:
    def __init__(self, backend_port, port=0):
        self.backend = backend_port
        self.rules = []            # (prefix, mode), first match wins
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.served = {}           # mode -> requests seen
        self.seen = []             # (monotonic time, path, body's first 4 KiB)
        self.heads = []            # (monotonic time, path, request head)
        self.lsock = None
        self.port = port
        self.stopping = False
        self.thread = None

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    # -- switching -----------------------------------------------------------

    def set(self, prefix, mode):
        assert mode in MODES, mode
        with self.lock:
            self.rules = [r for r in self.rules if r[0] != prefix]
            self.rules.insert(0, (prefix, mode))
            self.changed.notify_all()

    def clear(self):
        with self.lock:
            self.rules = []
            self.changed.notify_all()

    def mode_for(self, path):
        with self.lock:
            return self.mode_for_locked(path)

    def count(self, mode):
        with self.lock:
            return self.served.get(mode, 0)

    # -- listening -----------------------------------------------------------

    def start(self):
        self.accept()
        return self

    def accept(self):
        if self.lsock is not None:
            return
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(512)
        self.port = s.getsockname()[1]
        self.lsock = s
        self.thread = threading.Thread(target=self.loop, args=(s,), daemon=True)
        self.thread.start()

    def refuse(self):
        """Closes the listening socket: connections are refused."""
        s, self.lsock = self.lsock, None
        if s:
            s.shutdown(socket.SHUT_RDWR)
            s.close()
        if self.thread:
            self.thread.join(5)

    def stop(self):
        self.stopping = True
        self.clear()
        self.refuse()

    def loop(self, lsock):
        while True:
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    # -- one connection --------------------------------------------------------

    def serve(self, conn):
        try:
            conn.settimeout(HANG_MAX)
            req = read_request(conn)
            if req is None:
                conn.close()
                return
            head, path, body = req
            if path.startswith("/_faulty/"):
                return self.control(conn, path, body)
            mode = self.mode_for(path)
            with self.lock:
                self.served[mode] = self.served.get(mode, 0) + 1
                self.seen.append((time.monotonic(), path, body[:4096]))
                self.heads.append((time.monotonic(), path, head))
            getattr(self, "do_" + mode)(conn, head + b"\r\n\r\n" + body, path)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def control(self, conn, path, body):
        if path == "/_faulty/set":
            o = json.loads(body)
            self.set(o["prefix"], o["mode"])
        elif path == "/_faulty/clear":
            self.clear()
        conn.sendall(canned(200, "application/json", b"{}"))

    def backend_answer(self, request):
        """Opens the backend, sends the request; the socket to read from."""
        b = socket.create_connection(("127.0.0.1", self.backend), timeout=HANG_MAX)
        b.sendall(request)
        return b

    def do_pass(self, conn, request, path):
        b = self.backend_answer(request)
        try:
            while True:
                data = b.recv(65536)
                if not data:
                    return
                conn.sendall(data)
        finally:
            b.close()

    def do_hang(self, conn, request, path):
        end = time.monotonic() + HANG_MAX
        with self.lock:
            while (not self.stopping and time.monotonic() < end and
                   self.mode_for_locked(path) == "hang"):
                self.changed.wait(0.5)

    def mode_for_locked(self, path):
        for prefix, mode in self.rules:
            if matches(prefix, path):
                return mode
        return "pass"

    def do_reset(self, conn, request, path):
        b = self.backend_answer(request)
        data = b""
        try:
            while not complete(data):
                chunk = b.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            b.close()
        head, _, body = data.partition(b"\r\n\r\n")
        # A head that promises the whole body, then half of it and a RST.
        conn.sendall(head + b"\r\n\r\n" + body[:max(1, len(body) // 2)])
        time.sleep(0.05)
        rst_close(conn)

    def do_truncate(self, conn, request, path):
        body = b'{"methodResponses": [["Core/echo", {"cut": "'
        conn.sendall(canned(200, "application/json", body, length=2 * len(body)))
        conn.shutdown(socket.SHUT_WR)

    def do_garbage(self, conn, request, path):
        conn.sendall(canned(200, "application/json",
                            b"\x00\xff<not json at all>\r\n}{"))

    def do_html(self, conn, request, path):
        conn.sendall(canned(200, "text/html; charset=utf-8",
                            b"<html><body>Please sign in to the Wi-Fi</body></html>"))

    def do_huge(self, conn, request, path):
        conn.sendall(canned(200, "application/json", b"", length=HUGE))
        chunk = b"[" * 65536
        sent = 0
        while sent < HUGE:
            conn.sendall(chunk)
            sent += len(chunk)

    def do_error(self, conn, request, path):
        conn.sendall(canned(503, "text/html", b"<html>maintenance</html>"))

    def do_oddstatus(self, conn, request, path):
        conn.sendall(canned(299, "application/json", b'{"methodResponses": []}'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", type=int, required=True)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    f = Faulty(args.backend, args.port).start()
    print(json.dumps({"port": f.port}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        f.stop()


if __name__ == "__main__":
    sys.exit(main())
