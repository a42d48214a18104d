"""Checks that only Apache needs, run by test_apache_*.py before the
integration suite (whose last group stops the mail server): the headers
of static files and API answers, attachments through each way of running
postern-blob, the event stream through mod_proxy_fcgi to pushd, the clean
answer of /api/events where there is no pushd, and mod_fcgid keeping its
processes."""

import http.client
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
import demo_mail  # noqa: E402
from client import Client  # noqa: E402
from stack import SLOW, proc_args, proc_stat  # noqa: E402
import suite  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Stream, is_state, message  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE = "alice@example.test"
POLL = 1          # push_poll_interval of these stacks, seconds
MARGIN = 8        # what a loaded machine may add to it
PING = 5          # the ping interval the event stream test asks for, seconds
MIB = 1 << 20
UPLOAD_MAX = 4 * MIB
CONF_EXTRA = {"push_poll_interval": f"{POLL}s", "upload_max": f"{UPLOAD_MAX // MIB}M"}


def signed_in(stack):
    c = Client(stack.url)
    r = c.login(ALICE, USERS[ALICE])
    if r.status != 200:
        raise RuntimeError(f"sign-in failed: {r}")
    return c


def static_and_api_headers(t, stack):
    c = Client(stack.url)
    r = c.request("GET", "/", headers={"Accept-Encoding": "gzip"})
    t.eq(r.status, 200, "Apache serves the app's index")
    t.eq(r.header("Content-Type"), "text/html; charset=utf-8", "index.html as UTF-8 HTML")
    t.eq(r.header("Content-Encoding"), "gzip", "static text is compressed for gzip clients")
    for k, v in (("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
                 ("X-Frame-Options", "DENY")):
        t.eq(r.header(k), v, f"the app is served with {k}")
    t.ok((r.header("Content-Security-Policy") or "").startswith("default-src 'self'; script-src 'self'"),
         "the app's CSP is the lighttpd configuration's", r.headers)
    r = c.request("GET", "/js/api.js")
    t.eq(r.header("Content-Type"), "text/javascript; charset=utf-8", "modules as JavaScript")
    r = c.request("GET", "/api/config", headers={"Accept-Encoding": "gzip"})
    t.ok(r.status == 200 and r.header("Content-Encoding") is None,
         "an API answer is not compressed by Apache", r.headers)
    t.eq(r.header("Content-Security-Policy"),
         "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
         "an API answer keeps postern's own CSP, not the app's")
    r = c.request("GET", "/api/no-such-thing")
    t.eq((r.status, r.json().get("error")), (404, "not_found"),
         "an unknown /api/ path is postern's JSON 404, not an Apache page")


def chunked(stack, cookie, path, body, ctype):
    """A POST whose body has no length (Transfer-Encoding: chunked), as
    (status, parsed JSON or None)."""
    conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=60)
    try:
        conn.request("POST", path, body=iter([body[:1000], body[1000:]]),
                     headers={"Cookie": f"postern_session={cookie}",
                              "X-Postern-CSRF": "1", "Content-Type": ctype},
                     encode_chunked=True)
        r = conn.getresponse()
        data = r.read()
        try:
            return r.status, json.loads(data)
        except ValueError:
            return r.status, None
    finally:
        conn.close()


def chunked_bodies(t, stack):
    """Bodies without a length reach the responders whole (Apache
    de-chunks them); over a limit they are postern's 413, the answer not
    lost when the responder stops reading early."""
    c = signed_in(stack)
    calls = json.dumps({"using": ["urn:ietf:params:jmap:core"],
                        "methodCalls": [["Core/echo", {"n": 1}, "0"]]}).encode()
    status, doc = chunked(stack, c.cookie, "/api/jmap", calls, "application/json")
    t.ok(status == 200 and doc and doc["methodResponses"][0][0] == "Core/echo",
         "Apache: a chunked JMAP call", (status, doc))
    big = b'{"pad": "' + b"x" * suite.MAX_REQUEST + b'"}'
    status, doc = chunked(stack, c.cookie, "/api/jmap", big, "application/json")
    t.eq((status, (doc or {}).get("error")), (413, "too_large"),
         "Apache: a chunked JMAP call over max_request is postern's 413")
    path = f"/api/upload/{ALICE}"
    status, doc = chunked(stack, c.cookie, path, b"y" * 300000, "application/octet-stream")
    t.ok(status == 201 and (doc or {}).get("size") == 300000,
         "Apache: a chunked upload is stored whole", (status, doc))
    status, doc = chunked(stack, c.cookie, path, b"z" * (UPLOAD_MAX + MIB),
                          "application/octet-stream")
    t.eq((status, (doc or {}).get("error")), (413, "too_large"),
         "Apache: a chunked upload over upload_max is postern's 413")


