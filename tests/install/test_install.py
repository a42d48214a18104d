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
import pwd
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import apache  # noqa: E402
from client import Client  # noqa: E402
from stack import BUILDDIR, Installed, Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402
from suite import frame_page  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE = "alice@example.test"
BUILD_TIMEOUT = 900
# The web server files make install writes with the configured paths in.
WEB_FILES = ("lighttpd.conf", "lighttpd-postern.conf", "lighttpd-cgi.conf",
             "apache-postern.conf", "apache-fcgid.conf", "postern.htaccess",
             "postern-cgi.sh")
# The user the web server and postern run as (./configure --with-user).
USER = "www-data"


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
        self.doc = os.path.join(self.prefix, "share", "doc", "postern")
        self.man = os.path.join(self.prefix, "share", "man")
        self.conf = os.path.join(self.sysconfdir, "postern", "postern.conf")
        self.state = os.path.join(self.localstatedir, "lib", "postern")
        # Apart from localstatedir, so that the run folder is seen to
        # follow --runstatedir, not localstatedir's default run/.
        self.runstatedir = os.path.join(top, "run")
        self.run = os.path.join(self.runstatedir, "postern")
        self.tmpfiles = os.path.join(self.prefix, "lib", "tmpfiles.d", "postern.conf")
        self.admin = os.path.join(self.sbin, "postern-admin")

    def files(self):
        """What make install must put in place (paths under the prefix)."""
        return [self.admin,
                *(os.path.join(self.libexec, p) for p in
                  ("postern-auth", "postern-jmap", "postern-blob", "pushd",
                   "cgi-bin/postern-auth.cgi", "cgi-bin/postern-jmap.cgi",
                   "cgi-bin/postern-blob.cgi")),
                *(os.path.join(self.data, p) for p in
                  ("www/index.html", "www/app.js", "www/api-errors/503.html",
                   "www/js/views/richtext.js", "schema.sql", *WEB_FILES,
                   "postern-pushd.service", "postern-responder@.service",
                   "postern-login.service")),
                *(os.path.join(self.doc, p) for p in
                  ("README.md", "LICENSE", "INSTALL.md", "API.md", "SECURITY.md")),
                os.path.join(self.man, "man5", "postern.conf.5"),
                *(os.path.join(self.man, "man8", p) for p in
                  ("postern.8", "postern-pushd.8", "postern-admin.8")),
                self.tmpfiles, self.conf, self.conf + ".default"]


def inside(top, path):
    """Whether path, resolved, lies within the folder top."""
    top = os.path.realpath(top)
    return os.path.commonpath([top, os.path.realpath(path)]) == top


def check_member(m, top):
    """Raises ValueError where the "tar" filter (Python 3.11.4 and later)
    would refuse m: an absolute name, a name that lands outside top, a
    device or FIFO, a link that points outside top. Paths are resolved as
    the folder stands now, so a member under a link unpacked before it is
    judged by where that link leads."""
    dest = os.path.join(top, m.name)
    if os.path.isabs(m.name) or not inside(top, dest):
        raise ValueError(f"{m.name}: outside the target")
    if m.isdev():
        raise ValueError(f"{m.name}: a device or FIFO")
    here = os.path.dirname(os.path.realpath(dest))
    if m.issym() and not inside(top, os.path.join(here, m.linkname)):
        raise ValueError(f"{m.name}: a link leaving the target")
    if m.islnk() and not inside(top, os.path.join(top, m.linkname)):
        raise ValueError(f"{m.name}: a link leaving the target")


def extract(tar, top):
    """Unpacks tar into top safely on every Python 3 (the filter= argument
    came in 3.11.4; Debian 12 has 3.11.2): each member is checked just
    before it is written, so a chain of links (a -> ., a/b -> .., a/b/x)
    cannot carry a later member out. Members are checked all first too,
    so that a tarball refused for an early member leaves nothing behind."""
    with tarfile.open(tar) as tf:
        members = tf.getmembers()
        for m in members:
            check_member(m, top)
        for m in members:
            check_member(m, top)
            tf.extract(m, top)


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
    # A chain of links, each inside when read alone: a -> ., a/esc -> ..
    # (the target's parent once a is unpacked), then a file through both.
    path, target = os.path.join(top, "chain.tar"), os.path.join(top, "chain", "in")
    os.makedirs(target)
    with tarfile.open(path, "w") as tf:
        for name, kind, link in (("a", tarfile.SYMTYPE, "."),
                                 ("a/esc", tarfile.SYMTYPE, ".."),
                                 ("a/esc/evil", tarfile.REGTYPE, "")):
            m = tarfile.TarInfo(name)
            m.type, m.linkname = kind, link
            tf.addfile(m, io.BytesIO(b""))
    try:
        extract(path, target)
        refused = False
    except ValueError:
        refused = True
    t.ok(refused and not os.path.exists(os.path.join(top, "chain", "evil")),
         "the tarball extraction refuses a chain of links leading out")
    shutil.rmtree(os.path.join(top, "chain"))
    os.unlink(path)


