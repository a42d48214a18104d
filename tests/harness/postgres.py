#!/usr/bin/env python3
"""A private PostgreSQL for the tests: initdb and pg_ctl in a fresh
temporary folder, listening only on a Unix socket in that folder (no TCP).

Library use::

    pg = Postgres()
    pg.start()                 # initdb, pg_ctl start, CREATE DATABASE postern
    pg.uri                     # postgresql:///postern?host=<folder>&user=postern
    pg.stop_server()           # pg_ctl stop (the cluster stays), for outages
    pg.start_server()          # and back
    pg.stop()                  # idempotent: stops it and removes the folder

When the tests run as root, the server runs as an unprivileged user
(postgres when it exists, else nobody): PostgreSQL refuses root. Trust
authentication on the socket only, for a role named postern; every step is
bounded in time. Standard library only.
"""

import atexit
import glob
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile

TIMEOUT = 60


def pg_bindir():
    """Debian's PostgreSQL programs (the newest version installed), or
    the PATH's; None when there are none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    if found:
        return os.path.dirname(found[-1])
    which = shutil.which("pg_ctl")
    return os.path.dirname(which) if which else None


def available():
    return pg_bindir() is not None


def tap_main(t, body):
    """A test's main: body(pg) on a private PostgreSQL, stopped after it;
    TAP's exit status, or a skip when PostgreSQL is not installed."""
    if not available():
        print("1..0 # SKIP PostgreSQL is not installed")
        return 0
    pg = Postgres()
    try:
        pg.start()
        body(pg)
    except Exception as e:
        t.ok(False, "PostgreSQL starts and the checks run", str(e))
    finally:
        pg.stop()
    return t.done()


class Postgres:
    def __init__(self, dbname="postern"):
        self.bindir = pg_bindir()
        if self.bindir is None:
            raise RuntimeError("PostgreSQL is not installed (postgresql-15)")
        self.dbname = dbname
        self.dir = None
        self.user = None
        # The socket is open to every local user: the role needs this.
        self.password = secrets.token_urlsafe(18)
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.user = pwd.getpwnam(name)
                    break
                except KeyError:
                    pass

    @property
    def data(self):
        return os.path.join(self.dir, "data")

    @property
    def log(self):
        return os.path.join(self.dir, "server.log")

    @property
    def uri(self):
        return (f"postgresql:///{self.dbname}?host={self.dir}&user=postern"
                f"&password={self.password}")

    def _run(self, *args, check=True):
        kw = {}
        if self.user is not None:
            kw = {"user": self.user.pw_uid, "group": self.user.pw_gid,
                  "extra_groups": []}
        env = dict(os.environ, LC_ALL="C", PGHOST=self.dir, PGUSER="postern",
                   PGPASSWORD=self.password)
        r = subprocess.run([os.path.join(self.bindir, args[0])] + list(args[1:]),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, cwd=self.dir, env=env,
                           timeout=TIMEOUT, **kw)
        if check and r.returncode != 0:
            raise RuntimeError(f"{args[0]} failed:\n{r.stdout.decode(errors='replace')}"
                               f"\n{self.tail()}")
        return r

    def tail(self):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-20:])
        except OSError:
            return ""

    def start(self):
        # Short: a Unix socket's path must stay under 108 bytes.
        self.dir = tempfile.mkdtemp(prefix="postern-pg-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        if self.user is not None:
            os.chown(self.dir, self.user.pw_uid, self.user.pw_gid)
        pwfile = os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(self.password + "\n")
        if self.user is not None:
            os.chown(pwfile, self.user.pw_uid, self.user.pw_gid)
        # Never left behind, even when the test is stopped with SIGTERM.
        atexit.register(self.stop)
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        self._run("initdb", "-D", self.data, "-U", "postern",
                  "--auth=scram-sha-256", f"--pwfile={pwfile}",
                  "-E", "UTF8", "--no-instructions")
        os.unlink(pwfile)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = ''\nunix_socket_directories = '{self.dir}'\n"
                    "fsync = off\nlog_min_messages = warning\n")
        self.start_server()
        self._run("createdb", self.dbname)
        return self

    def start_server(self):
        self._run("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", str(TIMEOUT),
                  "start")

    def stop_server(self, mode="fast"):
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", str(TIMEOUT),
                  "stop", check=False)

    def pids(self):
        """The server's processes: the postmaster and its children."""
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            root = int(f.readline())
        out = [root]
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == root:
                out.append(int(d))
        return out

    def freeze(self, stop=True):
        """Every process of the server stopped (SIGSTOP), or woken: a
        database that takes no statement and refuses none."""
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGSTOP if stop else signal.SIGCONT)
            except ProcessLookupError:
                pass

    def psql(self, sql):
        """One statement's output (unaligned, tuples only)."""
        return self._run("psql", "-X", "-A", "-t", "-d", self.dbname, "-c",
                         sql).stdout.decode().strip()

    def dump(self):
        """The database's rows as pg_dump writes them (bytes)."""
        return self._run("pg_dump", "-a", self.dbname).stdout

    def stop(self):
        if self.dir is None:
            return
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self.stop_server("immediate")
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
