#!/usr/bin/env python3
"""A private Cyrus IMAP 3.6 JMAP server on loopback, for the demo and the tests.

Library use::

    c = Cyrus(root, http_port, smtp_port)
    c.start()                      # master + httpd/lmtpd/imapd, waits for JMAP
    c.add_user("alice@example.test", "secret")  # and its mailboxes
    c.deliver("alice@example.test", raw_bytes)
    c.index()                      # squatter -i, so Email/query filters work
    c.start_sink()                 # optional in-process SMTP sink on smtp_port
    c.stop()                       # idempotent; kills master and every child

CLI::

    python3 tests/harness/cyrus.py start --root DIR --http-port N --smtp-port N
    python3 tests/harness/cyrus.py stop --root DIR

`start` also creates the demo users, seeds demo mail and runs the SMTP sink as
a detached child, prints one JSON line and exits, leaving everything running.

Cyrus's tree always lives in a fresh mkdtemp directory under /tmp (recorded in
ROOT/cyrus.json): the caller's ROOT may sit under /root (mode 700) where the
`cyrus` user cannot reach, and unix socket paths must stay under 108 bytes.
Standard library only; Python 3.11.
"""

import argparse
import base64
import imaplib
import json
import os
import shutil
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

try:  # imported as a package (tests.harness.cyrus) ...
    from . import smtpsink
except ImportError:  # ... or run as a script / with tests/harness on sys.path
    import smtpsink

CYRUS_BIN = "/usr/lib/cyrus/bin"
SASLPASSWD2 = "/usr/sbin/saslpasswd2"
CYRUS_USER = "cyrus"
CYRUS_GROUP = "mail"
STATE_FILE = "cyrus.json"
DEFAULT_DOMAIN = "example.test"
SPECIAL_FOLDERS = ("Drafts", "Sent", "Trash", "Junk", "Archive")
# Checked by start(); a harness-only account so readiness does not depend on
# the caller having created users before start().
PROBE_USER = "harness-probe"
PROBE_PASSWORD = "harness-probe-pass"
# Subdirectories of the configuration directory that Cyrus expects to exist.
CONFIG_SUBDIRS = ("db", "socket", "proc", "log", "msg", "user", "quota",
                  "lock", "sync", "sync/squatter", "log/smtpclient.host")
TREE_SUBDIRS = ("etc", "conf", "spool", "search", "run", "sieve", "log")
# Binary -> the Debian package that ships it (httpd is in cyrus-caldav, not
# in cyrus-imapd).
REQUIRED_BINARIES = {
    f"{CYRUS_BIN}/master": "cyrus-common",
    f"{CYRUS_BIN}/ctl_cyrusdb": "cyrus-common",
    f"{CYRUS_BIN}/lmtpd": "cyrus-common",
    f"{CYRUS_BIN}/idled": "cyrus-common",
    f"{CYRUS_BIN}/squatter": "cyrus-common",
    f"{CYRUS_BIN}/timsieved": "cyrus-common",
    f"{CYRUS_BIN}/imapd": "cyrus-imapd",
    f"{CYRUS_BIN}/httpd": "cyrus-caldav",
    SASLPASSWD2: "sasl2-bin",
}


class CyrusError(RuntimeError):
    """A harness step failed; the message says which and shows log tails."""


# --------------------------------------------------------------------------
# Small helpers


_handed_out = set()


def free_port():
    """A TCP port on 127.0.0.1 that is free right now and that this process
    has not handed out before (racy against other processes, but good
    enough for tests that pick a port and start a server within
    milliseconds). Two picks in a row can be the same port once the first
    socket is closed: a Cyrus whose SMTP host was its own HTTP port hung
    every session request until its start timed out."""
    for _ in range(64):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise OSError("no port on 127.0.0.1 that was not handed out before")


