#!/usr/bin/env python3
"""The figures of live mail (issue 17), against the Stalwart-behaviour test
server (tests/stalwart/server.py) behind the real stack, loopback only,
about three minutes:

1. relay mode (the server pushes): the time from a delivery at the server
   to the state event on a tab's stream, over 20 deliveries;
2. poll mode with the shipped intervals (push_poll_interval 30 s,
   push_poll_visible 4 s): the upstream requests per minute for ACCOUNTS
   accounts (1,000) with one tab each, first all in view, then all hidden,
   counted by the server (its authenticated requests).

Prints the figures; asserts nothing. ACCOUNTS=N and WINDOW=seconds (30,
scaled to a minute) change the size."""

import json
import os
import resource
import statistics
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))

from client import Client  # noqa: E402
from stack import Stack, free_port  # noqa: E402
from test_pushd import Stream, changed, is_state  # noqa: E402
import test_pushd_stalwart as stw  # noqa: E402

ACCOUNTS = int(os.environ.get("ACCOUNTS") or 1000)
WINDOW = float(os.environ.get("WINDOW") or 30)
DELIVERIES = 20


def pct(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def users():
    return {f"user{i}@example.test": f"pw-{i}" for i in range(ACCOUNTS)}


def up_start(root, port, extra):
    orig = stw.subprocess.Popen

    def popen(args, **kw):   # the server with our users and no rate limits
        every = {**stw.PASSWORDS, **extra}
        args = args + ["--users", ",".join(f"{u}:{p}" for u, p in every.items()),
                       "--account-rate", "1000000", "--anon-rate", "1000000", "--fail-ban", "1000000"]
        return orig(args, **kw)
    stw.subprocess.Popen = popen
    try:
        return stw.Upstream(root, port)
    finally:
        stw.subprocess.Popen = orig


def relay_latency(up, stack, login, password):
    c = Client(stack.url)
    assert c.login(login, password).status == 200
    st = Stream(stack.port, c.cookie, "types=*&ping=5")
    time.sleep(2)          # the relay's baseline
    aid, took = up.accounts[login], []
    for i in range(DELIVERIES):
        t0 = time.monotonic()
        want = up.control("deliver", {"account": login, "subject": f"relay {i}"})["states"]["Email"]
        ev = st.wait(lambda e: is_state(e) and changed(e).get(aid, {}).get("Email") == want, 10)
        if ev is not None:
            took.append(round((time.monotonic() - t0) * 1000))
    st.close()
    return took


def requests_now(up, accounts):
    req = up.control("stats").get("requests", {})
    return sum(req.get(a, 0) for a in accounts)


def poll_rates(up, stack, creds):
    clients, streams = [], []
    for u, p in creds.items():
        c = Client(stack.url)
        if c.login(u, p).status != 200:
            raise RuntimeError(f"sign-in of {u} failed")
        clients.append(c)
        streams.append(Stream(stack.port, c.cookie, "types=*&ping=30&visible=1"))
    # Every tab must be open, or the figure counts fewer accounts.
    refused = sum(1 for st in streams if st.status != 200)
    if refused:
        raise RuntimeError(f"{refused} of {len(streams)} event streams refused")
    accts = [up.accounts[u] for u in creds]
    out = {}
    for label, vis in (("visible", 1), ("hidden", 0)):
        if vis == 0:
            for c in clients:
                c.request("POST", "/api/events?visible=0")
        time.sleep(6)      # the timers already armed run out
        n0, t0 = requests_now(up, accts), time.monotonic()
        time.sleep(WINDOW)
        n1, t1 = requests_now(up, accts), time.monotonic()
        out[label] = round((n1 - n0) * 60 / (t1 - t0))
    for st in streams:
        st.close()
    return out


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    root = tempfile.mkdtemp(prefix="postern-bench-poll-")
    creds = users()
    port = free_port()
    up = up_start(root, port, creds)
    stack = Stack(root, mode="fcgi", upstream=up.url, port=port, conf_extra={
        "push_mode": "relay", "login_limit_ip": "1000000", "login_limit_user": "1000000",
        "login_limit_all": "1000000", "api_budget": "0",
        # every tab comes from 127.0.0.1: no per-address cap on streams
        "push_streams_per_ip": "0"})
    stack.start()
    try:
        took = relay_latency(up, stack, stw.ALICE, stw.PASSWORDS[stw.ALICE])
        print("# relay (Stalwart-behaviour server), delivery to the tab's state event, ms: "
              + json.dumps({"n": len(took), "p50": pct(took, 50), "p95": pct(took, 95),
                            "max": max(took), "mean": round(statistics.mean(took))}))
        stack.stop_pushd()
        stack.conf_extra.update({"push_mode": "poll", "push_poll_interval": "30s", "push_poll_visible": "4s"})
        stack.write_conf(up.url)
        stack.start_pushd()
        rates = poll_rates(up, stack, creds)
        print("# poll, upstream requests per minute for "
              + f"{ACCOUNTS} accounts with one tab each: " + json.dumps(rates)
              + f" (per account: visible {rates['visible'] / ACCOUNTS:.2f}, hidden {rates['hidden'] / ACCOUNTS:.2f})")
    finally:
        stack.stop()
        up.stop()


if __name__ == "__main__":
    main()
