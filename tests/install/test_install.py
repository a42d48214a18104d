#!/usr/bin/env python3
"""The install test: the tarball, unpacked, configured into a temporary
prefix, built and installed (once staged with DESTDIR); then postern-admin
init and check, the integration suite against the installed copy, a
restart of the installed postern with its configuration and database
kept, make install over an edited configuration and make uninstall.

    POSTERN_TARBALL=postern-0.1.0.tar.gz python3 tests/install/test_install.py

Without POSTERN_TARBALL it runs `make dist` in POSTERN_BUILDDIR. Prints
TAP; scripts/test runs it after distcheck with the tarball distcheck made.
"""
import glob
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from client import Client  # noqa: E402
from stack import BUILDDIR, Installed, Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE = "alice@example.test"
BUILD_TIMEOUT = 900


def run(cmd, cwd, env=None, timeout=BUILD_TIMEOUT):
    """Runs cmd; (status, output) with stdout and stderr together."""
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return r.returncode, r.stdout


def tail(text, n=30):
    return "\n".join(text.splitlines()[-n:])


def tarball(t):
    path = os.environ.get("POSTERN_TARBALL")
    if path:
        return os.path.abspath(path)
    code, out = run(["make", "-s", "dist"], BUILDDIR)
    found = sorted(glob.glob(os.path.join(BUILDDIR, "postern-*.tar.gz")))
    if code != 0 or not found:
        t.bail("make dist failed:\n" + tail(out))
    return found[-1]


class Layout:
    """Where configure was told to put things, and where they land."""

    def __init__(self, top):
        self.prefix = os.path.join(top, "prefix")
        self.sysconfdir = os.path.join(top, "etc")
        self.localstatedir = os.path.join(top, "var")
        self.sbin = os.path.join(self.prefix, "sbin")
        self.libexec = os.path.join(self.prefix, "libexec", "postern")
        self.data = os.path.join(self.prefix, "share", "postern")
        self.man = os.path.join(self.prefix, "share", "man")
        self.conf = os.path.join(self.sysconfdir, "postern", "postern.conf")
        self.state = os.path.join(self.localstatedir, "lib", "postern")
        self.admin = os.path.join(self.sbin, "postern-admin")

    def files(self):
        """What make install must put in place (paths under the prefix)."""
        return [self.admin,
                *(os.path.join(self.libexec, p) for p in
                  ("postern-auth", "postern-jmap", "postern-blob", "pushd",
                   "cgi-bin/postern-auth.cgi", "cgi-bin/postern-jmap.cgi",
                   "cgi-bin/postern-blob.cgi")),
                *(os.path.join(self.data, p) for p in
                  ("www/index.html", "www/app.js", "schema.sql", "lighttpd.conf",
                   "lighttpd-postern.conf", "lighttpd-cgi.conf",
                   "postern-pushd.service", "apache-postern.conf",
                   "apache-fcgid.conf", "postern.htaccess", "postern-cgi.sh",
                   "postern-responder@.service", "www/js/views/richtext.js")),
                os.path.join(self.man, "man5", "postern.conf.5"),
                *(os.path.join(self.man, "man8", p) for p in
                  ("postern.8", "postern-pushd.8", "postern-admin.8")),
                self.conf]


def inside(top, path):
    """Whether path, resolved, lies within the folder top."""
    top = os.path.realpath(top)
    return os.path.commonpath([top, os.path.realpath(path)]) == top


def safe_members(tf, top):
    """The members of tf, each checked the way tarfile's "tar" filter
    (Python 3.11.4 and later) would: no absolute name, none that lands
    outside top, no device or FIFO, no link that points outside top.
    Raises ValueError on the first that is not."""
    for m in tf.getmembers():
        dest = os.path.join(top, m.name)
        if os.path.isabs(m.name) or not inside(top, dest):
            raise ValueError(f"{m.name}: outside the target")
        if m.isdev():
            raise ValueError(f"{m.name}: a device or FIFO")
        if m.issym() and not inside(top, os.path.join(os.path.dirname(dest), m.linkname)):
            raise ValueError(f"{m.name}: a link leaving the target")
        if m.islnk() and not inside(top, os.path.join(top, m.linkname)):
            raise ValueError(f"{m.name}: a link leaving the target")
        yield m


def extract(tar, top):
    """Unpacks tar into top safely on every Python 3 (the filter= argument
    came in 3.11.4; Debian 12 has 3.11.2)."""
    with tarfile.open(tar) as tf:
        tf.extractall(top, members=list(safe_members(tf, top)))