def port_is_free(port):
    """No listener on 127.0.0.1:port. SO_REUSEADDR as the master uses it, so
    connections lingering in TIME_WAIT do not count as busy."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def check_binaries():
    """Fail early, naming the package, if a Cyrus program is missing."""
    missing = sorted({pkg for path, pkg in REQUIRED_BINARIES.items()
                      if not os.access(path, os.X_OK)})
    if missing:
        raise CyrusError("Cyrus programs missing; install with apt-get install "
                         f"--no-install-recommends {' '.join(missing)}")


def tail(path, lines=30):
    """The last lines of a log file, or a note that it is missing/empty."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 16384))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return f"({path}: {e.strerror})"
    if not text.strip():
        return f"({path} is empty)"
    return "\n".join(text.splitlines()[-lines:])


def split_login(login):
    """'alice@example.test' -> ('alice', 'example.test')."""
    local, sep, domain = login.rpartition("@")
    if not sep or not local or not domain:
        raise CyrusError(f"login must be a full address like alice@example.test, got {login!r}")
    return local, domain


def basic_auth(login, password):
    token = base64.b64encode(f"{login}:{password}".encode()).decode()
    return "Basic " + token


def proc_stat(pid):
    """(state, session id) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()  # comm may contain spaces
    return fields[0], int(fields[3])


def proc_cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def is_alive(pid):
    """True if pid exists and is not a zombie (an orphan may stay a zombie
    for a while when pid 1 is slow to reap)."""
    st = proc_stat(pid)
    return st is not None and st[0] != "Z"


def session_processes(sid, marker):
    """Live pids in session `sid` whose command line contains `marker`.

    The master is started as a session leader, and every Cyrus child names
    our own config file on its command line: matching both never touches an
    unrelated process even if a pid were reused."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        st = proc_stat(int(name))
        if st and st[1] == sid and st[0] != "Z" and marker in proc_cmdline(int(name)):
            pids.append(int(name))
    return pids


def wait_until(predicate, timeout, interval=0.05):
    """Poll predicate() until it is true or the deadline passes."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def chown_tree(path, uid, gid):
    os.chown(path, uid, gid)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)


# --------------------------------------------------------------------------
# Configuration files


def imapd_conf(tree, http_port, smtp_port, extra=()):
    """imapd.conf; extra lines (e.g. the TLS keys) go at the end."""
    conf = f"{tree}/conf"
    folders = " | ".join(SPECIAL_FOLDERS)
    lines = [
        f"configdirectory: {conf}",
        f"partition-default: {tree}/spool",
        "defaultpartition: default",
        "servername: postern-cyrus",
        # Logins are full addresses and the accountId is the address.
        "virtdomains: userid",
        "admins: cyrus",
        # Plain HTTP Basic auth on loopback.
        "allowplaintext: yes",
        "sasl_pwcheck_method: auxprop",
        "sasl_auxprop_plugin: sasldb",
        f"sasl_sasldb_path: {conf}/sasldb2",
        "sasl_mech_list: PLAIN LOGIN",
        # Debian's /etc/imapd.conf points these at /run/cyrus; ours must be
        # private so two instances never share a socket or lock.
        f"lmtpsocket: {conf}/socket/lmtp",
        f"idlesocket: {conf}/socket/idle",
        f"notifysocket: {conf}/socket/notify",
        f"proc_path: {conf}/proc",
        f"mboxname_lockpath: {conf}/lock",
        f"sievedir: {tree}/sieve",
        "lmtp_downcase_rcpt: yes",
        # Tests may deliver the same message twice and expect two copies.
        "duplicatesuppression: no",
        # First delivery creates INBOX and the special-use folders with roles.
        "autocreate_post: yes",
        # lmtpd ignores autocreate_post unless autocreate_quota >= 0
        # (0 = no quota limit); logins then autocreate too.
        "autocreate_quota: 0",
        f"autocreate_inbox_folders: {folders}",
        f"autocreate_subscribe_folders: {folders}",
        *[f"xlist-{name.lower()}: {name}" for name in SPECIAL_FOLDERS],
        # CardDAV beside JMAP (the address book, /api/dav/): JMAP answers
        # the same with it (same capabilities, same states).
        "httpmodules: carddav jmap",
        "conversations: yes",
        "conversations_db: twoskip",
        # Any Email/query filter beyond inMailbox needs Xapian.
        "search_engine: xapian",
        "defaultsearchtier: t1",
        f"t1searchpartition-default: {tree}/search",
        # The rolling squatter follows this sync log channel.
        "sync_log: yes",
        "sync_log_channels: squatter",
        "smtp_backend: host",
        f"smtp_host: 127.0.0.1:{smtp_port}/noauth",
        # If the HTTP port is taken, exit instead of running without httpd.
        "master_bind_errors_fatal: yes",
        *extra,
    ]
    return "\n".join(lines) + "\n"


def make_cert(cert, key, san="IP:127.0.0.1, DNS:localhost", cn="localhost"):
    """A self-signed EC P-256 certificate valid for a day, made with the
    openssl command line: cert and key are the paths to write (PEM)."""
    openssl = shutil.which("openssl")
    if not openssl:
        raise CyrusError("openssl missing (apt-get install openssl)")
    proc = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "1", "-subj", f"/CN={cn}", "-addext", f"subjectAltName={san}",
         "-keyout", key, "-out", cert], capture_output=True, timeout=30)
    if proc.returncode != 0:
        raise CyrusError(f"openssl req failed: {proc.stderr.decode(errors='replace').strip()}")


def cyrus_conf(tree, http_port, sieve_port):
    """The master does not pass -C to its children: every cmd names it."""
    c = f"-C {tree}/etc/imapd.conf"
    b = CYRUS_BIN
    sock = f"{tree}/conf/socket"
    return f"""START {{
  recover     cmd="{b}/ctl_cyrusdb {c} -r"
}}
SERVICES {{
  imap        cmd="{b}/imapd {c}" listen="{sock}/imap" prefork=0 maxchild=20
  http        cmd="{b}/httpd {c}" listen="127.0.0.1:{http_port}" prefork=1 maxchild=50
  lmtpunix    cmd="{b}/lmtpd {c}" listen="{sock}/lmtp" prefork=0 maxchild=20
  sieve       cmd="{b}/timsieved {c}" listen="127.0.0.1:{sieve_port}" prefork=0 maxchild=20
}}
EVENTS {{
  checkpoint  cmd="{b}/ctl_cyrusdb {c} -c" period=30
}}
DAEMON {{
  idled       cmd="{b}/idled {c}"
  squatter    cmd="{b}/squatter {c} -R -d"
}}
"""


class _UnixIMAP(imaplib.IMAP4):
    """imaplib over imapd's unix socket (no TCP port to allocate)."""

    def __init__(self, path, timeout):
        self._path = path
        super().__init__(path, timeout=timeout)

    def _create_socket(self, timeout):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(self._path)
        return sock