def build(t, tar, top, lay):
    extract(tar, top)
    src = glob.glob(os.path.join(top, "postern-*"))[0]
    code, out = run(["./configure", "-q", f"--prefix={lay.prefix}",
                     f"--sysconfdir={lay.sysconfdir}",
                     f"--localstatedir={lay.localstatedir}",
                     f"--runstatedir={lay.runstatedir}"], src)
    if not t.ok(code == 0, "configure with prefix, sysconfdir, localstatedir, runstatedir",
                tail(out)):
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
                 (lay.prefix, lay.sysconfdir, lay.localstatedir, lay.runstatedir)),
         "nothing is written outside DESTDIR")
    st = os.stat(stage + lay.state)
    t.eq(oct(st.st_mode & 0o777), "0o700", "the state folder is made 0700")
    with open(stage + os.path.join(lay.data, "postern-pushd.service")) as f:
        unit = f.read()
    t.ok(f"ExecStart={lay.libexec}/pushd" in unit and lay.conf in unit
         and lay.run in unit, "the systemd unit names the installed paths", unit)
    with open(stage + os.path.join(lay.data, "postern-login.service")) as f:
        unit = f.read()
    t.ok(f"ExecStart={lay.libexec}/postern-auth -s {lay.run}/login.sock" in unit,
         "the sign-in unit runs postern-auth on login.sock, as apache-postern.conf expects", unit)
    substituted(t, stage, lay)
    with open(stage + lay.conf) as f:
        conf = f.read()
    t.ok(f"#state_db = {lay.state}/state.db" in conf,
         "the installed postern.conf shows the configured state path")
    t.ok(f"#pushd_socket = {lay.run}/pushd.sock" in conf,
         "and the configured run folder")
    with open(stage + lay.conf + ".default") as f:
        t.eq(f.read(), conf, "postern.conf.default is installed beside it")
    with open(stage + os.path.join(lay.man, "man5", "postern.conf.5")) as f:
        t.ok(lay.conf in f.read(), "postern.conf(5) names the configured path")
    code, out = run(["make", "-s", "uninstall", f"DESTDIR={stage}"], src)
    left = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs]
    t.ok(code == 0 and not left, "make uninstall DESTDIR=... leaves no file "
         "(an unedited postern.conf goes)", left or tail(out))


def substituted(t, stage, lay):
    """The files make install writes from .in templates carry the
    configured folders, and no placeholder is left in any of them."""
    want = {"lighttpd.conf": [lay.data + "/www"],
            "lighttpd-postern.conf": [lay.data + "/www", lay.libexec, lay.conf, lay.run],
            "lighttpd-cgi.conf": [lay.data + "/www", lay.libexec + "/cgi-bin", lay.conf, lay.run],
            "apache-postern.conf": [lay.data + "/www", lay.run],
            "apache-fcgid.conf": [lay.libexec, lay.conf, lay.data],
            "postern.htaccess": ["SetEnv POSTERN_CONF " + lay.conf],
            "postern-cgi.sh": ["POSTERN_CONF=" + lay.conf, "POSTERN_LIBEXEC=" + lay.libexec]}
    for name, parts in want.items():
        path = stage + os.path.join(lay.data, name)
        with open(path) as f:
            text = f.read()
        missing = [p for p in parts if p not in text]
        t.ok(not missing, f"{name} is installed with the configured paths in", missing)
    with open(stage + lay.tmpfiles) as f:
        t.ok(f"d {lay.run} 0750 {USER} {USER}" in f.read(),
             "the tmpfiles.d snippet makes the configured run folder")
    left = []
    for d, _, names in os.walk(stage):
        for n in names:
            path = os.path.join(d, n)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if re.search(rb"@(pkglibexecdir|pkgdatadir|wwwdir|cgidir|sysconfdir|"
                             rb"postern_conf|localstatedir|statedir|rundir|tmpfilesdir|"
                             rb"sbindir|user|VERSION)@", f.read()):
                    left.append(path[len(stage):])
    t.ok(not left, "no installed file keeps a @placeholder@", left)
    mode = os.stat(stage + os.path.join(lay.data, "postern-cgi.sh")).st_mode & 0o777
    t.eq(oct(mode), "0o755", "postern-cgi.sh is installed runnable (0755)")


