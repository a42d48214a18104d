#!/usr/bin/env python3
"""One node on PostgreSQL (state_db = postgresql://...): a private
PostgreSQL (tests/harness/postgres.py) under the whole integration suite
(suite.py, FastCGI under lighttpd); before it, on the same stack, pushd
streams a change, and an outage: PostgreSQL stopped makes /api/health and
a signed-in request answer 503 in JSON with Retry-After, and once it is
started again the same session works within 2 s, nothing restarted; then
PostgreSQL frozen past pushd's wait (503 with Retry-After, not a dropped
connection). Skips when PostgreSQL is not installed."""

import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import postgres  # noqa: E402
import suite  # noqa: E402
from client import Client  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import INTERVAL, MARGIN, Stream, changed, is_state, message  # noqa: E402

ALICE = "alice@example.test"
RECOVERY = 2           # seconds a recovered database may take to answer
ROUTE_WAIT = 15        # pushd/route.h ROUTE_WAIT_S


def error_of(r):
    try:
        return json.loads(r.body).get("error")
    except ValueError:
        return None


def unavailable(t, r, what):
    t.ok(r.status == 503 and error_of(r) == "service_unavailable" and
         r.header("Retry-After"), f"{what}: 503 in JSON with Retry-After",
         f"{r.status} {r.header('Retry-After')} {r.body[:200]!r}")


def pushd_streams(t, s):
    c = Client(s.url)
    t.eq(c.login(ALICE, suite.USERS[ALICE]).status, 200, "alice signs in")
    st = Stream(s.port, c.cookie, "types=*")
    try:
        t.eq(st.status, 200, "her event stream opens (pushd on PostgreSQL)")
        time.sleep(INTERVAL + 1)        # pushd knows her states
        s.cyrus.deliver(ALICE, message(1))
        ev = st.wait(is_state, INTERVAL + MARGIN)
        t.ok(ev is not None and ALICE in changed(ev), "mail to alice reaches her tab",
             st.events)
    finally:
        st.close()


def frozen(t, s, pg):
    """PostgreSQL frozen (SIGSTOP: no answer, no refusal) for longer than
    pushd lets a request wait for it: a new tab is answered 503 in JSON
    with Retry-After after ROUTE_WAIT_S (never dropped unanswered at the
    connection's 10 s head timeout); a tab whose client leaves meanwhile
    is forgotten; once the database is back a tab opens."""
    c = Client(s.url)
    t.eq(c.login(ALICE, suite.USERS[ALICE]).status, 200, "alice signs in before the freeze")
    pg.freeze()
    try:
        at = time.monotonic()
        left = Stream(s.port, c.cookie, "types=*", head_timeout=0.5)
        left.close()            # its client leaves while it waits
        st = Stream(s.port, c.cookie, "types=*", head_timeout=ROUTE_WAIT + MARGIN)
        took = time.monotonic() - at
    finally:
        pg.freeze(False)
    body = st.body(5)
    st.close()
    t.ok(st.status == 503 and st.headers.get("retry-after") and
         b"service_unavailable" in body and ROUTE_WAIT - 1 <= took <= ROUTE_WAIT + MARGIN,
         f"PostgreSQL frozen: a new tab is answered 503 in JSON with Retry-After after "
         f"{ROUTE_WAIT} s", f"{st.status} after {took:.2f} s {body[:200]!r}")
    end = time.monotonic() + RECOVERY + MARGIN
    status = None
    while time.monotonic() < end and status != 200:
        again = Stream(s.port, c.cookie, "types=*")
        status = again.status
        again.close()
    t.eq(status, 200, "back: a tab opens")


def outage(t, s, pg):
    c = Client(s.url)
    t.eq(c.login(ALICE, suite.USERS[ALICE]).status, 200, "alice signs in before the outage")
    t.eq(c.request("GET", "/api/auth/settings").status, 200, "and reads her settings")
    pg.stop_server()
    try:
        r = Client(s.url).request("GET", "/api/health")
        t.ok(r.status == 503 and r.header("Retry-After") and
             json.loads(r.body).get("database") == "error",
             "health, PostgreSQL down: 503 in JSON (database: error) with Retry-After",
             f"{r.status} {r.body[:200]!r}")
        unavailable(t, c.request("GET", "/api/auth/settings"), "a signed-in request, PostgreSQL down")
    finally:
        pg.start_server()
    # From the moment PostgreSQL takes connections again (pg_ctl -w).
    back = time.monotonic()
    deadline = back + RECOVERY
    r = None
    while time.monotonic() < deadline:
        r = c.request("GET", "/api/auth/settings")
        if r.status == 200:
            break
        time.sleep(0.05)
    took = time.monotonic() - back
    print(f"# the first answer after PostgreSQL is back: {took:.2f} s", flush=True)
    t.eq(r.status, 200, f"PostgreSQL back: the same session works within {RECOVERY} s, "
         "nothing restarted")
    t.eq(Client(s.url).request("GET", "/api/health").status, 200, "and health is 200")


def main():
    t = Tap()

    def body(pg):
        def before(tap, stack):
            stack.pg = pg
            tap.run("pushd", pushd_streams, tap, stack)
            tap.run("outage", outage, tap, stack, pg)
            tap.run("frozen", frozen, tap, stack, pg)

        suite.run(t, "fcgi", conf_extra={"state_db": pg.uri,
                                        "push_poll_interval": f"{INTERVAL}s"},
                  before=before)
    return postgres.tap_main(t, body)


if __name__ == "__main__":
    sys.exit(main())
