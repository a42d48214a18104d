#!/usr/bin/env python3
"""postern-admin, the real binary, against a real stack's state: sign in
through lighttpd, list and revoke with the command, and see the revoked
session refused with 401 while the others go on; check asking the real
Cyrus and failing on what cannot answer; usage and exit statuses as
postern-admin(8) has them."""
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import BUILDDIR, Stack, free_port  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB = "alice@example.test", "bob@example.test"
ADMIN = os.environ.get("POSTERN_ADMIN") or os.path.join(BUILDDIR, "admin", "postern-admin")


def admin(conf, *args):
    env = dict(os.environ, POSTERN_CONF=conf)
    r = subprocess.run([ADMIN, *args], env=env, capture_output=True, text=True,
                       timeout=60)
    return r.returncode, r.stdout, r.stderr


def session_status(c):
    return c.request("GET", "/api/auth/session").status


def signed_in(s, user):
    c = Client(s.url)
    r = c.login(user, USERS[user])
    if r.status != 200:
        raise RuntimeError(f"sign-in of {user} failed: {r}")
    return c


def usage(t, s, conf):
    """--help, --version, "--" and the exit statuses of postern-admin(8):
    a revoke that ends nothing is status 1."""
    code, out, err = admin(conf, "--help")
    t.ok(code == 0 and out.startswith("usage: postern-admin") and not err,
         "--help: the usage on stdout, status 0", out + err)
    version = Client(s.url).request("GET", "/api/config").json()["version"]
    code, out, err = admin(conf, "--version")
    t.ok(code == 0 and out == f"postern-admin {version}\n", "--version: status 0", out + err)
    code, _, err = admin(conf, "revoke", "--login", "nobody@example.test")
    t.ok(code == 1 and "no session of the login" in err,
         "revoke --login of a login without sessions: status 1", err)
    code, _, err = admin(conf, "revoke", "--all")
    t.ok(code == 1 and "no session to revoke" in err, "revoke --all with none left: status 1", err)
    code, out, _ = admin(conf, "sessions", "--login", "nobody@example.test")
    t.ok(code == 0 and "0 sessions" in out, "sessions listing none: status 0", out)

    # A session id may begin with '-' (base64url): it goes after "--".
    c = signed_in(s, ALICE)
    db = sqlite3.connect(s.state_db)
    with db:
        db.execute("UPDATE sessions SET id = '-' || substr(id, 2) WHERE substr(id, 1, 8) = ?",
                   (c.cookie[:8],))
    db.close()
    dashed = "-" + c.cookie[1:8]
    code, _, err = admin(conf, "revoke", dashed)
    t.ok(code == 2 and "after '--'" in err, "revoke -ID: a usage error that says to use --", err)
    # An id may begin with "--" too (base64url): getopt takes it for a
    # long option, and the same hint is due.
    code, _, err = admin(conf, "revoke", "--" + c.cookie[2:8])
    t.ok(code == 2 and "after '--'" in err, "revoke --ID: the same hint", err)
    code, out, err = admin(conf, "revoke", "--", dashed)
    t.ok(code == 0 and "revoked 1 session" in out, "revoke -- -ID", out + err)
    code, out, _ = admin(conf, "sessions", "--")
    t.ok(code == 0 and "0 sessions" in out, "sessions --", out)
    t.eq(admin(conf, "--", "push")[0], 0, "-- before the command")
    t.eq(admin(conf, "check", "extra")[0], 2, "check with an operand is a usage error")
    t.eq(admin(conf, "sessions", "--all")[0], 2, "sessions --all is a usage error")
    t.eq(admin(conf, "revoke", "--all", "--login", ALICE)[0], 2,
         "revoke with two targets is a usage error")


def variant(root, conf, name, extra):
    """conf with the lines extra added (a later key wins): its path."""
    path = os.path.join(root, name + ".conf")
    with open(conf) as f, open(path, "w") as g:
        g.write(f.read() + "".join(f"{k} = {v}\n" for k, v in extra.items()))
    return path


def reach(t, s, root):
    """check asks the JMAP server: Cyrus answers; a closed port, a path
    that is not the session resource, TLS to a plain http port and a
    server that never answers are errors that say what is wrong."""
    port = s.cyrus.http_port
    cases = [
        ("closed", {"upstream": f"http://127.0.0.1:{free_port()}"},
         "cannot connect to 127.0.0.1:", "Connection refused"),
        ("missing", {"upstream_session_path": "/no/such/session"},
         f"upstream http://127.0.0.1:{port}/no/such/session answers HTTP 404", "not a JMAP"),
        ("tls", {"upstream": f"https://127.0.0.1:{port}"}, "TLS failed", f"https://127.0.0.1:{port}"),
    ]
    for name, extra, want, also in cases:
        code, out, err = admin(variant(root, s.conf_path, name, extra), "check")
        t.ok(code == 1 and want in out and also in out and "1 error" in out,
             f"check, upstream {name}: status 1, '{want}'", out + err)
    # Something that accepts connections and never answers.
    with socket.socket() as mute:
        mute.bind(("127.0.0.1", 0))
        mute.listen(8)
        conf = variant(root, s.conf_path, "mute", {
            "upstream": f"http://127.0.0.1:{mute.getsockname()[1]}", "upstream_timeout": "1s"})
        t0 = time.monotonic()
        code, out, err = admin(conf, "check")
    t.ok(code == 1 and "no answer in time" in out, "check, upstream mute: a timeout", out + err)
    t.ok(time.monotonic() - t0 < 20, "within upstream_timeout and some")