def attachments(t, stack):
    """postern-blob behind this Apache path: an upload larger than
    mod_fcgid's default body limit streams to the mail server and back
    byte for byte, a range is cut, and an upload over upload_max is
    postern's 413 (Apache's own limits are above it)."""
    c = signed_in(stack)
    data = random.Random(6).randbytes(3 * MIB)
    r = c.request("POST", f"/api/upload/{ALICE}", data,
                  {"Content-Type": "application/octet-stream"})
    t.ok(r.status == 201 and r.json().get("size") == len(data),
         "Apache: a 3 MiB upload is stored whole", r)
    if r.status != 201:
        return
    path = f"/api/blob/{ALICE}/{r.json()['blobId']}/file.bin"
    r = c.request("GET", path, headers={"Accept-Encoding": "gzip"})
    t.ok(r.status == 200 and r.body == data and r.header("Content-Encoding") is None,
         "Apache: the download is the upload, byte for byte, uncompressed",
         (r.status, len(r.body), r.headers))
    r = c.request("GET", path, headers={"Range": "bytes=1000-1999"})
    t.ok(r.status == 206 and r.body == data[1000:2000], "Apache: a byte range",
         (r.status, r.headers))
    r = c.request("POST", f"/api/upload/{ALICE}", b"x" * (UPLOAD_MAX + MIB),
                  {"Content-Type": "application/octet-stream"})
    t.eq((r.status, r.json().get("error")), (413, "too_large"),
         "Apache: an upload over upload_max is postern's 413")


def open_tabs(stack):
    r = Client(stack.url).request("GET", "/api/health")
    return sum(r.json().get("push", {}).get("tabs", {}).values())


def event_stream(t, stack):
    """Through mod_proxy_fcgi to pushd: the stream opens, a ping=5 ping
    arrives on time (flushpackets=on: nothing held back), delivered mail
    reaches the tab, and push callbacks reach pushd."""
    c = signed_in(stack)
    st = Stream(stack.port, c.cookie, f"types=*&ping={PING}", http11=True,
                headers={"Accept-Encoding": "gzip, br"})
    opened = time.monotonic()      # pushd's ping timer runs from its answer
    try:
        t.eq(st.status, 200, "Apache: /api/events opens a stream")
        t.ok(st.headers.get("content-type", "").startswith("text/event-stream"),
             "Apache: Content-Type text/event-stream", st.headers)
        t.eq(st.headers.get("content-encoding"), None, "Apache: the stream is not compressed")
        t.ok(st.chunked is not None, "Apache: HTTP/1.1 chunked stream", st.headers)
        # pushd's timer: not before its interval, and before a second
        # ping would be due. A buffering proxy shows a ping only with
        # later ones, if at all, or holds the head back until the first;
        # a busy machine would have to hold it back another 5 s.
        ev = st.wait(lambda ev: ev.get("event") == "ping", 2 * PING)
        took = time.monotonic() - opened
        t.ok(ev is not None and PING - 0.5 <= took < 2 * PING,
             "Apache: the first ping arrives on time (not buffered)", (ev, took))
        t.ok(ev is not None and json.loads(ev["data"]).get("interval") == 5000,
             "Apache: ping data as pushd sent it", ev)
        stack.cyrus.deliver(ALICE, message(1))
        ev = st.wait(is_state, POLL + MARGIN)
        t.ok(ev is not None and "Email" in json.loads(ev["data"]).get("changed", {}).get(ALICE, {}),
             "Apache: delivered mail reaches the open stream", st.events)
        t.eq(open_tabs(stack), 1, "Apache: pushd counts the open tab")
    finally:
        st.close()
    # Apache sees the tab gone when a write to it fails, and closes its
    # connection to pushd: neither the tab nor a worker thread lingers.
    # The first ping after the close still goes out (the peer answers it
    # with a reset), the second fails: two intervals after the last
    # event, some 10 s on any machine, so the slack is on top of both.
    gone = suite.wait_for(lambda: open_tabs(stack) == 0, 2 * PING + MARGIN)
    t.ok(gone, "Apache: a closed tab's stream ends in pushd too", open_tabs(stack))
    r = Client(stack.url).request("POST", "/api/push/" + "x" * 43, {"@type": "StateChange"})
    t.eq((r.status, r.json().get("error")), (404, "not_found"),
         "Apache: a push callback with an unknown token reaches pushd (404)")


