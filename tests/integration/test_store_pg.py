#!/usr/bin/env python3
"""The state store's unit tests on PostgreSQL: a private PostgreSQL
(tests/harness/postgres.py), and the unit programs that exercise the store
run against it (POSTERN_TEST_STATE_DB), each one check. The tests that read
the SQLite file itself skip there. Skips when PostgreSQL is not installed."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import postgres  # noqa: E402
from tap import Tap  # noqa: E402

BUILDDIR = os.environ.get("POSTERN_BUILDDIR", os.getcwd())
PROGRAMS = ("test_store", "test_sess", "test_rate", "test_settings", "test_pushtoken",
            "test_login", "test_req", "test_acct")


def run_unit(t, pg, name):
    path = os.path.join(BUILDDIR, "tests", "unit", name)
    if not os.access(path, os.X_OK):
        t.ok(False, f"{name} is built", path)
        return
    env = dict(os.environ, POSTERN_TEST_STATE_DB=pg.uri)
    r = subprocess.run([path], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    out = r.stdout.decode(errors="replace")
    t.ok(r.returncode == 0, f"{name} on PostgreSQL", out[-4000:])


def main():
    t = Tap()

    def body(pg):
        for name in PROGRAMS:
            t.run(name, run_unit, t, pg, name)
    return postgres.tap_main(t, body)


if __name__ == "__main__":
    sys.exit(main())
