#!/usr/bin/env python3
"""The Sieve scripts the app's www/js/sieve.js writes for postern's filters
and vacation (every field, op and action, the vacation with and without
dates, values that try to break out of their strings; printed by
tests/js/sieve-samples.mjs) are each accepted by the real Cyrus's
CHECKSCRIPT over ManageSieve; and each, stored with PUTSCRIPT, comes back
from GETSCRIPT as a script sieve.js reads as the model it was written
from. Skipped where node is missing."""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import cyrus  # noqa: E402
from managesieve import Sieve  # noqa: E402
from tap import Tap  # noqa: E402

USER, PASSWORD = "alice@example.test", "alice-demo-pass"
SRCDIR = os.environ.get("POSTERN_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
SAMPLES = os.path.join(SRCDIR, "tests", "js", "sieve-samples.mjs")


def node(*args, stdin=None):
    return subprocess.run(["node", SAMPLES, *args], input=stdin, capture_output=True,
                          text=True, timeout=60, check=True).stdout


def literal_text(text):
    """The script in a GETSCRIPT answer: the literal's body."""
    head, _, body = text.partition("}\r\n")
    size = int(head.rsplit("{", 1)[1].rstrip("+"))
    return body.encode()[:size].decode()


def main():
    if shutil.which("node") is None:
        print("1..0 # SKIP node is not installed")
        return 0
    t = Tap()
    samples = json.loads(node())
    t.ok(len(samples) > 20, "sieve-samples.mjs gives the scripts", len(samples))
    root = tempfile.mkdtemp(prefix="postern-sievew-")
    c = cyrus.Cyrus(root, cyrus.free_port(), cyrus.free_port())
    s = None
    try:
        c.start()
        c.add_user(USER, PASSWORD)
        s = Sieve(c.sieve_port)
        s.response()
        token = base64.b64encode(b"\0" + USER.encode() + b"\0" + PASSWORD.encode())
        status, text = s.send(b'AUTHENTICATE "PLAIN" "' + token + b'"\r\n')
        t.ok(status == "OK", "signed in over ManageSieve", text)
        for sample in samples:
            status, text = s.literal(b"CHECKSCRIPT", sample["script"])
            t.ok(status == "OK", f"Cyrus accepts: {sample['name']}", text + "\n" + sample["script"])
        # Each stored and read back: the same model (Cyrus keeps the text).
        back = []
        for sample in samples:
            status, text = s.literal(b'PUTSCRIPT "postern"', sample["script"])
            if status == "OK":
                status, text = s.send(b'GETSCRIPT "postern"\r\n')
            back.append(literal_text(text) if status == "OK" else None)
        t.ok(None not in back, "each script is stored and given back", back)
        models = json.loads(node("--read", stdin=json.dumps(back)))
        for sample, got in zip(samples, models):
            t.eq(got, sample["model"], f"read back as its model: {sample['name']}")
        s.send(b"LOGOUT\r\n")
    finally:
        if s:
            s.close()
        c.stop()
        shutil.rmtree(root, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
