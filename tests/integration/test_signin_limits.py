#!/usr/bin/env python3
"""Sign-in limits that cannot be turned against users (issue 15), against
a real lighttpd with the responders as FastCGI and a real Cyrus, with the
shipped limits (login_limit_user 10, login_limit_ip 50, login_limit_all
1000) over a one-hour window:

- one address floods sign-in with 1,000 wrong passwords: it gets its 50
  answers from the mail server and 429 after, and bob and carol, from
  other addresses, still sign in with their right passwords;
- an address many people share (a school behind one NAT address) signs in
  right 100 times in the window without a 429;
- past the flood ceiling (1,000 failures from 20 addresses) a new address
  still signs in right, while an address with a failure in the window is
  refused;
- an IPv6 client (forwarded by a trusted proxy) counts as its /64;
- a NUL inside the JSON username or password is 400, and so is
  single-quoted "JSON", at sign-in and at the relay.

Another client is another loopback address (all of 127.0.0.0/8 reaches
lo): the client's socket is bound to it, so that lighttpd's REMOTE_ADDR,
and so postern's client address, is that address. What another user got
before and after is printed as TAP comments."""
import glob
import http.client
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
from stack import SLOW, Stack  # noqa: E402
from suite import ALICE, BOB, CAROL, USERS as PASSWORDS  # noqa: E402
from tap import Tap  # noqa: E402

WINDOW = 3600
LIMIT_USER, LIMIT_IP, LIMIT_ALL = 10, 50, 1000   # the shipped defaults
FLOOD = 1000
PROXY = "127.0.5.1"     # trusted_proxies: what it forwards is the client
# The longest the checks may take, natively: they must all fall in one
# sign-in window, so a run that starts closer than this to the window's
# end waits for the next one.
BUDGET = 60 * SLOW


class Answer:
    def __init__(self, status, retry_after, seconds, body):
        self.status = status
        self.retry_after = retry_after
        self.seconds = seconds
        self.body = body

    def error(self):
        try:
            return json.loads(self.body).get("error")
        except ValueError:
            return None

    def __repr__(self):
        ra = (f", Retry-After {self.retry_after} (would wait {int(self.retry_after) / 60:.0f} min)"
              if self.retry_after and self.retry_after.isdigit() else "")
        return f"{self.status}{ra} in {self.seconds:.3f} s"


