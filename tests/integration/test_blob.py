#!/usr/bin/env python3
"""Attachments and the image proxy, against a real Cyrus behind a real
lighttpd: uploads and downloads byte for byte, the upload cap on declared
and chunked bodies, other accounts' blobs, neutralised types and cleaned
filenames, byte ranges; and the image proxy against a local test origin on
127.0.0.1 that only the test switch image_proxy_allow_loopback_for_tests
lets it reach. With the switch off, every non-public target is refused
before anything connects. Everything runs with the blob responder as
FastCGI, and the key checks again as CGI.

Traffic goes to loopback only: every other address in here must be
refused by postern's checks before a connection is attempted."""

import hashlib
import http.client
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB, CAROL = "alice@example.test", "bob@example.test", "carol@example.test"
MIB = 1 << 20
UPLOAD_MAX = 60 * MIB
IMAGE_MAX = 10 * MIB          # the default image_proxy_max
IMAGE_TIMEOUT = 3             # seconds, image_proxy_timeout in the tests
BUDGET = 60
# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


# -- the test origin -----------------------------------------------------------


class OriginHandler(BaseHTTPRequestHandler):
    """What a remote mail image server might do, good and bad."""

    def log_message(self, *args):
        pass

    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def send(self, status, ctype, body, length=True, extra=()):
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        o = self.server.origin
        url = urlsplit(self.path)
        o.record(url.path, dict(self.headers.items()))
        route = o.routes.get(url.path)
        if route:
            return route(self, parse_qs(url.query))
        if url.path.startswith("/chain/"):
            n = int(url.path.rsplit("/", 1)[1])
            to = f"/chain/{n - 1}" if n > 1 else "/img.png"   # n redirects
            return self.send(302, "text/plain", b"", extra=[("Location", to)])
        self.send(404, "text/plain", b"no")


def r_png(h, q):
    h.send(200, "image/png", PNG)


def r_jpeg_no_length(h, q):
    h.send(200, "image/jpg", b"\xff\xd8\xff\xe0" + b"j" * 5000, length=False)


