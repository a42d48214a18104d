#!/usr/bin/env python3
"""Every answer under /api/ is JSON, also those the web server makes
itself: through lighttpd (FastCGI and CGI) and Apache (mod_proxy_fcgi,
mod_fcgid, .htaccess with CGI), a path nothing serves, a body without a
length, a body over the web server's own limit, pushd stopped or broken,
a request the server cannot parse, an unknown method. Each answer must
be {"error": code, "message": text} with a JSON type. Also: the error
files in www/api-errors/ and the shipped configurations name the same
statuses."""
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
from acceptor import Acceptor  # noqa: E402
from client import Client  # noqa: E402
from stack import BUILDDIR, SRCDIR, Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

ALICE = "alice@example.test"
PASSWORDS = dict(demo_mail.DEMO_USERS)
MIB = 1 << 20
MAX_REQUEST = 10 * MIB        # postern's default max_request
SERVER_LIMIT = 64 * MIB       # the shipped configurations' body limit
ERRORS = os.path.join(SRCDIR, "www", "api-errors")
MODES = [("fcgi", "lighttpd"), ("cgi", "lighttpd"), ("proxy_fcgi", "apache"),
         ("fcgid", "apache"), ("htaccess-cgi", "apache")]


def statuses_of_files():
    return sorted(int(n[:3]) for n in os.listdir(ERRORS) if re.fullmatch(r"\d{3}\.html", n))


def shipped(name):
    with open(os.path.join(BUILDDIR, "conf", name)) as f:
        return f.read()


def error_files(t):
    """Each file is one JSON error; every configuration names them all."""
    statuses = statuses_of_files()
    for s in statuses:
        with open(os.path.join(ERRORS, f"{s}.html")) as f:
            doc = json.load(f)
        t.ok(isinstance(doc.get("error"), str) and isinstance(doc.get("message"), str)
             and set(doc) == {"error", "message"},
             f"www/api-errors/{s}.html is a JSON error", doc)
    for name in ("lighttpd.conf", "lighttpd-cgi.conf"):
        named = sorted(int(m) for m in re.findall(r'"(\d{3})\.html" => "application/json',
                                                   shipped(name)))
        t.eq(named, statuses, f"{name} sends every error file as JSON")
    for name in ("apache-postern.conf", "postern.htaccess"):
        named = sorted(int(a) for a, b in re.findall(r"ErrorDocument (\d{3}) /api-errors/(\d{3})\.html",
                                                     shipped(name)) if a == b)
        t.eq(named, statuses, f"{name} has an ErrorDocument for every error file")


class Raw:
    """One request written by hand on its own connection, for what an
    HTTP library will not send; the answer read until the server closes."""

    def __init__(self, port):
        self.port = port

    def send(self, head, body=b"", wait=30):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=wait)
        out = b""
        try:
            s.sendall(head)
            if body:
                try:
                    s.sendall(body)
                except OSError:
                    pass    # the server may answer and close before the end
            while True:
                d = s.recv(65536)
                if not d:
                    break
                out += d
        except OSError:
            pass
        finally:
            s.close()
        return parse(out)


def parse(raw):
    """(status, headers dict lower-cased, body) of an HTTP/1.x answer,
    chunked bodies joined."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    status = int(m.group(1)) if m else 0
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = unchunk(body)
    return status, headers, body


def unchunk(body):
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        n = int(size.split(b";")[0] or b"0", 16)
        if n == 0:
            break
        out += rest[:n]
        body = rest[n + 2:]
    return out


def is_json_error(answer):
    status, headers, body = answer
    try:
        doc = json.loads(body)
    except ValueError:
        return False
    return (headers.get("content-type", "").startswith("application/json")
            and isinstance(doc, dict) and isinstance(doc.get("error"), str)
            and isinstance(doc.get("message"), str))


def head(method, path, cookie=None, extra=""):
    h = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    if method not in ("GET", "HEAD"):
        h += "X-Postern-CSRF: 1\r\n"
    if cookie:
        h += f"Cookie: postern_session={cookie}\r\n"
    return (h + extra + "\r\n").encode()


def chunks(data, size=1 << 16):
    return b"".join(b"%x\r\n" % len(data[i:i + size]) + data[i:i + size] + b"\r\n"
                    for i in range(0, len(data), size)) + b"0\r\n\r\n"


def broken(path):
    """A FastCGI 'backend' on pushd's socket that takes each connection
    and closes it unanswered."""
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(path)
    return Acceptor(sock, hold=False)


# The headers every API answer carries, the web server's own included.
API_HEADERS = (("x-content-type-options", "nosniff"), ("x-frame-options", "deny"),
               ("referrer-policy", "no-referrer"), ("cache-control", "no-store"))


def check(t, mode, what, answer, statuses):
    """answer is a JSON error of one of statuses, with the API's headers."""
    status, headers = answer[0], answer[1]
    t.ok(status in statuses and is_json_error(answer),
         f"{mode}: {what}: {'/'.join(map(str, statuses))} with a JSON error",
         f"{status} {headers.get('content-type')} {answer[2][:200]!r}")
    missing = [k for k, v in API_HEADERS if headers.get(k, "").lower() != v]
    if not headers.get("content-security-policy", "").startswith("default-src 'none'"):
        missing.append("content-security-policy")
    t.ok(not missing, f"{mode}: ... with the API's security headers", missing)


