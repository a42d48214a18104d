#!/usr/bin/env python3
"""Runs the test stack for the browser tests: prints "URL <url>" once it
is up (and "CYRUS <json>" before it, Cyrus's own doors), stops it on
SIGTERM. pushd polls Cyrus (which has no push) every
2 s, so that new mail reaches an open tab within the test's patience.
With POSTERN_STACK_UPSTREAM=stalwart the mail server is the Stalwart-
behaviour test server (it pushes) instead of Cyrus, with the browser
tests' users; its control URL is printed first ("CONTROL <url>"). With
POSTERN_STACK_WWW_COPY=1 the web server serves a copy of the app (www/)
made in the stack's folder, printed as "WWW <path>", which a test may
change on disk as a new release would (webpush.test.mjs's update)."""
import json
import os
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
from stack import Stack  # noqa: E402
from stalwart import StalwartTest  # noqa: E402

USERS = {f"{u}@example.test": f"{u}-demo-pass" for u in ("alice", "bob", "carol")}

stop = []
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda *a: stop.append(1))
# POSTERN_STACK_CONF (JSON) replaces keys: live.test.mjs runs the shipped
# intervals (30 s, 5 s in view) to prove what a user gets.
conf = {"push_poll_interval": "2s", **json.loads(os.environ.get("POSTERN_STACK_CONF") or "{}")}
up = None
if os.environ.get("POSTERN_STACK_UPSTREAM") == "stalwart":
    up = StalwartTest(sys.argv[1], USERS)
    print(f"CONTROL {up.url}/_control/", flush=True)


class CopiedApp(Stack):
    """A Stack whose web server serves its own copy of the app."""

    def folders(self):
        f = super().folders()
        self.www_copy = os.path.join(self.root, "www")
        if not os.path.isdir(self.www_copy):
            shutil.copytree(f["www"], self.www_copy)
        return {**f, "www": self.www_copy}


kind = CopiedApp if os.environ.get("POSTERN_STACK_WWW_COPY") == "1" else Stack
stack = kind(sys.argv[1], port=int(sys.argv[2]) if len(sys.argv) > 2 else None, conf_extra=conf,
             upstream=up and up.url)
try:
    stack.start()
    # Cyrus's own doors, for tests that go around postern: its HTTP base
    # (CardDAV), the LMTP socket (delivery) and the SMTP sink's spool
    # (what left, as NNNNNN.eml with NNNNNN.json holding the envelope).
    if stack.cyrus:
        print("CYRUS " + json.dumps({"base": stack.cyrus.base_url, "lmtp": stack.cyrus.lmtp_socket,
                                     "spool": stack.cyrus.sink_spool}), flush=True)
    if kind is CopiedApp:
        print(f"WWW {stack.www_copy}", flush=True)
    print(f"URL {stack.url}", flush=True)
    while not stop:
        time.sleep(0.3)
finally:
    stack.stop()
    if up:
        up.stop()