def extraction_refuses(t, top):
    """extract() refuses what the "tar" filter refuses, on this Python."""
    import io
    cases = {"../escape": tarfile.REGTYPE, "/abs": tarfile.REGTYPE,
             "dev": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE,
             "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}
    for name, kind in cases.items():
        path = os.path.join(top, "bad.tar")
        with tarfile.open(path, "w") as tf:
            m = tarfile.TarInfo(name)
            m.type = kind
            m.linkname = "../../outside" if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE) else ""
            tf.addfile(m, io.BytesIO(b""))
        target = os.path.join(top, "bad")
        os.makedirs(target, exist_ok=True)
        try:
            extract(path, target)
            refused = False
        except ValueError:
            refused = True
        t.ok(refused and not os.listdir(target),
             f"the tarball extraction refuses a member {name!r}")
        shutil.rmtree(target)
        os.unlink(path)


def build(t, tar, top, lay):
    extract(tar, top)
    src = glob.glob(os.path.join(top, "postern-*"))[0]
    code, out = run(["./configure", "-q", f"--prefix={lay.prefix}",
                     f"--sysconfdir={lay.sysconfdir}",
                     f"--localstatedir={lay.localstatedir}"], src)
    if not t.ok(code == 0, "configure with prefix, sysconfdir, localstatedir", tail(out)):
        t.bail("configure failed")
    code, out = run(["make", "-s", "-j2"], src)
    if not t.ok(code == 0, "make -j2", tail(out)):
        t.bail("make failed")
    return src


def staged(t, src, top, lay):
    stage = os.path.join(top, "stage")
    code, out = run(["make", "-s", "install", f"DESTDIR={stage}"], src)
    t.ok(code == 0, "make install DESTDIR=...", tail(out))
    missing = [p for p in lay.files() if not os.path.exists(stage + p)]
    t.ok(not missing, "everything lands under DESTDIR", missing)
    t.ok(not any(os.path.exists(p) for p in
                 (lay.prefix, lay.sysconfdir, lay.localstatedir)),
         "nothing is written outside DESTDIR")
    st = os.stat(stage + lay.state)
    t.eq(oct(st.st_mode & 0o777), "0o700", "the state folder is made 0700")
    with open(stage + os.path.join(lay.data, "postern-pushd.service")) as f:
        unit = f.read()
    t.ok(f"ExecStart={lay.libexec}/pushd" in unit and lay.conf in unit,
         "the systemd unit names the installed paths", unit)
    with open(stage + lay.conf) as f:
        conf = f.read()
    t.ok(f"#state_db = {lay.state}/state.db" in conf,
         "the installed postern.conf shows the configured state path")
    with open(stage + os.path.join(lay.man, "man5", "postern.conf.5")) as f:
        t.ok(lay.conf in f.read(), "postern.conf(5) names the configured path")
    code, out = run(["make", "-s", "uninstall", f"DESTDIR={stage}"], src)
    left = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs]
    t.ok(code == 0 and not left, "make uninstall DESTDIR=... leaves no file "
         "(an unedited postern.conf goes)", left or tail(out))