def post(port, source, path, body, forwarded=None):
    """POST body (bytes, as JSON) from the client address source; with
    forwarded, as a proxy at source (PROXY) would for that client."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30 * SLOW,
                                      source_address=(source, 0))
    start = time.monotonic()
    try:
        headers = {"Content-Type": "application/json", "X-Postern-CSRF": "1"}
        if forwarded:
            headers["X-Forwarded-For"] = forwarded
        conn.request("POST", path, body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        return Answer(r.status, r.getheader("Retry-After"), time.monotonic() - start, data)
    finally:
        conn.close()


def sign_in(port, source, user, password, forwarded=None):
    body = json.dumps({"username": user, "password": password}).encode()
    return post(port, source, "/api/auth/login", body, forwarded)


def tally(answers):
    counts = {}
    for a in answers:
        counts[a.status] = counts.get(a.status, 0) + 1
    return counts


def spelled(counts):
    return ", ".join(f"{n} × {s}" for s, n in sorted(counts.items()))


class Checks:
    def __init__(self, tap, stack):
        self.t = tap
        self.s = stack
        self.port = stack.port

    def sign_in(self, source, user, password):
        return sign_in(self.port, source, user, password)

    def wrong(self, source, names, each=1):
        """Wrong passwords from source for the usernames names, each tried
        `each` times, eight at a time: the answers."""
        jobs = [(n, f"wrong-{i}") for n in names for i in range(each)]
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(lambda j: self.sign_in(source, *j), jobs))

    def flood(self):
        t = self.t
        start = time.monotonic()
        answers = self.wrong("127.0.0.1", [f"guess-{i}@example.test" for i in range(FLOOD)])
        took = time.monotonic() - start
        counts = tally(answers)
        print(f"# one address (127.0.0.1), {FLOOD} wrong passwords in {took:.1f} s: "
              f"{spelled(counts)}", flush=True)
        t.ok(took < 60 * SLOW, f"the flood of {FLOOD} is answered within {60 * SLOW:.0f} s", took)
        t.eq(counts.get(401), LIMIT_IP,
             "the flooding address gets login_limit_ip answers from the mail server")
        t.eq(counts.get(429), FLOOD - LIMIT_IP, "and 429 for the rest")
        t.ok(self.logged("sign-in failed for 127.0.0.1"),
             "postern saw the flood's own client address")

    def logged(self, text):
        """Whether the responders logged text: into the web server's error
        log under lighttpd, into their own logs under Apache."""
        logs = [self.s.error_log] + glob.glob(os.path.join(self.s.root, "responder-*.log"))
        for path in logs:
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    if text in f.read():
                        return True
        return False

    def others_after_flood(self):
        t = self.t
        bob = self.sign_in("127.0.0.2", BOB, PASSWORDS[BOB])
        carol = self.sign_in("127.0.0.3", CAROL, PASSWORDS[CAROL])
        print(f"# after the flood, bob (127.0.0.2) got {bob!r}; carol (127.0.0.3) got "
              f"{carol!r}", flush=True)
        t.eq(bob.status, 200, "after the flood, bob signs in from another address")
        t.eq(carol.status, 200, "and so does carol from a third")
        t.ok(bob.seconds < 2 * SLOW and carol.seconds < 2 * SLOW,
             "each within 2 s", (bob, carol))
        r = self.sign_in("127.0.0.1", ALICE, PASSWORDS[ALICE])
        t.eq((r.status, r.error()), (429, "rate_limited"),
             "the flooding address is still refused, even with a right password")
        t.ok(r.retry_after and r.retry_after.isdigit() and 0 < int(r.retry_after) <= WINDOW,
             "with Retry-After", r)

    def shared_address(self):
        """A school behind one NAT address: 100 right sign-ins."""
        t = self.t
        users = [ALICE, BOB, CAROL]
        answers = [self.sign_in("127.0.0.4", users[i % 3], PASSWORDS[users[i % 3]])
                   for i in range(100)]
        counts = tally(answers)
        first = next((i + 1 for i, a in enumerate(answers) if a.status == 429), None)
        print(f"# one shared address (127.0.0.4), 100 right sign-ins: {spelled(counts)}"
              + (f", the first 429 at sign-in {first} ({answers[first - 1]!r})" if first else ""),
              flush=True)
        t.eq(counts, {200: 100}, "100 right sign-ins from one shared address are each 200")
        # Its people also mistype: failures count, and still stop at the limit.
        answers = self.wrong("127.0.0.4", [ALICE], LIMIT_USER)
        t.eq(tally(answers), {401: LIMIT_USER}, "ten typos of alice there are each 401")
        r = self.sign_in("127.0.0.4", ALICE, "one-too-many")
        t.eq(r.status, 429, "the 11th is 429: failures still count per address and user")
        r = self.sign_in("127.0.0.4", BOB, PASSWORDS[BOB])
        t.eq(r.status, 200, "while bob signs in from there right")

    def past_the_ceiling(self):
        """Past login_limit_all failures, only addresses with a failure in
        the window are refused."""
        t = self.t
        r = self.sign_in("127.0.2.3", CAROL, "a typo before the ceiling")
        t.eq(r.status, 401, "an address with one typo, before the ceiling")
        # 127.0.0.4 has 10 failures, 127.0.0.1 50 (and 127.0.2.3 one):
        # 18 addresses with 50 each and one with 39 make 1,000.
        need = LIMIT_ALL - LIMIT_IP - LIMIT_USER - 1
        sources = []
        while need > 0:
            sources.append((f"127.0.1.{len(sources) + 1}", min(LIMIT_IP, need)))
            need -= LIMIT_IP
        start = time.monotonic()
        answers = []
        for source, n in sources:
            names = [f"spray-{source}-{i}@example.test" for i in range(n)]
            answers += self.wrong(source, names)
        counts = tally(answers)
        print(f"# {len(sources)} more addresses, {len(answers)} wrong passwords in "
              f"{time.monotonic() - start:.1f} s: {spelled(counts)}", flush=True)
        t.eq(counts, {401: len(answers)}, "a spray from many addresses reaches the ceiling")
        t.ok(self.logged("sign-in failed for 127.0.1.1\n"),
             "postern saw another loopback address as the client's")
        r = self.sign_in("127.0.1.250", "one-more@example.test", "wrong")
        t.eq(r.status, 401, "at the ceiling, a new address's first wrong password is asked")
        r = self.sign_in("127.0.1.250", ALICE, PASSWORDS[ALICE])
        t.eq((r.status, r.error()), (429, "rate_limited"),
             "past the ceiling, that address is refused, right password or not")
        t.ok(r.retry_after and r.retry_after.isdigit() and int(r.retry_after) > 1,
             "until the window ends", r)
        r = self.sign_in("127.0.2.3", CAROL, PASSWORDS[CAROL])
        t.eq(r.status, 429, "so is the address with a typo from before")
        bob = self.sign_in("127.0.2.1", BOB, PASSWORDS[BOB])
        print(f"# past the ceiling, bob from a new address (127.0.2.1) got {bob!r}", flush=True)
        t.eq(bob.status, 200, "past the ceiling, a new address signs in right")
        answers = [self.sign_in("127.0.0.2", ALICE, PASSWORDS[ALICE]) for _ in range(10)]
        t.eq(tally(answers), {200: 10},
             "an address with only right sign-ins goes on signing in right")
        r = self.sign_in("127.0.0.4", CAROL, PASSWORDS[CAROL])
        t.eq(r.status, 429, "the shared address with typos waits, past the ceiling")

    def ipv6_per_prefix(self):
        """IPv6 clients count by their /64 (login_ipv6_prefix), through the
        web server: the stack's trusted proxy (PROXY) forwards them."""
        t = self.t
        a, b, other = "2001:db8:1:2::a", "2001:db8:1:2:ffff::b", "2001:db8:1:3::a"
        r = sign_in(self.port, PROXY, "v6-guess@example.test", "wrong", a)
        t.eq(r.status, 401, "past the ceiling, an IPv6 client's first wrong password is asked")
        r = sign_in(self.port, PROXY, ALICE, PASSWORDS[ALICE], a)
        t.eq(r.status, 429, "then that client is refused, right password or not")
        r = sign_in(self.port, PROXY, ALICE, PASSWORDS[ALICE], b)
        t.eq(r.status, 429, "and so is another address of its /64")
        r = sign_in(self.port, PROXY, ALICE, PASSWORDS[ALICE], other)
        t.eq(r.status, 200, "while an address of the next /64 signs in right")
        t.ok(self.logged("sign-in failed for 2001:db8:1:2::a\n"),
             "postern saw the forwarded IPv6 address as the client's")

    def strict_json(self):
        """Credentials with a NUL and single-quoted JSON are 400."""
        t = self.t
        src = "127.0.3.1"
        cases = [
            ('{"username": "alice@example.test\\u0000x", "password": "alice-demo-pass"}',
             "a NUL inside the username"),
            ('{"username": "alice@example.test", "password": "alice-demo-pass\\u0000x"}',
             "a NUL inside the password"),
            ("{'username': \"alice@example.test\", 'password': \"alice-demo-pass\"}",
             "single-quoted keys"),
            ('{"username": "alice@example.test", "password": "alice-demo-pass",'
             ' "x": "\t"}', "a raw tab inside a string"),
            ('{"username": "alice@example.test", "password": "alice-demo-pass",'
             ' "x": -01}', "a number with a leading zero"),
        ]
        for body, what in cases:
            r = post(self.port, src, "/api/auth/login", body.encode())
            t.eq((r.status, r.error()), (400, "bad_request"), f"sign-in with {what} is 400")
        r = self.sign_in(src, ALICE, PASSWORDS[ALICE])
        t.eq(r.status, 200, "the same sign-in, well-formed, is 200")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30 * SLOW,
                                          source_address=("127.0.3.2", 0))
        try:
            conn.request("POST", "/api/auth/login",
                         body=json.dumps({"username": ALICE, "password": PASSWORDS[ALICE]}),
                         headers={"Content-Type": "application/json", "X-Postern-CSRF": "1"})
            resp = conn.getresponse()
            resp.read()
            cookie = (resp.getheader("Set-Cookie") or "").split(";", 1)[0]
            conn.request("POST", "/api/jmap",
                         body="{'using': [\"urn:ietf:params:jmap:core\"],"
                              " 'methodCalls': [[\"Core/echo\", {}, \"0\"]]}",
                         headers={"Content-Type": "application/json", "X-Postern-CSRF": "1",
                                  "Cookie": cookie})
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        try:
            err = json.loads(data).get("error")
        except ValueError:
            err = None
        t.eq((resp.status, err), (400, "bad_request"),
             "single-quoted JSON to the relay is postern's 400, never the mail server's")

    def run(self):
        for name in ("strict_json", "shared_address", "flood", "others_after_flood",
                     "past_the_ceiling", "ipv6_per_prefix"):
            self.t.run(name, getattr(self, name))


def wait_for_room():
    """Waits, when the window ends within BUDGET, for the next one; the
    window it starts in."""
    left = WINDOW - time.time() % WINDOW
    if left < BUDGET:
        print(f"# {left:.0f} s left in this sign-in window: waiting for the next", flush=True)
        time.sleep(left + 1)
    return int(time.time() // WINDOW)


def one_server(tap, root, label, **kind):
    t = tap.labelled(label)
    stack = Stack(os.path.join(root, label), seed=False,
                  conf_extra={"login_window": f"{WINDOW}s", "trusted_proxies": PROXY},
                  **kind)
    try:
        stack.start()
    except Exception as e:
        tap.bail(f"{label}: the stack did not start: {e}")
    try:
        window = wait_for_room()
        Checks(t, stack).run()
        t.eq(int(time.time() // WINDOW), window, "every check ran within one sign-in window")
    finally:
        if tap.failed:
            try:
                print("# web server error log tail:\n# " + stack.log_tail().replace("\n", "\n# "))
            except Exception:
                pass
        stack.stop()


def main():
    tap = Tap()
    apache.lighttpd_then_apache("postern-limits-", one_server, tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
