#!/usr/bin/env python3
"""Start-up of a responder run directly as CGI: a bad configuration stops
it with file:line and still answers the browser with a JSON 500; a good one
creates the state database and the secret with mode 0600. Started with
-s PATH, it listens on a socket of its own, mode 0660."""

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
from stack import SLOW, wait_until  # noqa: E402
from tap import Tap  # noqa: E402
from test_pushd import Raw, fcgi_params, fcgi_record  # noqa: E402

BUILDDIR = os.environ.get("POSTERN_BUILDDIR", ".")
AUTH = os.path.join(BUILDDIR, "fcgi", "postern-auth")


def run_cgi(conf, uri="/api/config", method="GET"):
    env = {"POSTERN_CONF": conf, "REQUEST_METHOD": method, "REQUEST_URI": uri,
           "REMOTE_ADDR": "127.0.0.1", "PATH": "/usr/bin:/bin"}
    p = subprocess.run([AUTH], env=env, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    head, _, body = p.stdout.partition(b"\r\n\r\n")
    return p.returncode, head.decode(errors="replace"), body, p.stderr.decode(errors="replace")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def listening(path):
    try:
        Raw(path).close()
        return True
    except OSError:
        return False


def own_socket(t, conf, d):
    """-s PATH: the socket is 0660 whatever the umask (the web server's
    group may connect, nobody else), and FastCGI is answered on it."""
    sock = os.path.join(d, "auth.sock")
    p = subprocess.Popen([AUTH, "-s", sock], env={"POSTERN_CONF": conf, "PATH": "/usr/bin:/bin"},
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, umask=0)
    try:
        wait_until(lambda: listening(sock) or p.poll() is not None, 30 * SLOW,
                   "the responder to listen")
        if p.poll() is not None:
            return t.ok(False, "-s: the responder listens", p.stderr.read().decode())
        t.eq(oct(stat.S_IMODE(os.stat(sock).st_mode)), "0o660",
             "-s: the socket is mode 0660 under umask 0")
        raw = Raw(sock)
        raw.begin(1, keep=False)
        raw.send(fcgi_record(4, 1, fcgi_params("GET", "/api/config")) + fcgi_record(4, 1)
                 + fcgi_record(5, 1))
        out, ended = raw.response(1, 30 * SLOW)
        raw.close()
        t.ok(ended and out.startswith(b"Status: 200 OK"), "-s: FastCGI is answered there", out[:200])
    finally:
        p.terminate()
        p.wait(30 * SLOW)


def push_feature(t, good, d):
    """features.push of /api/config is true only when push_mode is not off
    and something listens on pushd_socket; /api/health says whether it
    does, and stays ok when nothing does."""
    sock = os.path.join(d, "pushd.sock")
    conf = os.path.join(d, "push.conf")
    for mode, listen, want in (("auto", False, False), ("auto", True, True),
                               ("off", True, False)):
        write(conf, good + f"pushd_socket = {sock}\npush_mode = {mode}\n")
        with socket.socket(socket.AF_UNIX) as s:
            if listen:
                s.bind(sock)
                s.listen(8)
            config = json.loads(run_cgi(conf)[2])
            health = json.loads(run_cgi(conf, "/api/health")[2])
        if listen:
            os.unlink(sock)
        pushd = "up" if listen else "down"
        t.eq(config["features"]["push"], want,
             f"push_mode {mode}, pushd {pushd}: features.push is {want}")
        t.eq((health.get("status"), health.get("pushd")), ("ok", pushd),
             f"push_mode {mode}, pushd {pushd}: /api/health is ok, pushd {pushd}")


def race(t, text, d):
    """Many processes starting together on a fresh folder agree on one
    secret, and none reads it half-written."""
    os.makedirs(d)
    conf = os.path.join(d, "race.conf")
    write(conf, text)
    env = {"POSTERN_CONF": conf, "REQUEST_METHOD": "GET", "REQUEST_URI": "/api/config",
           "REMOTE_ADDR": "127.0.0.1", "PATH": "/usr/bin:/bin"}
    procs = [subprocess.Popen([AUTH], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(20)]
    outs = [p.communicate(timeout=60) for p in procs]
    ok = sum(o.startswith(b"Status: 200") for o, _ in outs)
    t.eq(ok, 20, "20 processes starting together all answer")
    created = sum(b"created a new server secret" in e for _, e in outs)
    t.eq(created, 1, "exactly one of them creates the secret")
    # SQLite's own -wal and -shm stay when the last of 20 closing
    # processes could not take the lock that removes them (seen once in
    # CI under make -j2): they are SQLite's, not a file half-written here.
    left = [f for f in os.listdir(d) if f not in ("state.db-wal", "state.db-shm")]
    t.eq(sorted(left), ["race.conf", "secret", "state.db"], "no temporary file is left")


def main():
    t = Tap()
    d = tempfile.mkdtemp(prefix="postern-startup-")
    good = (f"upstream = http://127.0.0.1:9\nstate_db = {d}/state.db\n"
            f"secret_file = {d}/secret\n")
    cases = [
        ("unknown key", good + "# a comment\n\nno_such_key = 1\n", ":6: unknown key no_such_key"),
        ("bad number", good + "api_budget = lots\n", ":4: bad value for api_budget"),
        ("bad duration", "session_idle = 12x\n" + good, ":1: bad value for session_idle"),
        ("bad url", good.replace("http://127.0.0.1:9", "ftp://example.invalid"), ":1: bad value for upstream"),
        ("missing upstream", good.split("\n", 1)[1], "upstream is not set"),
    ]
    for name, text, want in cases:
        conf = os.path.join(d, "bad.conf")
        write(conf, text)
        rc, head, body, err = run_cgi(conf)
        t.ok(rc != 0 and want in err, f"{name}: stops with '{want}'", err)
        t.ok(head.startswith("Status: 500") and json.loads(body)["error"] == "internal_error",
             f"{name}: the browser still gets a JSON 500", head)
    t.ok(not os.path.exists(f"{d}/state.db"), "nothing is created by a bad configuration")
    conf = os.path.join(d, "good.conf")
    write(conf, good)
    rc, head, body, err = run_cgi(conf)
    t.ok(rc == 0 and head.startswith("Status: 200"), "a good configuration answers", head + err)
    t.eq(json.loads(body).get("name"), "postern", "/api/config as CGI")
    for f in ("state.db", "secret"):
        mode = stat.S_IMODE(os.stat(f"{d}/{f}").st_mode)
        t.eq(mode, 0o600, f"{f} is created with mode 0600")
    with open(f"{d}/secret") as f:
        secret = f.read().strip()
    rc, head, body, err = run_cgi(conf)
    with open(f"{d}/secret") as f:
        t.eq(f.read().strip(), secret, "the secret is kept across starts")
    own_socket(t, conf, d)
    push_feature(t, good, d)
    write(f"{d}/secret", "not hex\n")
    rc, head, body, err = run_cgi(conf)
    t.ok(rc != 0 and "not 64 hex digits" in err, "a damaged secret stops the program", err)
    race(t, good.replace(d, os.path.join(d, "race")), os.path.join(d, "race"))
    rc, head, body, err = run_cgi(conf.replace("good", "missing"))
    t.ok(rc != 0 and "No such file" in err, "a missing configuration file is named", err)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