def r_svg(h, q):
    h.send(200, "image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')


def r_html(h, q):
    h.send(200, "text/html", b"<script>alert(1)</script>")


def r_gzip(h, q):
    h.send(200, "image/png", b"\x1f\x8b...", extra=[("Content-Encoding", "gzip")])


def r_big_declared(h, q):
    h.send_response(200)
    h.send_header("Content-Type", "image/png")
    h.send_header("Content-Length", str(IMAGE_MAX + MIB))
    h.end_headers()
    for _ in range(11):
        h.wfile.write(b"\0" * MIB)


def r_big_stream(h, q):
    h.send_response(200)
    h.send_header("Content-Type", "image/png")
    h.end_headers()
    for _ in range(IMAGE_MAX // MIB + 2):
        h.wfile.write(b"\0" * MIB)


def r_slow_head(h, q):
    h.server.origin.stop.wait(30)


def r_slow_body(h, q):
    h.send_response(200)
    h.send_header("Content-Type", "image/png")
    h.end_headers()
    h.wfile.write(b"s" * 1024)
    h.wfile.flush()
    h.server.origin.stop.wait(30)


def r_redirect(h, q):
    h.send(302, "text/plain", b"", extra=[("Location", q["to"][0])])


class Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class Origin:
    def __init__(self, host="127.0.0.1"):
        cls = Server6 if ":" in host else ThreadingHTTPServer
        self.httpd = cls((host, 0), OriginHandler)
        self.httpd.daemon_threads = True
        self.httpd.origin = self
        self.httpd.verify_request = self.count_connection
        self.port = self.httpd.server_address[1]
        self.base = f"http://[{host}]:{self.port}" if ":" in host else f"http://{host}:{self.port}"
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = []
        self.routes = {
            "/img.png": r_png, "/img.jpg": r_jpeg_no_length, "/img.svg": r_svg,
            "/page.html": r_html, "/gzip.png": r_gzip, "/big-declared.png": r_big_declared,
            "/big-stream.png": r_big_stream, "/slow-head.png": r_slow_head,
            "/slow-body.png": r_slow_body, "/redirect": r_redirect,
        }
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def count_connection(self, request, client_address):
        with self.lock:
            self.connections += 1
        return True

    def record(self, path, headers):
        with self.lock:
            self.requests.append((path, headers))

    def close(self):
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# -- helpers -------------------------------------------------------------------


def sha(b):
    return hashlib.sha256(b).hexdigest()


def error_of(r):
    try:
        return r.json().get("error")
    except ValueError:
        return None


def filenames(disposition):
    """(disposition type, ASCII filename, decoded filename*) of a header."""
    m1 = re.search(r'filename="([^"]*)"', disposition or "")
    m2 = re.search(r"filename\*=UTF-8''([^;\s]*)", disposition or "")
    kind = (disposition or "").split(";", 1)[0]
    return kind, m1 and m1.group(1), m2 and unquote(m2.group(1))


class Suite:
    def __init__(self, tap, stack, origin, origin6, mode):
        self.t = tap
        self.s = stack
        self.o = origin
        self.o6 = origin6           # on ::1, or None without IPv6 loopback
        self.mode = mode

    def name(self, what):
        return f"[{self.mode}] {what}"

    def ok(self, cond, what, diag=""):
        return self.t.ok(cond, self.name(what), diag)

    def eq(self, got, want, what):
        return self.t.eq(got, want, self.name(what))

    def signed_in(self, user):
        c = Client(self.s.url, timeout=120)
        r = c.login(user, USERS[user])
        if r.status != 200:
            raise RuntimeError(f"sign-in of {user} failed: {r}")
        return c

    def upload(self, c, data, ctype="application/octet-stream", account=ALICE):
        return c.request("POST", f"/api/upload/{quote(account)}", data,
                         {"Content-Type": ctype})

    def blob_id(self, c, data, ctype="application/octet-stream", account=ALICE):
        r = self.upload(c, data, ctype, account)
        if r.status != 201:
            raise RuntimeError(f"upload failed: {r}")
        return r.json()["blobId"]

    def download(self, c, blob, name="file.bin", account=ALICE, query="", headers=None):
        path = f"/api/blob/{quote(account)}/{quote(blob, safe='')}/{quote(name, safe='')}"
        return c.request("GET", path + (f"?{query}" if query else ""), headers=headers)

    def chunked_upload(self, c, size, chunk=MIB):
        conn = http.client.HTTPConnection("127.0.0.1", self.s.port, timeout=120)

        def body():
            left = size
            while left > 0:
                n = min(chunk, left)
                left -= n
                yield b"c" * n
        try:
            conn.request("POST", f"/api/upload/{quote(ALICE)}", body=body(),
                         headers={"Cookie": f"postern_session={c.cookie}",
                                  "X-Postern-CSRF": "1",
                                  "Content-Type": "application/octet-stream"},
                         encode_chunked=True)
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def image(self, c, url, headers=None):
        return c.request("GET", "/api/image?url=" + quote(url, safe=""), headers=headers)

    # -- blobs -------------------------------------------------------------------

    def round_trip(self, sizes):
        c = self.signed_in(ALICE)
        for size in sizes:
            data = os.urandom(size)
            t0 = time.monotonic()
            r = self.upload(c, data, "application/pdf")
            up = time.monotonic() - t0
            self.eq(r.status, 201, f"upload of {size // MIB} MiB accepted")
            doc = r.json()
            self.eq(doc.get("size"), size, f"the JMAP server got all {size // MIB} MiB")
            t0 = time.monotonic()
            d = self.download(c, doc["blobId"], "big.pdf", query="accept=application/pdf")
            down = time.monotonic() - t0
            self.eq(d.status, 200, f"download of {size // MIB} MiB")
            self.ok(sha(d.body) == sha(data), f"{size // MIB} MiB come back byte for byte",
                    f"got {len(d.body)} bytes")
            self.eq(d.header("Content-Length"), str(size), "Content-Length of an identity blob")
            self.eq(d.header("Content-Encoding"), None, "a blob is never compressed")
            print(f"# {self.mode} {size // MIB} MiB: upload {up:.2f} s, download {down:.2f} s")

    def blob_headers(self):
        c = self.signed_in(ALICE)
        data = b"%PDF-1.4 not really\n" * 100
        blob = self.blob_id(c, data, "application/pdf")
        r = self.download(c, blob, "doc.pdf", query="accept=application/pdf")
        self.eq(r.header("Content-Type"), "application/pdf", "a PDF keeps its type")
        self.eq(r.header("Accept-Ranges"), "bytes", "Accept-Ranges: bytes")
        csp = r.header_all("Content-Security-Policy")
        self.ok("sandbox; default-src 'none'" in csp, "sandbox CSP on a blob", csp)
        self.eq(r.header("X-Content-Type-Options"), "nosniff", "nosniff on a blob")
        self.eq(filenames(r.header("Content-Disposition"))[0], "attachment",
                "attachment unless inline is asked")
        r = self.download(c, blob, "doc.pdf", query="accept=application/pdf&inline=1")
        self.eq(filenames(r.header("Content-Disposition"))[0], "attachment",
                "a PDF is never inline")
        png = self.blob_id(c, PNG, "image/png")
        r = self.download(c, png, "dot.png", query="accept=image/png&inline=1")
        self.eq((r.header("Content-Type"), filenames(r.header("Content-Disposition"))[0]),
                ("image/png", "inline"), "a PNG asked inline is inline")
        r = self.download(c, png, "dot.png", query="accept=image/png")
        self.eq(filenames(r.header("Content-Disposition"))[0], "attachment",
                "a PNG not asked inline is an attachment")

    def dangerous_types(self):
        c = self.signed_in(ALICE)
        html = b"<html><body><script>alert(document.cookie)</script></body></html>"
        cases = [("text/html", html, "page.html"),
                 ("image/svg+xml", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "x.svg"),
                 ("application/xhtml+xml", html, "x.xhtml"),
                 ("text/xml", b"<?xml version='1.0'?><a/>", "x.xml"),
                 ("text/javascript", b"alert(1)", "x.js")]
        for ctype, body, name in cases:
            blob = self.blob_id(c, body, ctype)
            r = self.download(c, blob, name, query=f"accept={quote(ctype, safe='')}&inline=1")
            kind = filenames(r.header("Content-Disposition"))[0]
            self.eq((r.status, r.header("Content-Type"), kind),
                    (200, "application/octet-stream", "attachment"),
                    f"{ctype} is sent as an octet-stream attachment, even asked inline")
            self.eq(r.body, body, f"{ctype} bytes unchanged")

    def filename(self):
        c = self.signed_in(ALICE)
        blob = self.blob_id(c, b"hello\n", "text/plain")
        # (lighttpd itself refuses control characters in a URL, CR and LF
        # among them; the unit tests show postern drops them too.)
        name = 'My "quoted" report \u202egnp.exe gr\u00fc\u00dfe \u65e5\u672c\u2066x\u2069\u200f.txt'
        r = self.download(c, blob, name, query="accept=text/plain")
        disp = r.header("Content-Disposition") or ""
        kind, ascii_name, utf8_name = filenames(disp)
        self.eq(r.status, 200, "download with an awkward name")
        self.ok(ascii_name is not None and utf8_name is not None,
                "Content-Disposition has filename and filename*", disp)
        want = "My quoted report gnp.exe gr\u00fc\u00dfe \u65e5\u672cx.txt"
        self.eq(utf8_name, want, "filename* keeps non-ASCII, drops quotes and bidi controls")
        self.ok(ascii_name and all(32 <= ord(ch) < 127 for ch in ascii_name) and '"' not in ascii_name,
                "the fallback filename is plain ASCII", ascii_name)
        for bad in ("\u202e", "\u2066", "\u2069", "\u200f"):
            self.ok(bad not in disp and bad not in (utf8_name or ""),
                    f"no U+{ord(bad):04X} in the header")

    def ranges(self):
        c = self.signed_in(ALICE)
        data = os.urandom(100000)
        blob = self.blob_id(c, data)
        r = self.download(c, blob, headers={"Range": "bytes=100-199"})
        self.eq((r.status, r.header("Content-Range"), r.body), (206, "bytes 100-199/100000", data[100:200]),
                "a plain byte range is 206 with its bytes")
        self.eq(r.header("Content-Length"), "100", "the range's length")
        r = self.download(c, blob, headers={"Range": "bytes=-10"})
        self.eq((r.status, r.body), (206, data[-10:]), "a suffix range")
        r = self.download(c, blob, headers={"Range": "bytes=99990-"})
        self.eq((r.status, r.header("Content-Range"), r.body), (206, "bytes 99990-99999/100000", data[99990:]),
                "an open range")
        r = self.download(c, blob, headers={"Range": "bytes=200000-"})
        self.eq((r.status, r.header("Content-Range")), (416, "bytes */100000"), "a range past the end is 416")
        # postern passes several ranges on to nobody and sends the whole
        # blob; lighttpd may cut them out itself when the whole answer
        # reached it before the header went out.
        r = self.download(c, blob, headers={"Range": "bytes=0-1,5-6"})
        cr = re.fullmatch(r"bytes (\d+)-(\d+)/100000", r.header("Content-Range") or "")
        self.ok((r.status == 200 and r.body == data) or
                (r.status == 206 and cr and r.body == data[int(cr[1]):int(cr[2]) + 1]),
                "several ranges: the whole blob, or lighttpd's own range of it",
                f"{r.status} {r.header('Content-Range')} {len(r.body)}")

    def upload_cap(self):
        c = self.signed_in(ALICE)
        over = UPLOAD_MAX + MIB
        r = self.upload(c, b"x" * over)
        self.eq((r.status, error_of(r)), (413, "too_large"), "an upload declared over the cap is 413")
        status, body = self.chunked_upload(c, over)
        self.eq(status, 413, "a chunked upload over the cap is 413")
        self.ok(b"blobId" not in body, "and nothing is stored", body[:200])
        status, body = self.chunked_upload(c, 3 * MIB)
        self.ok(status == 201 and json.loads(body).get("size") == 3 * MIB,
                "a chunked upload under the cap is stored whole", body[:200])

    def other_accounts(self):
        alice, bob = self.signed_in(ALICE), self.signed_in(BOB)
        mine = self.blob_id(alice, b"alice's secret")
        bobs = self.blob_id(bob, b"bob's secret", account=BOB)
        r = self.download(bob, mine, account=ALICE)
        self.eq((r.status, error_of(r)), (404, "not_found"),
                "bob's session cannot name alice's account")
        r = self.download(alice, bobs, account=BOB)
        self.eq((r.status, error_of(r)), (404, "not_found"),
                "alice's session asking /api/blob/bob@example.test/... is refused")
        self.ok(b"secret" not in r.body, "and gets none of it")
        r = self.download(alice, bobs, account=ALICE)
        self.eq(r.status, 404, "bob's blob under alice's own account is not found")
        self.ok(b"bob's secret" not in r.body, "and gives nothing away")
        r = self.upload(alice, b"into bob's account", account=BOB)
        self.eq((r.status, error_of(r)), (404, "not_found"), "no upload into another account")

    def bad_requests(self):
        c = self.signed_in(CAROL)
        anon = Client(self.s.url)
        r = anon.request("GET", f"/api/blob/{quote(CAROL)}/Gx/x")
        self.eq((r.status, error_of(r)), (401, "unauthenticated"), "download without a session is 401")
        r = anon.request("POST", f"/api/upload/{quote(CAROL)}", b"x")
        self.eq(r.status, 401, "upload without a session is 401")
        r = anon.request("GET", "/api/image?url=" + quote(self.o.base + "/img.png", safe=""))
        self.eq(r.status, 401, "image proxy without a session is 401")
        r = c.request("POST", f"/api/upload/{quote(CAROL)}", b"x", csrf=False)
        self.eq((r.status, error_of(r)), (403, "missing_csrf_header"), "upload without the CSRF header")
        r = c.request("GET", f"/api/upload/{quote(CAROL)}")
        self.eq(r.status, 405, "GET on the upload address is 405")
        r = c.request("GET", "/api/blob/x")
        self.eq(r.status, 404, "a blob path without an id is 404")
        r = c.request("GET", f"/api/blob/{quote(CAROL)}/Gnothing/x.bin")
        self.eq((r.status, error_of(r)), (404, "not_found"), "an unknown blob is 404")
        r = c.request("GET", f"/api/blob/{quote(CAROL)}/Gx/x?accept=text/html%22%3E")
        self.eq((r.status, error_of(r)), (400, "bad_request"), "accept that is not a media type is 400")

    def budget(self):
        c = self.signed_in(CAROL)
        calls = [("GET", f"/api/blob/{quote(CAROL)}/Gnone/x"), ("GET", "/api/image?url=nothing"),
                 ("POST", f"/api/upload/{quote(CAROL)}")]
        statuses = []
        # The budget is a fixed window of a minute: should the minute turn
        # during the run, the count starts again, once.
        while len(statuses) <= 2 * BUDGET + 1 and 429 not in statuses:
            method, path = calls[len(statuses) % 3]
            statuses.append(c.request(method, path, b"x" if method == "POST" else None).status)
        self.ok(429 not in statuses[:BUDGET], "blob, upload and image calls within the budget pass",
                statuses)
        self.eq(statuses[-1], 429, "and count against the API budget")

    # -- the image proxy ---------------------------------------------------------

    def image_fetch(self):
        c = self.signed_in(ALICE)
        before = len(self.o.requests)
        r = self.image(c, self.o.base + "/img.png",
                       headers={"Authorization": "Basic YWxpY2U6c2VjcmV0", "Referer": "http://x/"})
        self.eq((r.status, r.header("Content-Type"), r.body), (200, "image/png", PNG),
                "a PNG from the allowed test origin passes")
        self.ok("sandbox; default-src 'none'" in r.header_all("Content-Security-Policy"),
                "a proxied image carries the sandbox CSP")
        self.eq(r.header("X-Content-Type-Options"), "nosniff", "and nosniff")
        seen = [h for p, h in self.o.requests[before:] if p == "/img.png"]
        sent = {k.lower() for k in (seen[0] if seen else {})}
        self.ok(seen and not sent & {"cookie", "authorization", "referer", "proxy-authorization"},
                "no cookie, credential or referrer reaches the origin", sent)
        r = self.image(c, self.o.base + "/img.jpg")
        self.eq((r.status, r.header("Content-Type"), len(r.body)), (200, "image/jpeg", 5004),
                "an image without a length streams through")
        r = self.image(c, f"http://2130706433:{self.o.port}/img.png")
        self.eq((r.status, r.body), (200, PNG), "a decimal loopback spelling is read as 127.0.0.1")
        if self.o6 is None:
            print("# no IPv6 loopback here: the [::1] fetch is not tried")
            return
        r = self.image(c, self.o6.base + "/img.png")
        self.eq((r.status, r.body), (200, PNG), "an IPv6 literal is fetched through the pin")

    def image_refusals(self):
        c = self.signed_in(ALICE)
        for path, status, code, what in [
                ("/img.svg", 415, "unsupported_media_type", "SVG is refused"),
                ("/page.html", 415, "unsupported_media_type", "HTML is refused"),
                ("/gzip.png", 502, "upstream_error", "an encoded image is refused"),
                ("/missing.png", 404, "not_found", "a missing image is 404"),
                ("/big-declared.png", 413, "too_large", "an image declared over the cap is 413")]:
            r = self.image(c, self.o.base + path)
            self.eq((r.status, error_of(r)), (status, code), what)
        r = self.image(c, self.o.base + "/big-stream.png")
        self.ok(len(r.body) <= IMAGE_MAX, "an image streamed past the cap is cut off",
                f"{r.status}, {len(r.body)} bytes")
        for url, what in [("ftp://127.0.0.1/x.png", "ftp"), ("file:///etc/passwd", "file"),
                          (f"http://user:pw@127.0.0.1:{self.o.port}/img.png", "credentials in the URL"),
                          ("gopher://127.0.0.1:70/", "gopher"), ("/img.png", "a relative URL"),
                          ("http://[fe80::1%25lo]/x.png", "a zone")]:
            r = self.image(c, url)
            self.eq((r.status, error_of(r)), (400, "bad_request"), f"{what} is refused")

    def image_slow(self):
        c = self.signed_in(ALICE)
        t0 = time.monotonic()
        r = self.image(c, self.o.base + "/slow-head.png")
        took = time.monotonic() - t0
        self.eq((r.status, error_of(r)), (504, "upstream_timeout"), "an origin that never answers is 504")
        self.ok(took < IMAGE_TIMEOUT + 3 * SLOW, "after the time cap", f"{took:.1f} s")
        t0 = time.monotonic()
        r = self.image(c, self.o.base + "/slow-body.png")
        took = time.monotonic() - t0
        self.ok(r.status == 200 and len(r.body) == 1024 and took < IMAGE_TIMEOUT + 3 * SLOW,
                "an origin that stalls mid-body is cut off at the time cap",
                f"{r.status}, {len(r.body)} bytes, {took:.1f} s")

    def image_redirects(self):
        c = self.signed_in(ALICE)
        r = self.image(c, self.o.base + "/chain/3")
        self.eq((r.status, r.body), (200, PNG), "three redirects are followed")
        r = self.image(c, self.o.base + "/chain/4")
        self.eq((r.status, error_of(r)), (502, "upstream_error"), "a fourth redirect is refused")
        private = ["http://10.0.0.1/x.png", "http://0x0a000001/x.png", "http://012.0.0.1/x.png",
                   "http://167772161/x.png", "http://169.254.169.254/latest/meta-data/",
                   "http://192.168.1.1/x.png", "http://100.64.0.1/x.png",
                   "http://[fd00::1]/x.png", "http://[64:ff9b::a00:1]/x.png",
                   f"http://[::ffff:127.0.0.1]:{self.o.port}/img.png",
                   f"http://[::ffff:7f00:1]:{self.o.port}/img.png",
                   "http://224.0.0.1/x.png", "http://0.0.0.0/x.png"]
        for to in private:
            before = len(self.o.requests)
            t0 = time.monotonic()
            r = self.image(c, self.o.base + "/redirect?to=" + quote(to, safe=""))
            took = time.monotonic() - t0
            self.eq((r.status, error_of(r)), (403, "private_address"),
                    f"a redirect to {to} is refused")
            self.ok(took < 2 * SLOW and [p for p, _ in self.o.requests[before:]] == ["/redirect"],
                    "before any connection to it", f"{took:.2f} s, {self.o.requests[before:]}")
        r = self.image(c, self.o.base + "/redirect?to=" + quote("file:///etc/passwd", safe=""))
        self.eq((r.status, error_of(r)), (502, "upstream_error"), "a redirect to file: is refused")

    # -- with the test switch off ---------------------------------------------------

    def image_no_loopback(self):
        c = self.signed_in(ALICE)
        port = self.o.port
        targets = [f"http://127.0.0.1:{port}/img.png", f"http://127.1:{port}/img.png",
                   f"http://2130706433:{port}/img.png", f"http://0177.0.0.1:{port}/img.png",
                   f"http://0x7f.0.0.1:{port}/img.png", f"http://0x7f000001:{port}/img.png",
                   f"http://127.0.0.1.:{port}/img.png", f"http://[::1]:{port}/img.png",
                   f"http://[::ffff:127.0.0.1]:{port}/img.png", f"http://localhost:{port}/img.png",
                   f"http://127.0.0.1:{port}/redirect?to=" + quote("http://10.0.0.1/", safe=""),
                   "http://10.0.0.1/x.png", "http://172.16.0.1/x.png", "http://192.168.0.1/x.png",
                   "http://169.254.169.254/", "http://[fe80::1]/x.png", "http://[fc00::1]/x.png",
                   "http://[64:ff9b::7f00:1]/x.png", "http://[::]/x.png", "http://255.255.255.255/",
                   "http://192.0.2.1/x.png", "http://198.18.0.1/x.png", "http://240.0.0.1/x.png"]
        if self.o6:
            targets += [self.o6.base + "/img.png",
                        f"http://[0:0:0:0:0:0:0:1]:{self.o6.port}/img.png"]
        before = self.o.connections
        before6 = self.o6.connections if self.o6 else 0
        for url in targets:
            t0 = time.monotonic()
            r = self.image(c, url)
            took = time.monotonic() - t0
            self.ok(r.status == 403 and error_of(r) == "private_address" and took < 2 * SLOW,
                    f"without the test switch {url} is refused", f"{r}, {took:.2f} s")
        self.eq(self.o.connections, before, "and the test origin never saw a connection")
        if self.o6:
            self.eq(self.o6.connections, before6, "nor the one on ::1")

    def image_off(self):
        c = self.signed_in(ALICE)
        r = self.image(c, self.o.base + "/img.png")
        self.eq((r.status, error_of(r)), (404, "not_found"), "image_proxy = no turns the proxy off")

    def run(self, names):
        for n in names:
            self.t.run(self.name(n), getattr(self, n))


FULL = ["blob_headers", "dangerous_types", "filename", "ranges", "upload_cap",
        "other_accounts", "bad_requests", "image_fetch", "image_refusals", "image_slow",
        "image_redirects", "budget"]
KEY = ["blob_headers", "dangerous_types", "filename", "ranges", "upload_cap",
       "other_accounts", "image_fetch", "image_redirects"]


def relaunch(stack, mode, extra):
    """The same Cyrus, lighttpd again with another mode or configuration."""
    stack.stop_lighttpd()
    stack.mode = mode
    stack.conf_extra = extra
    stack.write_conf(stack.cyrus.base_url)
    stack.start_lighttpd()


def main():
    tap = Tap()
    base = {"upload_max": f"{UPLOAD_MAX // MIB}M", "api_budget": str(BUDGET),
            "image_proxy_timeout": f"{IMAGE_TIMEOUT}s"}
    with_switch = dict(base, image_proxy_allow_loopback_for_tests="yes")
    root = tempfile.mkdtemp(prefix="postern-it-blob-")
    stack = Stack(root, mode="fcgi", conf_extra=with_switch, seed=False)
    origin = Origin()
    try:
        origin6 = Origin("::1")
    except OSError:
        origin6 = None
    try:
        stack.start()
    except Exception as e:
        origin.close()
        tap.bail(f"the stack did not start: {e}")
    try:
        fcgi = Suite(tap, stack, origin, origin6, "fcgi")
        tap.run("fcgi round trip", fcgi.round_trip, [10 * MIB, 50 * MIB])
        fcgi.run(FULL)
        relaunch(stack, "fcgi", base)
        fcgi.run(["image_no_loopback"])
        relaunch(stack, "fcgi", dict(base, image_proxy="no"))
        fcgi.run(["image_off"])
        relaunch(stack, "cgi", with_switch)
        cgi = Suite(tap, stack, origin, origin6, "cgi")
        tap.run("cgi round trip", cgi.round_trip, [10 * MIB])
        cgi.run(KEY)
        relaunch(stack, "cgi", base)
        cgi.run(["image_no_loopback"])
    finally:
        stack.stop()
        origin.close()
        if origin6:
            origin6.close()
        if tap.failed:
            print("# lighttpd error log tail:\n# " + stack.log_tail().replace("\n", "\n# "))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