def no_pushd(t, stack):
    """Where no daemon may run: /api/events answers at once with a JSON
    error, which makes the app's EventSource give up and the app poll."""
    c = signed_in(stack)
    for who, client in (("signed in", c), ("without a session", Client(stack.url))):
        started = time.monotonic()
        r = client.request("GET", "/api/events?types=Email,Mailbox&ping=30",
                           headers={"Accept": "text/event-stream"})
        took = time.monotonic() - started
        t.eq((r.status, r.json().get("error")), (404, "not_found"),
             f"no pushd, {who}: /api/events is a JSON 404")
        t.ok((r.header("Content-Type") or "").startswith("application/json") and took < 5 * SLOW,
             f"no pushd, {who}: answered at once, not as an event stream", (r.headers, took))


def descendants(pid):
    """The pids below pid, from /proc."""
    stats = {int(d): proc_stat(d) for d in filter(str.isdigit, os.listdir("/proc"))}
    parents = {p: st[1] for p, st in stats.items() if st}
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for child, parent in parents.items():
            if parent == p and child not in found:
                found.add(child)
                todo.append(child)
    return found


def runs_program(pid, exe):
    """Whether process pid runs exe, itself or under a tool such as
    valgrind, which names it on its command line."""
    try:
        if os.path.realpath(f"/proc/{pid}/exe") == exe:
            return True
    except OSError:
        return False
    return any(os.path.realpath(a) == exe for a in proc_args(pid))


def private_memory(t, stack):
    """The responders and pushd, running as www-data, are non-dumpable:
    another process of that user (a web application beside postern)
    cannot ptrace them or read their memory, which holds passwords. The
    kernel shows it by giving their /proc files to root."""
    procs = [("pushd", stack.pushd)] + [(f"postern-{r}", p) for r, p in
                                        zip(apache.RESPONDERS, stack.web.responders)]
    for name, p in procs:
        try:
            owner = os.stat(f"/proc/{p.pid}/status").st_uid
            user = int(open(f"/proc/{p.pid}/status").read().split("Uid:")[1].split()[0])
        except (OSError, IndexError, ValueError) as e:
            owner, user = None, e
        t.ok(user != 0 and owner == 0, f"Apache: {name} runs as www-data, non-dumpable",
             f"/proc owner {owner}, uid {user}")


def fcgid_keeps_processes(t, stack):
    """With mod_fcgid the .htaccess runs postern-auth as FastCGI: after
    the answer, the process is still there for the next request."""
    c = Client(stack.url)
    for _ in range(3):
        t.eq(c.request("GET", "/api/health").status, 200, "mod_fcgid: /api/health")
    exe = os.path.realpath(os.path.join(stack.web.builddir, "fcgi", "postern-auth"))
    alive = [pid for pid in descendants(stack.web.proc.pid) if runs_program(pid, exe)]
    t.eq(len(alive), 1, "mod_fcgid: one postern-auth process served them all and stays")


def main(runs):
    """For each (mode, checks): the Apache checks, then the whole
    integration suite, on one stack of that mode; one TAP plan for all."""
    ready = []
    for mode, checks in runs:
        why = apache.skip_reason(mode)
        if why:
            print(f"# {mode} left out: {why}", flush=True)
        else:
            ready.append((mode, checks))
    if not ready:
        print(f"1..0 # SKIP {why}", flush=True)
        return 0
    tap = Tap()
    for mode, checks in ready:
        suite.run(tap, mode, server="apache", conf_extra=CONF_EXTRA,
                  before=lambda t, s: [t.run(f.__name__, f, t, s) for f in checks])
    return tap.done()