def mode_checks(t, s, mode):
    raw = Raw(s.port)
    c = Client(s.url)
    t.eq(c.login(ALICE, PASSWORDS[ALICE]).status, 200, f"{mode}: signed in")
    check(t, mode, "an /api/ path nothing serves", raw.send(head("GET", "/api/nothing/here")), (404,))
    status, headers, _ = raw.send(head("GET", "/index.html"))
    csp = headers.get("content-security-policy", "")
    t.ok(status == 200 and csp.startswith("default-src 'self'") and
         headers.get("cache-control") != "no-store",
         f"{mode}: the app's page keeps its own policy, not the API's", f"{status} {headers}")
    call = json.dumps({"using": ["urn:ietf:params:jmap:core"],
                       "methodCalls": [["Core/echo", {"n": 1}, "0"]]}).encode()
    jmap = head("POST", "/api/jmap", c.cookie, "Content-Type: application/json\r\n"
                "Transfer-Encoding: chunked\r\n")
    status, _, body = raw.send(jmap, chunks(call))
    t.ok(status == 200 and b"Core/echo" in body, f"{mode}: a chunked JMAP call is answered",
         f"{status} {body[:200]!r}")
    big = b'{"pad": "' + b"x" * (MAX_REQUEST + MIB) + b'"}'
    answer = raw.send(jmap, chunks(big))
    check(t, mode, "a chunked JMAP body over max_request", answer, (413,))
    t.eq(json.loads(answer[2] or b"{}").get("error"), "too_large",
         f"{mode}: ... is too_large, not the web server's 411")
    n = SERVER_LIMIT + 4 * MIB
    up = head("POST", f"/api/upload/{ALICE}", c.cookie,
              f"Content-Type: application/octet-stream\r\nContent-Length: {n}\r\n")
    check(t, mode, "a body over the web server's limit", raw.send(up, b"u" * n), (413,))
    unknown = raw.send(head("FOO", "/api/config"))
    check(t, mode, "an unknown method", unknown, (405, 501))
    if mode.startswith("htaccess"):
        check(t, mode, "the event stream without pushd", raw.send(head("GET", "/api/events")), (404,))
        return
    s.stop_pushd()
    try:
        check(t, mode, "pushd not running", raw.send(head("GET", "/api/events")), (502, 503))
        peer = broken(s.pushd_socket)
        try:
            check(t, mode, "pushd's socket answering nothing",
                  raw.send(head("GET", "/api/events")), (500, 502, 503))
        finally:
            peer.close()
            os.unlink(s.pushd_socket)
    finally:
        s.start_pushd()
    if s.server == "lighttpd":
        # Apache answers a request it cannot read with its own page
        # before any configuration of a path applies (see its
        # ErrorDocument); lighttpd takes postern's.
        check(t, mode, "a malformed header", raw.send(head("GET", "/api/config",
                                                            extra="Bad Header\r\n")), (400,))
        check(t, mode, "headers too large", raw.send(head(
            "GET", "/api/config", extra="X-Big: " + "a" * 70000 + "\r\n")), (431, 400))


def main():
    t = Tap()
    error_files(t)
    # A short folder: Apache refuses a Unix socket path over 107 bytes,
    # which a build folder as deep as distcheck's passes.
    # mkdtemp makes it 0700; Apache's modes run pushd and the responders
    # as the web server's user, who must reach their files in it.
    root = tempfile.mkdtemp(prefix="postern-weberrors-")
    os.chmod(root, 0o755)
    first = Stack(os.path.join(root, "first"), seed=False)
    try:
        first.start()
        upstream = first.cyrus.base_url
        for mode, server in MODES:
            if server == "apache" and apache.skip_reason(mode):
                print(f"# {mode} left out: {apache.skip_reason(mode)}")
                continue
            s = first if mode == "fcgi" else Stack(os.path.join(root, mode), mode=mode,
                                                   server=server, upstream=upstream, seed=False)
            try:
                if s is not first:
                    s.start()
                t.run(mode, mode_checks, t, s, mode)
            finally:
                if s is not first:
                    s.stop()
    finally:
        first.stop()
    if not t.failed:
        shutil.rmtree(root, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    start = time.monotonic()
    code = main()
    print(f"# {time.monotonic() - start:.0f} s")
    sys.exit(code)
