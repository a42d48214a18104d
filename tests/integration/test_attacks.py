#!/usr/bin/env python3
"""No single client takes postern down: each attack of issue 15 against the
real web servers as shipped (lighttpd with FastCGI, Apache with
mod_proxy_fcgi and with mod_fcgid), while another user (alice, from
127.0.0.1) signs in, makes a JMAP call and downloads a blob, each of which
must be answered within VICTIM_LIMIT seconds. The attacker (mallory)
connects from 127.0.0.2: the web server sees another address. Attacks:

    slow sign-in bodies   Content-Length 16000, one byte every 2 s, on
                          several connections
    slow JMAP bodies      the same from a signed-in user
    slow uploads          the same, a 5 MiB upload
    unread downloads      20 MiB blobs asked for and never read
    hung sign-in          the mail server takes the sign-in and never
                          answers (tests/harness/faulty.py): each costs
                          login_timeout, alice's own sign-in is then a 504
                          in about as long, and her session, JMAP call and
                          download are answered as ever
    image fetches         /api/image of a server that accepts and never
                          answers, on several connections
    slow-loris            LORIS half-open connections trickling their head

Each prints, as a TAP comment, how long alice waited for each request; the
per-address cap is set low where it is the defence (CAP_LIGHTTPD,
CAP_APACHE) so that it bites. Also, under mod_proxy_fcgi: a burst of
downloads that are read, more than a pool, from one address: none refused.
Also: the idle memory (Pss) and CPU of the web server and the responders,
the security headers on the web server's own answers under /api/, Range
as docs/API.md says, and a .htaccess host without mod_headers refusing to
serve the app (500). Loopback only; every attack is bounded in time and in
connections. Arguments name stacks to run alone (lighttpd, proxy_fcgi,
fcgid)."""

import json
import os
import resource
import socket
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
from acceptor import Acceptor  # noqa: E402
from client import Client  # noqa: E402
from faulty import Faulty  # noqa: E402
from stack import SLOW, Stack, children, proc_args  # noqa: E402
from stalwart import StalwartTest  # noqa: E402
from tap import Tap  # noqa: E402

ALICE, MALLORY = "alice@example.test", "mallory@example.test"
PASSWORDS = {ALICE: "alice-demo-pass", MALLORY: "mallory-pass"}
ATTACKER = "127.0.0.2"
VICTIM_LIMIT = 2.0 * SLOW    # what alice may wait for each request
CLIENT_TIMEOUT = 25          # a request that takes longer counts as lost
LOGIN_TIMEOUT = 3            # login_timeout in the stack's postern.conf
IMAGE_TIMEOUT = 5            # image_proxy_timeout
CONNS = 6                    # connections of each attack
SIGNIN_CONNS = 8             # sign-ins to a hung server: more than a pool (4)
# Half-open connections of the slow-loris: issue 15's 2,000, as far as
# the descriptors this process may have allow (loris_count).
LORIS_WANTED = 2000


def loris_count():
    """LORIS_WANTED, or fewer where the hard limit on descriptors is lower
    (a few hundred kept for the rest of the test); the soft limit raised."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    have = hard if hard != resource.RLIM_INFINITY else LORIS_WANTED + 500
    return max(100, min(LORIS_WANTED, have - 500))


LORIS = loris_count()
SETTLE = 1.5                 # the attack runs this long before alice asks
CAP_LIGHTTPD = 4             # lighttpd-limits.lua's max_conns in the test
# POSTERN_CONNS_PER_IP: mod_proxy_fcgi runs the shipped 50, far above its
# pools of 4, where postern's own rule (shared/seat.h) keeps one address's
# unread downloads from holding a pool; mod_fcgid's processes share no
# table, so its cap is set below its 8 per program (a gap in SECURITY.md).
CAP_APACHE = {"proxy_fcgi": 50, "fcgid": 3}
BIG = 20 << 20               # the never-read download


def blackhole():
    """An image server on loopback that accepts connections and never
    answers: (its port, the Acceptor to close)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock.getsockname()[1], Acceptor(sock, hold=True)