def checks(t, s, root):
    conf = s.conf_path
    code, out, err = admin(conf, "check")
    t.eq(code, 0, "check of the stack's configuration passes")
    t.ok("0 errors" in out, "check counts no error", out + err)
    t.ok(f"upstream {s.cyrus.base_url}" in out and "the JMAP server answers (401" in out,
         "check: Cyrus answers the session resource, asking for credentials", out)
    reach(t, s, root)
    code, out, _ = admin(conf, "init")
    t.eq(code, 0, "init over an existing state")
    t.ok(out.count(": kept") == 3, "init keeps the secret, the database and the VAPID key", out)

    a1, a2, b = signed_in(s, ALICE), signed_in(s, ALICE), signed_in(s, BOB)
    code, out, _ = admin(conf, "sessions")
    t.eq(code, 0, "sessions")
    t.ok("3 sessions" in out and a1.cookie[:8] in out and b.cookie[:8] in out,
         "the list shows every session by id prefix", out)
    t.ok(a1.cookie[23:] not in out and USERS[ALICE] not in out,
         "no cookie secret and no password in the list", out)
    code, out, _ = admin(conf, "sessions", "--login", ALICE.upper())
    t.ok(code == 0 and "2 sessions" in out and b.cookie[:8] not in out,
         "sessions --login lists one login's sessions", out)

    a1_id = a1.cookie[:8]
    code, out, _ = admin(conf, "revoke", a1_id)
    t.ok(code == 0 and "revoked 1 session" in out, "revoke by id prefix", out)
    t.eq(session_status(a1), 401, "the revoked session is refused with 401")
    t.eq(session_status(a2), 200, "alice's other session goes on")
    t.eq(session_status(b), 200, "bob's session goes on")
    code, _, err = admin(conf, "revoke", a1_id)
    t.ok(code == 1 and "no session" in err, "revoking it again: no session, status 1", err)
    code, _, err = admin(conf, "revoke", "ab%")
    t.eq(code, 2, "a malformed id is a usage error")

    code, out, _ = admin(conf, "revoke", "--login", BOB)
    t.ok(code == 0 and "revoked 1 session" in out, "revoke --login", out)
    t.eq(session_status(b), 401, "bob's session is refused after revoke --login")
    t.eq(session_status(a2), 200, "alice's is not")
    code, out, _ = admin(conf, "revoke", "--all")
    t.ok(code == 0 and "revoked 1 session" in out, "revoke --all", out)
    t.eq(session_status(a2), 401, "every session is refused after revoke --all")
    usage(t, s, conf)

    code, out, _ = admin(conf, "push")
    t.ok(code == 0 and "pushd: running" in out and "subscriptions:" in out,
         "push reports a running pushd", out)

    # Errors: usage, a bad configuration, a missing state.
    t.eq(admin(conf)[0], 2, "no command is a usage error")
    t.eq(admin(conf, "frobnicate")[0], 2, "an unknown command is a usage error")
    t.eq(admin(conf, "revoke")[0], 2, "revoke without a target is a usage error")
    bad = os.path.join(root, "bad.conf")
    with open(conf) as f, open(bad, "w") as g:
        lines = f.read().splitlines()
        g.write("\n".join(lines + ["colour = blue"]) + "\n")
    r = subprocess.run([ADMIN, "-c", bad, "check"], capture_output=True, text=True,
                       timeout=60)
    t.ok(r.returncode == 1 and f"{bad}:{len(lines) + 1}: unknown key colour" in r.stdout,
         "-c with a bad key: file:line and status 1", r.stdout)
    empty = os.path.join(root, "empty.conf")
    with open(empty, "w") as f:
        f.write(f"upstream = {s.cyrus.base_url}\nstate_db = {root}/none/state.db\n"
                f"secret_file = {root}/none/secret\nwebpush_key_file = {root}/none/vapid.pem\n")
    code, _, err = admin(empty, "sessions")
    t.ok(code == 1 and "postern-admin init" in err, "sessions without a state says run init", err)
    t.ok(not os.path.exists(os.path.join(root, "none")), "and creates nothing")
    code, out, _ = admin(empty, "init")
    t.ok(code == 0 and out.count(": created") == 3, "init creates the state and the VAPID key", out)
    t.eq(oct(os.stat(os.path.join(root, "none", "secret")).st_mode & 0o777), "0o600",
         "the new secret is 0600")
    t.eq(admin(empty, "check")[0], 0, "check passes after init")


def main():
    t = Tap()
    root = tempfile.mkdtemp(prefix="postern-admin-")
    s = Stack(root, seed=False)
    try:
        s.start()
    except Exception as e:
        t.bail(f"the stack did not start: {e}")
    try:
        t.run("admin", checks, t, s, root)
    finally:
        s.stop()
        if not t.failed:
            shutil.rmtree(root, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