def admin(lay, *args):
    r = subprocess.run([lay.admin, "-c", lay.conf, *args], capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def suite(t, src, lay, mode):
    """tests/integration/test_<mode>.py from the tarball, on the installed
    programs, web app and lighttpd configurations; its checks are
    re-numbered into this test's."""
    env = dict(os.environ, POSTERN_SRCDIR=src, POSTERN_BUILDDIR=src,
               POSTERN_PKGLIBEXECDIR=lay.libexec, POSTERN_PKGDATADIR=lay.data,
               PYTHONDONTWRITEBYTECODE="1")
    # The suite's Stack takes the installed paths from that environment.
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import stack; "
             "s = stack.Stack('/nonexistent'); e = s.lighttpd_env(); "
             "print(e['POSTERN_LIBEXEC'], e['POSTERN_WWW'], s.pushd_bin())")
    r = subprocess.run([sys.executable, "-c", probe,
                        os.path.join(src, "tests", "harness")],
                       env=env, capture_output=True, text=True, timeout=60)
    t.eq(r.stdout.split(), [lay.libexec, os.path.join(lay.data, "www"),
                            os.path.join(lay.libexec, "pushd")],
         f"the {mode} suite's stack runs the installed programs and web app")
    r = subprocess.run([sys.executable, os.path.join(src, "tests", "integration",
                                                     f"test_{mode}.py")],
                       env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    n = 0
    for line in r.stdout.splitlines():
        m = re.match(r"(not ok|ok) \d+ - (.*)", line)
        if m:
            n += 1
            t.ok(m.group(1) == "ok", f"{mode} suite: " + m.group(2), r.stdout[-3000:])
    t.ok(r.returncode == 0 and n > 50, f"the integration suite ({mode}) passes on "
         f"the installed copy ({n} checks)", tail(r.stdout + r.stderr))


def configure_installed(t, s, lay):
    """The operator's steps: edit postern.conf, init, check."""
    with open(lay.conf, "a") as f:
        f.write(f"\n# an operator's edit\nupstream = {s.cyrus.base_url}\n"
                f"pushd_socket = {s.pushd_socket}\nname = Installed postern\n")
    code, out = admin(lay, "init")
    t.ok(code == 0 and out.count(": created") == 2, "postern-admin init", out)
    for name in ("state.db", "secret"):
        st = os.stat(os.path.join(lay.state, name))
        t.eq(oct(st.st_mode & 0o777), "0o600",
             f"{name} is made 0600 at the compiled-in default path")
    code, out = admin(lay, "check")
    t.ok(code == 0 and "0 errors" in out, "postern-admin check passes", out)
    s.conf_path = lay.conf


def start_postern(s):
    s.start_pushd()
    s.start_lighttpd()


def stop_postern(s):
    s.stop_lighttpd()
    s.stop_pushd()


def restart(t, s, lay):
    start_postern(s)
    c = Client(s.url)
    r = c.request("GET", "/")
    t.ok(r.status == 200 and b"<html" in r.body.lower(),
         "the installed web app is served", r)
    r = c.login(ALICE, USERS[ALICE], remember=True)
    t.eq(r.status, 200, "sign-in on the installed copy")
    r = c.request("GET", "/api/config")
    t.ok(r.status == 200 and "Installed postern" in r.body.decode(),
         "the responders read the installed configuration", r)
    code, out = admin(lay, "sessions")
    t.ok(code == 0 and c.cookie[:8] in out, "postern-admin lists the session", out)
    code, out = admin(lay, "push")
    t.ok(code == 0 and "pushd: running" in out, "postern-admin sees pushd running", out)

    stop_postern(s)
    t.ok(not s.pushd_listening(), "pushd and lighttpd stopped")
    start_postern(s)
    r = c.request("GET", "/api/auth/session")
    t.eq(r.status, 200, "after a restart with configuration and database kept, "
         "the session still opens")
    r = c.jmap([["Mailbox/get", {"ids": None}, "0"]])
    t.eq(r.status, 200, "and the relay works with it")
    db = sqlite3.connect(os.path.join(lay.state, "state.db"))
    try:
        t.eq(db.execute("PRAGMA user_version").fetchone()[0], 2,
             "the state database kept its schema version")
    finally:
        db.close()
    stop_postern(s)


def installed_stack(t, top, lay):
    s = Stack(os.path.join(top, "stack"), seed=False,
              installed=Installed(lay.libexec, lay.data))
    os.makedirs(s.root, exist_ok=True)
    try:
        s.start_cyrus()
        configure_installed(t, s, lay)
        restart(t, s, lay)
    finally:
        s.stop()


def reinstall(t, src, lay):
    with open(lay.conf) as f:
        edited = f.read()
    with open(os.path.join(lay.state, "secret")) as f:
        secret = f.read()
    code, out = run(["make", "-s", "install"], src)
    t.ok(code == 0, "make install again", tail(out))
    with open(lay.conf) as f:
        t.ok(f.read() == edited, "make install keeps the edited postern.conf")
    with open(os.path.join(lay.state, "secret")) as f:
        t.ok(f.read() == secret, "and the secret")
    code, out = run(["make", "-s", "uninstall"], src)
    t.ok(code == 0, "make uninstall", tail(out))
    left = [p for p in lay.files() if os.path.exists(p) and p != lay.conf]
    t.ok(not left, "make uninstall removes the installed files", left)
    with open(lay.conf) as f:
        t.ok(f.read() == edited, "make uninstall keeps the edited postern.conf")
    t.ok(os.path.exists(os.path.join(lay.state, "state.db")),
         "make uninstall keeps the state database")


def main():
    t = Tap()
    top = tempfile.mkdtemp(prefix="postern-install-")
    lay = Layout(top)
    try:
        tar = tarball(t)
        t.ok(os.path.exists(tar), f"the tarball {os.path.basename(tar)}")
        extraction_refuses(t, top)
        src = build(t, tar, top, lay)
        t.run("staged install", staged, t, src, top, lay)
        code, out = run(["make", "-s", "install"], src)
        if not t.ok(code == 0, "make install into the prefix", tail(out)):
            t.bail("make install failed")
        missing = [p for p in lay.files() if not os.path.exists(p)]
        t.ok(not missing, "everything is installed", missing)
        t.run("integration suite (FastCGI)", suite, t, src, lay, "fcgi")
        t.run("integration suite (CGI)", suite, t, src, lay, "cgi")
        t.run("installed stack", installed_stack, t, top, lay)
        t.run("reinstall", reinstall, t, src, lay)
    finally:
        if not t.failed:
            shutil.rmtree(top, ignore_errors=True)
        else:
            print(f"# kept {top}")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