def carries_repository(t, tar):
    """The tarball holds every file of the repository (what the README and
    INSTALL point to among them), but for git's own and an empty folder's
    placeholder."""
    top = os.environ.get("POSTERN_SRCDIR")
    if not top or not os.path.isdir(os.path.join(top, ".git")):
        print("# the tarball's contents against the repository: no git checkout, left out")
        return
    code, out = run(["git", "ls-files"], top)
    if code != 0:
        print("# git ls-files failed: the tarball's contents are not compared")
        return
    tracked = {p for p in out.split() if p not in (".gitignore", "m4/.keep")}
    with tarfile.open(tar) as tf:
        names = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    missing = sorted(tracked - names)
    t.ok(not missing, f"the tarball holds every file of the repository ({len(tracked)})",
         missing[:40])


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
             "s = stack.Stack('/nonexistent'); f = s.folders(); "
             "print(f['libexec'], f['www'], s.pushd_bin())")
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


def as_user(*cmd):
    """cmd as the web server's user, as INSTALL.md says (runuser: Debian
    has no sudo by default)."""
    r = subprocess.run(["runuser", "-u", USER, "--", *cmd], capture_output=True,
                       text=True, timeout=60)
    return r.returncode, r.stdout + r.stderr


def give(path):
    """path and everything in it to the web server's user."""
    pw = pwd.getpwnam(USER)
    for d, dirs, files in os.walk(path):
        for n in [d] + [os.path.join(d, x) for x in dirs + files]:
            os.chown(n, pw.pw_uid, pw.pw_gid)


def operator_setup(t, top, lay, upstream):
    """What INSTALL.md has an operator do after make install: the state
    folder given to the web server's user, the run folder made as the
    tmpfiles.d snippet says, upstream set in postern.conf, then
    postern-admin init and check as that user."""
    os.chmod(top, 0o755)            # the test's own folder, made 0700
    give(lay.state)
    with open(lay.tmpfiles) as f:
        kind, path, mode, user, group = next(
            line.split()[:5] for line in f if line.startswith("d "))
    os.makedirs(path, exist_ok=True)
    os.chmod(path, int(mode, 8))
    shutil.chown(path, user, group)
    t.eq(path, lay.run, "the run folder the tmpfiles.d snippet makes is the configured one")
    with open(lay.conf, "a") as f:
        f.write(f"\n# an operator's edit\nupstream = {upstream}\nname = Installed postern\n")
    code, out = as_user(lay.admin, "init")
    t.ok(code == 0 and out.count(": created") == 3, f"runuser -u {USER} -- postern-admin init", out)
    for name in ("state.db", "secret", "vapid.pem"):
        st = os.stat(os.path.join(lay.state, name))
        t.eq(oct(st.st_mode & 0o777), "0o600",
             f"{name} is made 0600 at the compiled-in default path")
    code, out = as_user(lay.admin, "check")
    t.ok(code == 0 and "0 errors" in out, "postern-admin check passes", out)


def operator_stack(top, lay, mode, server="lighttpd"):
    """A stack on the installed files as they are: only the address and
    port are the test's (lighttpd's two lines, Apache's Listen), the
    folders, the configuration and the user are what make install wrote."""
    s = Stack(os.path.join(top, f"op-{mode}"), mode=mode, server=server, seed=False,
              installed=Installed(lay.libexec, lay.data))
    s.as_installed = True
    s.conf_path = lay.conf
    s.state_db = os.path.join(lay.state, "state.db")
    s.run_dir = lay.run
    s.pushd_socket = os.path.join(lay.run, "pushd.sock")
    s.run_as = USER
    if s.web:
        s.web.run = lay.run
    os.makedirs(s.root, exist_ok=True)
    return s


def start_postern(s):
    if s.web is None or s.web.wants_pushd:
        s.start_pushd()
    if s.web:
        s.web.prepare()
        s.web.start()
    else:
        s.start_lighttpd()


def stop_postern(s):
    if s.web:
        s.web.stop()
    s.stop_lighttpd()
    s.stop_pushd()