def attacker_socket(port, rcvbuf=None, timeout=5):
    """A connection to the web server from the attacker's address."""
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((ATTACKER, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def head(method, path, cookie=None, length=None, ctype=None):
    h = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if method != "GET":
        h += "X-Postern-CSRF: 1\r\n"
    if cookie:
        h += f"Cookie: postern_session={cookie}\r\n"
    if ctype:
        h += f"Content-Type: {ctype}\r\n"
    if length is not None:
        h += f"Content-Length: {length}\r\n"
    return (h + "\r\n").encode()


class Attack:
    """Threads that each keep an attacking connection going until stop();
    open() counts the connections the server has not closed."""

    def __init__(self, n, one):
        self.stop_ev = threading.Event()
        self.alive = 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.loop, args=(one,), daemon=True)
                        for _ in range(n)]

    def loop(self, one):
        while not self.stop_ev.is_set():
            try:
                with self.lock:
                    self.alive += 1
                try:
                    one(self.stop_ev)
                finally:
                    with self.lock:
                        self.alive -= 1
            except OSError:
                pass
            self.stop_ev.wait(0.5)   # a refused attacker tries again

    def __enter__(self):
        for th in self.threads:
            th.start()
        time.sleep(SETTLE)
        return self

    def __exit__(self, *exc):
        self.stop_ev.set()
        for th in self.threads:
            th.join(CLIENT_TIMEOUT + 10)


def trickle(port, request, length, every=2.0):
    """One connection that sends a head and then its body a byte at a time."""
    def one(stop):
        s = attacker_socket(port)
        try:
            s.sendall(request)
            for _ in range(length):
                if stop.wait(every):
                    return
                s.sendall(b" ")
        finally:
            s.close()
    return one


def unread(port, path, cookie):
    """One connection that asks for a large answer and never reads it."""
    def one(stop):
        s = attacker_socket(port, rcvbuf=4096)
        try:
            s.sendall(head("GET", path, cookie))
            stop.wait(CLIENT_TIMEOUT)
        finally:
            s.close()
    return one


def repeated(port, request):
    """One connection at a time sending a whole request and waiting for its
    answer, again and again (a sign-in to a hung server, an image)."""
    def one(stop):
        s = attacker_socket(port, timeout=CLIENT_TIMEOUT)
        try:
            s.sendall(request)
            s.recv(65536)
        finally:
            s.close()
    return one