# --------------------------------------------------------------------------
# The instance


class Cyrus:
    """One private Cyrus instance. `root` is the caller's directory (created
    if missing) holding cyrus.json, the sink spool and the logs we write."""

    def __init__(self, root, http_port, smtp_port, domain=DEFAULT_DOMAIN,
                 start_timeout=30.0, sieve_port=None, tls=False):
        self.root = os.path.abspath(root)
        self.http_port = int(http_port)
        self.smtp_port = int(smtp_port)
        # ManageSieve (timsieved, RFC 5804) on loopback: filters, vacation.
        # Chosen by start() unless given (None: a state file from before).
        self.sieve_port = int(sieve_port) if sieve_port else None
        self.domain = domain
        self.start_timeout = start_timeout
        # tls: a self-signed certificate (IP:127.0.0.1, DNS:localhost) in
        # the tree, so that timsieved offers STARTTLS; its path is tls_cert.
        self.tls = bool(tls)
        self.tree = None          # the /tmp directory Cyrus lives in
        self.master_pid = None
        self.sink_pid = None      # detached sink process (CLI)
        self.sink = None          # in-process SmtpSink (library)
        self.users = {}           # login -> password
        self._master = None       # Popen, when the master is our child
        self._lock = threading.Lock()  # add_user/state writes from threads

    # -- paths ------------------------------------------------------------

    @property
    def imapd_conf_path(self):
        return f"{self.tree}/etc/imapd.conf"

    @property
    def sasldb_path(self):
        return f"{self.tree}/conf/sasldb2"

    @property
    def lmtp_socket(self):
        return f"{self.tree}/conf/socket/lmtp"

    @property
    def imap_socket(self):
        return f"{self.tree}/conf/socket/imap"

    @property
    def master_log(self):
        return f"{self.tree}/log/master.log"

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def session_url(self):
        return f"{self.base_url}/jmap/"

    @property
    def sink_spool(self):
        return os.path.join(self.root, "sink")

    @property
    def sink_log(self):
        return os.path.join(self.root, "sink.log")

    @property
    def tls_cert(self):
        """The certificate timsieved presents (PEM), when tls; else None."""
        return f"{self.tree}/etc/tls-cert.pem" if self.tls and self.tree else None

    @property
    def tls_key(self):
        return f"{self.tree}/etc/tls-key.pem" if self.tls and self.tree else None

    @property
    def syslog(self):
        """Cyrus's own messages (syslog), one per line, where syslogshim.c
        could be built; "" while there are none."""
        return f"{self.tree}/log/syslog" if self.tree else None

    def syslog_text(self):
        try:
            with open(self.syslog, errors="replace") as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    # -- state file ---------------------------------------------------------

    def _save_state(self):
        state = {
            "tree": self.tree,
            "master_pid": self.master_pid,
            "sink_pid": self.sink_pid,
            "http_port": self.http_port,
            "smtp_port": self.smtp_port,
            "sieve_port": self.sieve_port,
            "domain": self.domain,
            "tls": self.tls,
            "users": self.users,
        }
        path = os.path.join(self.root, STATE_FILE)
        with self._lock:
            with open(path + ".tmp", "w") as f:
                json.dump(state, f, indent=1)
            os.replace(path + ".tmp", path)

    @classmethod
    def load(cls, root):
        """Re-attach to an instance started earlier (e.g. by the CLI)."""
        path = os.path.join(os.path.abspath(root), STATE_FILE)
        try:
            with open(path) as f:
                state = json.load(f)
        except OSError as e:
            raise CyrusError(f"no instance recorded in {path}: {e.strerror}") from None
        c = cls(root, state["http_port"], state["smtp_port"], state.get("domain", DEFAULT_DOMAIN),
                sieve_port=state.get("sieve_port"), tls=state.get("tls", False))
        c.tree = state["tree"]
        c.master_pid = state.get("master_pid")
        c.sink_pid = state.get("sink_pid")
        c.users = state.get("users", {})
        return c

    # -- errors -------------------------------------------------------------

    def _fail(self, what, *logs):
        """Raise CyrusError with what went wrong and the tails of the logs."""
        parts = [what]
        for path in (self.master_log,) + logs:
            parts.append(f"--- tail of {path} ---\n{tail(path)}")
        if self.syslog and os.path.exists(self.syslog):
            parts.append(f"--- tail of {self.syslog} ---\n{tail(self.syslog)}")
        elif os.path.exists("/dev/log"):
            parts.append("(Cyrus's own messages went to syslog via /dev/log)")
        else:
            parts.append("(Cyrus logs only to syslog and nothing listens on /dev/log "
                         "here, so its own messages are lost)")
        parts.append(f"(the tree is kept at {self.tree} for inspection)")
        raise CyrusError("\n".join(parts))

    # -- start ----------------------------------------------------------------

    def start(self):
        """Write the config, create the tree, start master, wait for JMAP.
        On failure nothing is left running (the tree is kept to inspect)."""
        check_binaries()
        if os.geteuid() != 0:
            raise CyrusError("the Cyrus master must be started as root (it drops to cyrus)")
        os.makedirs(self.root, exist_ok=True)
        self._check_not_running()
        if self.sieve_port is None:
            self.sieve_port = free_port()
        if self.sieve_port == self.http_port:
            raise CyrusError(f"HTTP and ManageSieve on the same port {self.http_port}")
        for what, port in (("HTTP", self.http_port), ("ManageSieve", self.sieve_port)):
            if not port_is_free(port):
                raise CyrusError(f"{what} port 127.0.0.1:{port} is already in use")
        self._make_tree()
        self._save_state()
        try:
            self._add_sasl_user(f"{PROBE_USER}@{self.domain}", PROBE_PASSWORD)
            self._spawn_master()
            self._save_state()
            self._wait_ready()
            if self.tls:
                self._check_starttls()
        except BaseException:
            self.stop(remove_tree=False)
            raise
        return self

    def _check_not_running(self):
        path = os.path.join(self.root, STATE_FILE)
        if not os.path.exists(path):
            return
        old = Cyrus.load(self.root)
        if old.master_pid and is_alive(old.master_pid) and \
                old.tree and old.tree in proc_cmdline(old.master_pid):
            raise CyrusError(f"an instance is already running for {self.root} "
                             f"(master pid {old.master_pid}); stop it first")

    def _make_tree(self):
        # mkdtemp gives 0700; the cyrus user must traverse it.
        self.tree = tempfile.mkdtemp(prefix="postern-cyrus-", dir="/tmp")
        os.chmod(self.tree, 0o755)
        for sub in TREE_SUBDIRS:
            os.makedirs(f"{self.tree}/{sub}", exist_ok=True)
        for sub in CONFIG_SUBDIRS:
            os.makedirs(f"{self.tree}/conf/{sub}", exist_ok=True)
        extra = []
        if self.tls:
            make_cert(self.tls_cert, self.tls_key)
            extra = [f"tls_server_cert: {self.tls_cert}", f"tls_server_key: {self.tls_key}"]
        with open(self.imapd_conf_path, "w") as f:
            f.write(imapd_conf(self.tree, self.http_port, self.smtp_port, extra))
        with open(f"{self.tree}/etc/cyrus.conf", "w") as f:
            f.write(cyrus_conf(self.tree, self.http_port, self.sieve_port))
        open(self.master_log, "ab").close()
        uid, gid = self._cyrus_ids()
        for sub in TREE_SUBDIRS:
            chown_tree(f"{self.tree}/{sub}", uid, gid)
        if self.tls:
            os.chmod(self.tls_key, 0o600)
            os.chmod(self.tls_cert, 0o644)

    @staticmethod
    def _cyrus_ids():
        import grp
        import pwd
        try:
            return pwd.getpwnam(CYRUS_USER).pw_uid, grp.getgrnam(CYRUS_GROUP).gr_gid
        except KeyError:
            raise CyrusError("user cyrus / group mail missing: install cyrus-common "
                             "cyrus-imapd cyrus-admin cyrus-clients sasl2-bin") from None

    def _spawn_master(self):
        master = f"{CYRUS_BIN}/master"
        # Foreground (-D keeps stderr for our log) in a new session, so the
        # session id finds every child at stop() even after master is gone.
        cmd = [master, "-C", self.imapd_conf_path, "-M", f"{self.tree}/etc/cyrus.conf",
               "-p", f"{self.tree}/run/master.pid", "-D"]
        with open(self.master_log, "ab") as log:
            self._master = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True, close_fds=True, cwd=self.tree, env=self._syslog_env())
        self.master_pid = self._master.pid

    def _syslog_env(self):
        """The environment of the master and its children: syslogshim.c
        preloaded, writing to self.syslog (owned by cyrus, who writes it).
        Without a C compiler Cyrus's messages stay lost, as before."""
        env = dict(os.environ)
        shim = f"{self.tree}/syslogshim.so"
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "syslogshim.c")
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc or subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", shim, src],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            return env
        open(self.syslog, "ab").close()
        uid, gid = self._cyrus_ids()
        os.chown(self.syslog, uid, gid)
        env["LD_PRELOAD"] = shim
        env["POSTERN_SYSLOG_FILE"] = self.syslog
        return env

    def _master_running(self):
        if self._master is not None:
            return self._master.poll() is None
        return bool(self.master_pid) and is_alive(self.master_pid)

    def _wait_ready(self):
        """Poll until httpd serves the session for a real user and lmtpd's
        socket accepts connections; fail fast if the master dies."""
        login = f"{PROBE_USER}@{self.domain}"
        last = ["nothing tried yet"]
        has_mailbox = []

        def ready():
            if not self._master_running():
                self._fail("Cyrus master exited during start-up "
                           f"(is port {self.http_port} or {self.sieve_port} taken?)")
            try:
                # CardDAV makes a user's address book at the first HTTP
                # request, and answers 500 for a user with no mailbox:
                # an IMAP login makes the probe's first.
                if not has_mailbox:
                    imap = _UnixIMAP(self.imap_socket, 2)
                    try:
                        imap.login(login, PROBE_PASSWORD)
                    finally:
                        imap.logout()
                    has_mailbox.append(1)
                session = self.session(login, PROBE_PASSWORD, timeout=2)
            except (OSError, CyrusError, imaplib.IMAP4.error) as e:
                last[0] = str(e)
                return False
            if "apiUrl" not in session:
                last[0] = f"session without apiUrl: {session!r}"
                return False
            return self._lmtp_accepts()

        if not wait_until(ready, self.start_timeout):
            self._fail(f"Cyrus did not serve {self.session_url} within "
                       f"{self.start_timeout:.0f}s; last attempt: {last[0]}")

    def _check_starttls(self):
        """timsieved's greeting lists STARTTLS (it does only when it could
        load tls_server_cert/tls_server_key)."""
        greeting = b""
        try:
            with socket.create_connection(("127.0.0.1", self.sieve_port), timeout=10) as s:
                f = s.makefile("rb")
                while True:
                    line = f.readline()
                    greeting += line
                    if not line or line.split(b" ", 1)[0].rstrip(b"\r\n").upper() in (b"OK", b"NO", b"BYE"):
                        break
        except OSError as e:
            self._fail(f"ManageSieve on 127.0.0.1:{self.sieve_port}: {e!r}")
        if b'"STARTTLS"' not in greeting.upper():
            self._fail(f"tls: timsieved offers no STARTTLS; its greeting: {greeting!r}")

    def _lmtp_accepts(self):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            try:
                s.connect(self.lmtp_socket)
            except OSError:
                return False
        return True

    # -- stop ---------------------------------------------------------------

    def stop(self, remove_tree=None, timeout=15.0):
        """Stop the sink, the master and every Cyrus child. Idempotent.

        The /tmp tree is removed unless POSTERN_KEEP_CYRUS=1 (or
        remove_tree=False): it holds nothing the caller owns."""
        try:
            self._stop_sink()
        finally:  # a failing sink must not leave Cyrus running
            if self.master_pid:
                self._stop_master(timeout)
        if remove_tree is None:
            remove_tree = os.environ.get("POSTERN_KEEP_CYRUS") != "1"
        if remove_tree and self.tree and os.path.isdir(self.tree):
            shutil.rmtree(self.tree, ignore_errors=True)
        self.master_pid = None
        self.sink_pid = None
        # Only an object that started or loaded an instance owns the state
        # file (a start() refused for a busy root must not clobber it).
        if self.tree and os.path.exists(os.path.join(self.root, STATE_FILE)):
            self._save_state()

    def _stop_master(self, timeout):
        sid, marker = self.master_pid, self.tree

        def master_alive():  # and really ours: its command line names our tree
            return self._master_running() and marker in proc_cmdline(sid)

        def gone():
            return not master_alive() and not session_processes(sid, marker)

        # SIGTERM makes master stop its children itself.
        if master_alive():
            os.kill(sid, signal.SIGTERM)
        if not wait_until(gone, timeout):
            # Whatever ignored SIGTERM (a child stuck on a lock) is killed.
            for pid in session_processes(sid, marker) + ([sid] if master_alive() else []):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not wait_until(gone, 5):
                raise CyrusError(f"Cyrus processes survive SIGKILL: {session_processes(sid, marker)}")
        if self._master is not None:
            self._master.wait(timeout=5)  # reap
            self._master = None

    def _stop_sink(self):
        if self.sink is not None:
            self.sink.stop()
            self.sink = None
        pid = self.sink_pid
        if pid and is_alive(pid) and "smtpsink" in proc_cmdline(pid):
            os.kill(pid, signal.SIGTERM)
            if not wait_until(lambda: not is_alive(pid), 10):
                os.kill(pid, signal.SIGKILL)
                wait_until(lambda: not is_alive(pid), 5)
        self.sink_pid = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- users ----------------------------------------------------------------

    def add_user(self, login, password, create_mailboxes=True):
        """Create a SASL user (or change its password) and, by default, its
        mailboxes: without them JMAP answers accountNotFound until the
        first delivery. Safe to call again for an existing user."""
        with self._lock:  # saslpasswd2 writers must not overlap
            self._add_sasl_user(login, password)
            self.users[login] = password
        self._save_state()
        if create_mailboxes:
            self._imap_login(login, password)

    def _imap_login(self, login, password, timeout=30):
        """An IMAP login autocreates INBOX and the special-use folders
        (autocreate_quota >= 0); a JMAP login over httpd does not."""
        try:
            imap = _UnixIMAP(self.imap_socket, timeout)
            try:
                imap.login(login, password)
            finally:
                imap.logout()
        except (imaplib.IMAP4.error, OSError) as e:
            self._fail(f"IMAP login as {login} via {self.imap_socket} failed: {e!r}")

    def _add_sasl_user(self, login, password):
        if not self.tree:
            raise CyrusError("start() must run before add_user()")
        local, domain = split_login(login)
        # realm = domain part, as virtdomains: userid looks it up that way.
        proc = subprocess.run(
            [SASLPASSWD2, "-p", "-c", "-f", self.sasldb_path, "-u", domain, local],
            input=password.encode(), capture_output=True, timeout=30)
        if proc.returncode != 0:
            raise CyrusError(f"saslpasswd2 failed for {login}: "
                             f"{proc.stderr.decode(errors='replace').strip()}")
        # saslpasswd2 runs as root and creates the file root-owned.
        uid, gid = self._cyrus_ids()
        os.chown(self.sasldb_path, uid, gid)
        os.chmod(self.sasldb_path, 0o640)

    def has_user(self, login):
        """True if login exists in the sasldb (used by the sink's RCPT check)."""
        return smtpsink.sasldb_has_user(self.sasldb_path, login)

    # -- mail -------------------------------------------------------------------

    def deliver(self, rcpt, raw, sender="postmaster@example.test", timeout=30, tries=3):
        """Deliver raw bytes to one recipient over LMTP (one per transaction,
        so the single DATA reply is that recipient's). A temporary failure
        (4xx) is tried again, as an MTA would: Cyrus 3.6's lmtpd now and
        then answers a delivery made while others run with "421 4.3.0
        Internal error: assertion failed: imap/append.c"."""
        for attempt in range(tries):
            try:
                with smtplib.LMTP(self.lmtp_socket, timeout=timeout) as lmtp:
                    refused = lmtp.sendmail(sender, [rcpt], raw)
                break
            except smtplib.SMTPResponseException as e:
                if not 400 <= e.smtp_code < 500 or attempt == tries - 1:
                    self._fail(f"LMTP delivery to {rcpt} via {self.lmtp_socket} failed: {e!r}")
                time.sleep(0.2 * (attempt + 1))
            except (smtplib.SMTPException, OSError) as e:
                self._fail(f"LMTP delivery to {rcpt} via {self.lmtp_socket} failed: {e!r}")
        if refused:
            self._fail(f"LMTP refused {rcpt}: {refused!r}")

    def index(self, timeout=120):
        """Incrementally index every mailbox with Xapian (squatter -i)."""
        cmd = [f"{CYRUS_BIN}/squatter", "-C", self.imapd_conf_path, "-i"]
        proc = subprocess.run(cmd, capture_output=True, timeout=timeout,
                              user=CYRUS_USER, group=CYRUS_GROUP, cwd=self.tree)
        if proc.returncode != 0:
            out = (proc.stdout + proc.stderr).decode(errors="replace")
            self._fail(f"squatter -i exited {proc.returncode}:\n{out[-3000:]}")

    # -- JMAP client --------------------------------------------------------------

    def _request(self, method, url, login, password, body=None,
                 content_type="application/json", timeout=30):
        req = urllib.request.Request(url, data=body, method=method)
        req.add_header("Authorization", basic_auth(login, password))
        if body is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                data = resp.read()
        except urllib.error.HTTPError as e:
            detail = e.read()[:500].decode(errors="replace")
            raise CyrusError(f"{method} {url} as {login}: HTTP {e.code} {detail}") from None
        try:
            return json.loads(data)
        except ValueError:
            raise CyrusError(f"{method} {url}: not JSON: {data[:200]!r}") from None

    def session(self, login, password, timeout=30):
        return self._request("GET", self.session_url, login, password, timeout=timeout)

    def jmap(self, login, password, method_calls, using=None, timeout=60):
        """POST one JMAP request; returns the methodResponses list."""
        using = using or ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail",
                          "urn:ietf:params:jmap:submission"]
        body = json.dumps({"using": using, "methodCalls": method_calls}).encode()
        resp = self._request("POST", self.session_url, login, password, body, timeout=timeout)
        return resp["methodResponses"]

    def upload(self, login, password, data, content_type="message/rfc822"):
        """Upload a blob to the user's own account; returns the blobId."""
        url = f"{self.base_url}/jmap/upload/{login}/"
        return self._request("POST", url, login, password, data, content_type)["blobId"]

    # -- SMTP sink ------------------------------------------------------------------

    def start_sink(self):
        """Run the SMTP sink in this process (threads) on smtp_port, handing
        local recipients back to this instance over LMTP."""
        if self.sink is None:
            sink = smtpsink.SmtpSink(
                self.smtp_port, self.sink_spool, local_domain=self.domain,
                lmtp_socket=self.lmtp_socket, is_local_user=self.has_user)
            try:
                sink.start()
            except OSError as e:
                raise CyrusError(f"SMTP sink cannot listen on 127.0.0.1:{self.smtp_port}: "
                                 f"{e.strerror}") from None
            self.sink = sink
        return self.sink

    def spawn_sink(self, timeout=10):
        """Run the SMTP sink as a detached process that outlives us (CLI)."""
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "smtpsink.py")
        cmd = [sys.executable, script, "--port", str(self.smtp_port),
               "--spool", self.sink_spool, "--local-domain", self.domain,
               "--lmtp-socket", self.lmtp_socket, "--sasldb", self.sasldb_path]
        with open(self.sink_log, "ab") as log:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
        self.sink_pid = proc.pid
        self._save_state()

        def listening():
            if proc.poll() is not None:
                self._fail(f"SMTP sink exited with {proc.returncode}", self.sink_log)
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.smtp_port)) == 0

        if not wait_until(listening, timeout):
            self._fail(f"SMTP sink not listening on {self.smtp_port} after {timeout}s",
                       self.sink_log)