def smoke(t, s, what):
    """The app, sign-in, a JMAP call, a download and (with pushd) an event
    stream, through one installed web server file."""
    c = Client(s.url)
    r = c.request("GET", "/")
    t.ok(r.status == 200 and b"<html" in r.body.lower(), f"{what}: the web app is served", r)
    frame_page(t, c, what)
    r = c.request("GET", "/api/health")
    t.ok(r.status == 200 and r.json().get("database") == "ok", f"{what}: /api/health", r)
    r = c.login(ALICE, USERS[ALICE], remember=True)
    t.eq(r.status, 200, f"{what}: sign-in")
    r = c.request("GET", "/api/config")
    t.ok(r.status == 200 and "Installed postern" in r.body.decode(),
         f"{what}: the responders read the installed configuration", r)
    r = c.jmap([["Mailbox/get", {"ids": None}, "0"]])
    t.ok(r.status == 200 and r.json()["methodResponses"][0][0] == "Mailbox/get",
         f"{what}: the JMAP relay", r)
    r = c.request("POST", f"/api/upload/{ALICE}", b"installed", {"Content-Type": "text/plain"})
    blob = r.json().get("blobId") if r.status == 201 else None
    r = c.request("GET", f"/api/blob/{ALICE}/{blob}/a.txt?accept=text/plain")
    t.ok(r.status == 200 and r.body == b"installed", f"{what}: upload and download", r)
    if s.web is None or s.web.wants_pushd:
        ping = first_ping(s, c.cookie)
        t.ok(ping, f"{what}: an event stream through pushd", ping)
    return c


def first_ping(s, cookie, wait=15):
    """Whether /api/events?ping=5 answers 200 and sends its first ping."""
    import socket
    k = socket.create_connection(("127.0.0.1", s.port), timeout=wait)
    try:
        k.sendall((f"GET /api/events?types=*&ping=5 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   f"Cookie: postern_session={cookie}\r\n\r\n").encode())
        got, end = b"", time.monotonic() + wait
        while b"event: ping" not in got and time.monotonic() < end:
            d = k.recv(4096)
            if not d:
                break
            got += d
        return got.startswith(b"HTTP/1.1 200") and b"event: ping" in got
    except OSError:
        return False
    finally:
        k.close()


def restart(t, s, lay, c):
    """postern stopped and started again over the kept configuration and
    database: the session lives on."""
    code, out = as_user(lay.admin, "sessions")
    t.ok(code == 0 and c.cookie[:8] in out, "postern-admin lists the session", out)
    code, out = as_user(lay.admin, "push")
    t.ok(code == 0 and "pushd: running" in out, "postern-admin sees pushd running", out)
    stop_postern(s)
    t.ok(not s.pushd_listening(), "pushd and lighttpd stopped")
    start_postern(s)
    r = c.request("GET", "/api/auth/session")
    t.eq(r.status, 200, "after a restart with configuration and database kept, "
         "the session still opens")
    r = c.jmap([["Mailbox/get", {"ids": None}, "0"]])
    t.eq(r.status, 200, "and the relay works with it")
    code, out = as_user("sqlite3", os.path.join(lay.state, "state.db"), "PRAGMA user_version")
    t.eq(out.strip(), schema_version(lay), "the state database kept its schema version")


def schema_version(lay):
    """The version the installed schema.sql declares in its first line
    ("schema version N"): the one the installed programs write."""
    with open(os.path.join(lay.data, "schema.sql")) as f:
        m = re.search(r"schema version (\d+)", f.readline())
    return m.group(1) if m else "?"


# Every web server file as installed: (mode, server, what).
PATHS = [("fcgi", "lighttpd", "lighttpd.conf (FastCGI)"),
         ("cgi", "lighttpd", "lighttpd-cgi.conf (CGI)"),
         ("proxy_fcgi", "apache", "apache-postern.conf (mod_proxy_fcgi)"),
         ("fcgid", "apache", "apache-fcgid.conf (mod_fcgid)"),
         ("htaccess-cgi", "apache", "postern.htaccess (CGI)"),
         ("htaccess-fcgid", "apache", "postern.htaccess with postern-cgi.sh (mod_fcgid)")]


def installed_stack(t, top, lay):
    """The operator's path: every installed web server file runs with no
    edit but the address and port."""
    cyrus = Stack(os.path.join(top, "cyrus"), seed=False)
    os.makedirs(cyrus.root, exist_ok=True)
    try:
        operator_setup(t, top, lay, cyrus.start_cyrus())
        for mode, server, what in PATHS:
            if server == "apache" and apache.skip_reason(mode):
                print(f"# {what} left out: {apache.skip_reason(mode)}")
                continue
            s = operator_stack(top, lay, mode, server)
            try:
                start_postern(s)
                c = smoke(t, s, what)
                if mode == "fcgi":
                    restart(t, s, lay, c)
            finally:
                stop_postern(s)
    finally:
        cyrus.stop()


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
        carries_repository(t, tar)
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