class Loris:
    """LORIS connections from the attacker's address, each sending its
    request head a byte at a time; one the server closes is opened again
    (at most every half second per slot)."""

    def __init__(self, port):
        self.port = port
        self.socks = [None] * LORIS
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self, i):
        try:
            s = attacker_socket(self.port, timeout=0.5)
            s.sendall(b"GET /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            s.setblocking(False)
            self.socks[i] = s
        except OSError:
            self.socks[i] = None

    def alive(self):
        return sum(1 for s in self.socks if s is not None)

    def run(self):
        tick = 0
        while not self.stop_ev.is_set():
            for i, s in enumerate(self.socks):
                if s is None:
                    self.open_one(i)
                    continue
                try:
                    # One more header byte every few seconds (or news that
                    # the server closed it: read what it said, if anything).
                    if tick % 8 == i % 8:
                        s.send(b"X")
                    if s.recv(4096) == b"":
                        raise OSError("closed")
                except BlockingIOError:
                    pass
                except OSError:
                    s.close()
                    self.socks[i] = None
            tick += 1
            self.stop_ev.wait(0.5)

    def __enter__(self):
        self.thread.start()
        end = time.monotonic() + 10
        while self.alive() < LORIS and time.monotonic() < end:
            time.sleep(0.1)
        time.sleep(SETTLE)
        return self

    def __exit__(self, *exc):
        self.stop_ev.set()
        self.thread.join(10)
        for s in self.socks:
            if s:
                s.close()


def timed(fn):
    """(seconds, status) of one request; status "lost" when it broke or
    took longer than CLIENT_TIMEOUT."""
    start = time.monotonic()
    try:
        status = fn().status
    except OSError as e:
        status = f"lost ({type(e).__name__})"
    return time.monotonic() - start, status


class Victim:
    """alice: signed in, with a small blob to download."""

    def __init__(self, url):
        self.url = url
        self.c = Client(url, timeout=CLIENT_TIMEOUT)
        r = self.c.login(ALICE, PASSWORDS[ALICE])
        if r.status != 200:
            raise RuntimeError(f"alice could not sign in: {r}")
        self.account = r.json()["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        r = self.c.request("POST", f"/api/upload/{self.account}", b"alice's blob",
                           headers={"Content-Type": "text/plain"})
        self.blob = r.json()["blobId"]

    def sign_in(self):
        return Client(self.url, timeout=CLIENT_TIMEOUT).login(ALICE, PASSWORDS[ALICE])

    def jmap(self):
        return self.c.jmap([["Core/echo", {"n": 1}, "0"]], using=["urn:ietf:params:jmap:core"])

    def download(self):
        return self.c.request("GET", f"/api/blob/{self.account}/{self.blob}/a.txt"
                              "?accept=text/plain")

    def session(self):
        return self.c.request("GET", "/api/auth/session")

    def check(self, t, label, signin=(200,), signin_limit=None):
        """Each of alice's requests answered in time; prints the times."""
        asks = [("sign-in", self.sign_in, signin, signin_limit or VICTIM_LIMIT),
                ("JMAP call", self.jmap, (200,), VICTIM_LIMIT),
                ("download", self.download, (200,), VICTIM_LIMIT)]
        if signin != (200,):
            asks.append(("session check", self.session, (200,), VICTIM_LIMIT))
        got = [(name, *timed(fn), want, limit) for name, fn, want, limit in asks]
        print(f"# {label}: alice waited " + ", ".join(
            f"{name} {secs:.2f} s ({status})" for name, secs, status, _, _ in got), flush=True)
        for name, secs, status, want, limit in got:
            t.ok(status in want and secs < limit,
                 f"{label}: another user's {name} is answered ({'/'.join(map(str, want))}) "
                 f"within {limit:g} s", f"{status} after {secs:.2f} s")


def pss_kib(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration):
            pass
    return total


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            pass
    return total


def tree(pid):
    """pid and all its descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children(p))
    return out


def web_pids(s):
    """The web server, its children and the responders (pushd apart)."""
    if s.web is None:
        return tree(s.lighttpd.pid)
    pids = tree(s.web.proc.pid)
    for p in s.web.responders:
        pids += tree(p.pid)
    return pids


def idle_cost(s, label):
    time.sleep(2)
    pids = web_pids(s)
    names = sorted(os.path.basename((proc_args(p) or ["?"])[0]) for p in pids)
    before = cpu_ticks(pids)
    time.sleep(5)
    ticks = cpu_ticks(web_pids(s)) - before
    hz = os.sysconf("SC_CLK_TCK")
    print(f"# {label}: idle, the web server and responders: {len(pids)} processes "
          f"({', '.join(f'{n} x{names.count(n)}' for n in sorted(set(names)))}), "
          f"Pss {pss_kib(web_pids(s)) / 1024:.1f} MiB, CPU {ticks / hz / 5 * 100:.2f}% "
          f"over 5 s; pushd Pss {pss_kib([s.pushd.pid] if s.pushd else []) / 1024:.1f} MiB",
          flush=True)


def served_again(port, within=10):
    """Waits until the attacking address is answered again: mod_qos counts
    the slow-loris connections until Apache has seen each one close."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            with attacker_socket(port) as c:
                c.sendall(head("GET", "/api/config"))
                if b" 200 " in c.recv(4096).split(b"\r\n")[0]:
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def own_answers(t, s, label, mallory):
    """What the web server answers itself under /api/ carries the API's
    security headers; Range as API.md says."""
    t.ok(served_again(s.port), f"{label}: the attacking address is answered again once it lets go")
    raw = attacker_socket(s.port, timeout=CLIENT_TIMEOUT)
    done = threading.Event()

    def send_body():
        # Apache reads up to its limit before it refuses; lighttpd refuses
        # the declared length at once.
        chunk = b"\0" * 65536
        try:
            for _ in range(70 * 16):
                if done.is_set():
                    return
                raw.sendall(chunk)
        except OSError:
            pass
    sender = threading.Thread(target=send_body, daemon=True)
    answer = b""
    try:
        raw.sendall(head("POST", f"/api/upload/{mallory.account}", mallory.c.cookie,
                         length=70 << 20, ctype="application/octet-stream"))
        sender.start()
        while b"\r\n\r\n" not in answer:
            d = raw.recv(65536)
            if not d:
                break
            answer += d
    finally:
        done.set()
        raw.close()
        if sender.is_alive():
            sender.join(10)
    lines = answer.split(b"\r\n\r\n")[0].decode("latin-1").lower().split("\r\n")
    hdrs = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    t.ok(lines[0].split(" ")[1:2] == ["413"], f"{label}: a body over the web server's "
         "limit is its own 413", lines[0])
    for name, value in (("x-content-type-options", "nosniff"), ("x-frame-options", "deny"),
                        ("referrer-policy", "no-referrer"), ("cache-control", "no-store")):
        t.eq(hdrs.get(name), value, f"{label}: ... with {name}: {value}")
    t.ok(hdrs.get("content-security-policy", "").startswith("default-src 'none'"),
         f"{label}: ... and the API's Content-Security-Policy",
         hdrs.get("content-security-policy"))
    c = mallory.c
    body = bytes(range(256)) * 4
    r = c.request("POST", f"/api/upload/{mallory.account}", body,
                  headers={"Content-Type": "application/octet-stream"})
    blob = r.json()["blobId"]
    path = f"/api/blob/{mallory.account}/{blob}/b.bin"
    for rng, what in (("bytes=0-9,20-29", "a multi-range"), ("bytes=abc", "an invalid Range"),
                      ("bytes=9-0", "a reversed range")):
        r = c.request("GET", path, headers={"Range": rng})
        t.ok(r.status == 200 and r.body == body,
             f"{label}: {what} is ignored: the whole blob, as API.md says",
             f"{r.status} {r.header('Content-Type')} {len(r.body)} bytes")
    r = c.request("GET", path, headers={"Range": "bytes=10-19"})
    t.ok(r.status == 206 and r.body == body[10:20], f"{label}: one plain range is 206",
         f"{r.status} {len(r.body)}")


def burst(t, url, m, label, n=8):
    """n downloads at once from one address, more than a pool, each read
    as it comes (a mail's inline images): every one is a 200. The blob is
    past Apache's FlushMaxThreshold, so each process waits on its reader."""
    def one(i, out):
        c = Client(url, timeout=CLIENT_TIMEOUT)
        c.cookie = m.c.cookie
        try:
            r = c.request("GET", f"/api/blob/{m.account}/{m.big}/big{i}.bin")
            out[i] = f"{r.status} {len(r.body)}"
        except OSError as e:
            out[i] = repr(e)
    out = [None] * n
    threads = [threading.Thread(target=one, args=(i, out)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(CLIENT_TIMEOUT + 5)
    t.ok(all(o == f"200 {BIG}" for o in out),
         f"{label}: {n} downloads read at once from one address: none refused", out)


def slow_reader(port, path, cookie, rate, out, i):
    """Reads one answer at rate bytes/s, as a slow link does, from alice's
    address: out[i] gets the status and the body's length, or what went
    wrong."""
    s = socket.socket()
    # A phone's window, not loopback's megabytes: Apache must wait on it.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.settimeout(CLIENT_TIMEOUT)
    s.connect(("127.0.0.1", port))
    got, chunk = b"", max(1, rate // 10)
    try:
        # HTTP/1.0: the body as it is, to the connection's end.
        s.sendall(head("GET", path, cookie).replace(b"HTTP/1.1", b"HTTP/1.0"))
        while True:
            d = s.recv(chunk)
            if not d:
                break
            got += d
            time.sleep(0.1)
        hd, _, body = got.partition(b"\r\n\r\n")
        out[i] = f"{hd.split(b' ')[1].decode()} {len(body)}"
    except OSError as e:
        out[i] = repr(e)
    finally:
        s.close()


def slow_pair(t, s, v, m, label):
    """A full pool nobody else waits for: two other addresses hold a
    process each with an answer they never read (one each: no rule can
    take those), and alice reads two 12 MiB downloads at 1 MiB/s (Apache
    stops taking them for seconds at a time while it writes its 4 MiB
    out, so they look stalled). Both of hers arrive whole: nothing is
    given up while no request waits."""
    size = 12 << 20
    r = v.c.request("POST", f"/api/upload/{v.account}", os.urandom(size),
                    headers={"Content-Type": "application/octet-stream"})
    blob = r.json()["blobId"]
    out, held = [None, None], []
    try:
        for addr in ("127.0.0.3", "127.0.0.4"):
            h = socket.socket()
            h.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            h.bind((addr, 0))
            h.connect(("127.0.0.1", s.port))
            h.sendall(head("GET", f"/api/blob/{m.account}/{m.big}/big.bin", m.c.cookie))
            held.append(h)
        time.sleep(SETTLE)
        readers = [threading.Thread(target=slow_reader, args=(
            s.port, f"/api/blob/{v.account}/{blob}/twelve.bin", v.c.cookie, 1 << 20, out, i))
            for i in range(2)]
        for th in readers:
            th.start()
        for th in readers:
            th.join(CLIENT_TIMEOUT + 10)
    finally:
        for h in held:
            h.close()
    t.ok(out == [f"200 {size}"] * 2, f"{label}: two downloads read slowly in a full pool "
         "nobody waits for: both whole", out)


class Mallory:
    def __init__(self, url):
        self.c = Client(url, timeout=CLIENT_TIMEOUT)
        r = self.c.login(MALLORY, PASSWORDS[MALLORY])
        if r.status != 200:
            raise RuntimeError(f"mallory could not sign in: {r}")
        self.account = r.json()["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        r = self.c.request("POST", f"/api/upload/{self.account}", os.urandom(BIG),
                           headers={"Content-Type": "application/octet-stream"})
        self.big = r.json()["blobId"]


def attacks(t, s, faulty, label, cap):
    v = Victim(s.url)
    m = Mallory(s.url)
    idle_cost(s, label)
    port = s.port
    cookie = m.c.cookie
    v.check(t, f"{label}, no attack")
    if cap >= 8:    # where the cap is not the defence (proxy_fcgi)
        burst(t, s.url, m, label)
        slow_pair(t, s, v, m, label)
    login = head("POST", "/api/auth/login", length=16000, ctype="application/json")
    with Attack(CONNS, trickle(port, login, 16000)):
        v.check(t, f"{label}, slow sign-in bodies")
    jmap = head("POST", "/api/jmap", cookie, length=100000, ctype="application/json")
    with Attack(CONNS, trickle(port, jmap, 100000)):
        v.check(t, f"{label}, slow JMAP bodies")
    up = head("POST", f"/api/upload/{m.account}", cookie, length=5 << 20,
              ctype="application/octet-stream")
    with Attack(CONNS, trickle(port, up, 5 << 20)):
        v.check(t, f"{label}, slow uploads")
    with Attack(CONNS, unread(port, f"/api/blob/{m.account}/{m.big}/big.bin", cookie)):
        v.check(t, f"{label}, unread downloads")
        refused(t, port, label, cap, "unread downloads",
                f"/api/blob/{m.account}/{m.big}/big.bin", cookie)
    creds = json.dumps({"username": MALLORY, "password": PASSWORDS[MALLORY]}).encode()
    signin = head("POST", "/api/auth/login", length=len(creds), ctype="application/json") + creds
    faulty.set("/jmap/session", "hang")
    faulty.set("/.well-known/jmap", "hang")
    try:
        with Attack(SIGNIN_CONNS, repeated(port, signin)):
            # alice's own sign-in waits for the mail server like the
            # attacker's, in the same queue: bounded by login_timeout for
            # each round of the sign-in pool (2 processes or more) ahead
            # of hers, and her own. Her session check is another pool's
            # (login.sock).
            v.check(t, f"{label}, a mail server that hangs at sign-in", signin=(504,),
                    signin_limit=LOGIN_TIMEOUT * (SIGNIN_CONNS // 2 + 2))
    finally:
        faulty.clear()
    hole_port, hole = blackhole()
    image = head("GET", f"/api/image?url=http://127.0.0.1:{hole_port}/i.png", cookie)
    try:
        with Attack(CONNS, repeated(port, image)):
            v.check(t, f"{label}, image fetches that never end")
    finally:
        hole.close()
    with Loris(port) as loris:
        held = loris.alive()
        v.check(t, f"{label}, slow-loris ({held} of {LORIS} half-open connections held)")
        if s.web:
            # mod_qos counts connections as they are accepted; lighttpd
            # cannot count those still sending their head (SECURITY.md).
            refused(t, port, label, cap, "half-open connections")
    own_answers(t, s, label, m)


def refused(t, port, label, cap, held, path="/api/config", cookie=None):
    """While the attacking address holds its connections, cap + 1 more of
    its requests, each holding an answer it does not read: at least one
    is refused (lighttpd's JSON 429, or mod_qos closing it), however many
    of the attack's own the cap let through before."""
    socks, statuses = [], []
    try:
        for _ in range(cap + 1):
            try:
                s = attacker_socket(port, rcvbuf=4096)
                socks.append(s)
                s.sendall(head("GET", path, cookie))
            except OSError as e:
                statuses.append(repr(e).encode())
        for s in socks:
            try:
                statuses.append(s.recv(4096).split(b"\r\n")[0] or b"closed")
            except OSError as e:
                statuses.append(repr(e).encode())
    finally:
        for s in socks:
            s.close()
    t.ok(any(b" 200 " not in st for st in statuses), f"{label}: meanwhile a whole request "
         f"from the attacking address is refused (its {held} past {cap} connections)",
         b", ".join(statuses))


def make_stack(root, kind, faulty):
    conf = {"login_timeout": f"{LOGIN_TIMEOUT}s", "image_proxy_timeout": f"{IMAGE_TIMEOUT}s",
            "image_proxy_allow_loopback_for_tests": "yes", "upstream_timeout": "30s",
            "login_limit_user": "100000", "login_limit_ip": "100000",
            "login_limit_all": "100000", "api_budget": "1000000", "push_mode": "poll",
            "push_poll_interval": "60s"}
    if kind == "lighttpd":
        s = Stack(os.path.join(root, kind), mode="fcgi", upstream=faulty.url, conf_extra=conf)
        s.lua_values = {"local max_conns": str(CAP_LIGHTTPD)}
        return s, CAP_LIGHTTPD
    s = Stack(os.path.join(root, kind), mode=kind, server="apache", upstream=faulty.url,
              conf_extra=conf)
    s.web.conns_per_ip = CAP_APACHE[kind]
    return s, CAP_APACHE[kind]


def no_headers_module(t, root, faulty):
    """A shared host without mod_headers: the .htaccess makes Apache refuse
    (500) rather than serve the app without its CSP."""
    s = Stack(os.path.join(root, "htaccess"), mode="htaccess-cgi", server="apache",
              upstream=faulty.url, seed=False)
    s.web.without = {"headers"}
    with s:
        for path in ("/", "/index.html", "/api/health"):
            r = Client(s.url, timeout=CLIENT_TIMEOUT).request("GET", path)
            t.ok(r.status == 500 and r.header("Content-Security-Policy") is None,
                 f".htaccess without mod_headers: {path} is 500, never served bare",
                 f"{r.status} {r.header('Content-Type')}")


def main():
    t = Tap()
    only = sys.argv[1:]
    root = tempfile.mkdtemp(prefix="postern-it-attacks-")
    if os.geteuid() == 0:
        os.chmod(root, 0o755)
    up = StalwartTest(root, PASSWORDS)
    faulty = Faulty(up.port).start()
    try:
        for kind in ("lighttpd", "proxy_fcgi", "fcgid"):
            if only and kind not in only:
                continue
            if kind != "lighttpd" and apache.skip_reason(kind):
                print(f"# {kind} left out: {apache.skip_reason(kind)}")
                continue
            s, cap = make_stack(root, kind, faulty)
            start = time.monotonic()
            try:
                s.start()
                t.run(kind, attacks, t, s, faulty, kind, cap)
            finally:
                if t.failed:
                    print("# error log tail:\n# " + s.log_tail().replace("\n", "\n# "))
                s.stop()
            print(f"# {kind}: {time.monotonic() - start:.0f} s")
        if (not only or "htaccess" in only) and not apache.skip_reason("htaccess-cgi"):
            t.run("htaccess", no_headers_module, t, root, faulty)
    finally:
        faulty.stop()
        up.stop()
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