# --------------------------------------------------------------------------
# CLI


def cli_start(args):
    # Imported here: the library itself does not need the demo corpus.
    try:
        from . import demo_mail
    except ImportError:
        import demo_mail
    t0 = time.monotonic()
    http_port = args.http_port or free_port()
    smtp_port = args.smtp_port or free_port()
    c = Cyrus(args.root, http_port, smtp_port)
    try:
        c.start()
        c.spawn_sink()
        demo_mail.seed(c)
    except BaseException:
        c.stop(remove_tree=False)
        raise
    print(json.dumps({
        "root": c.root,
        "tree": c.tree,
        "http_port": c.http_port,
        "smtp_port": c.smtp_port,
        "sieve_port": c.sieve_port,
        "session_url": c.session_url,
        "master_pid": c.master_pid,
        "sink_pid": c.sink_pid,
        "users": [{"login": u, "password": p} for u, p in demo_mail.DEMO_USERS],
        "start_seconds": round(time.monotonic() - t0, 2),
    }), flush=True)


def cli_stop(args):
    if not os.path.exists(os.path.join(args.root, STATE_FILE)):
        return  # nothing was started here: stopping is idempotent
    Cyrus.load(args.root).stop()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("start", help="start Cyrus + SMTP sink, seed demo mail, print JSON")
    s.add_argument("--root", required=True)
    s.add_argument("--http-port", type=int, default=0, help="0 picks a free port")
    s.add_argument("--smtp-port", type=int, default=0, help="0 picks a free port")
    s.set_defaults(func=cli_start)
    t = sub.add_parser("stop", help="stop what `start --root` started")
    t.add_argument("--root", required=True)
    t.set_defaults(func=cli_stop)
    args = p.parse_args(argv)
    if hasattr(args, "root"):
        args.root = os.path.abspath(args.root)
    try:
        args.func(args)
    except CyrusError as e:
        print(f"cyrus.py {args.cmd}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
