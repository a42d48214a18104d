#!/usr/bin/env python3
"""The whole postern stack on loopback: a private Cyrus JMAP server with the
demo users and mail, an SMTP sink, and a real lighttpd running the postern
responders as FastCGI (or as CGI). Used by the integration tests and by
the demo (scripts/demo).

    s = Stack(root, mode="fcgi", conf_extra={"api_budget": "25"})
    s.start()          # prints nothing; raises with logs on failure
    s.url              # http://127.0.0.1:PORT
    s.stop()

CLI (the demo):  python3 tests/harness/stack.py --port 8080 [--mode cgi]
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cyrus as cyrus_mod  # noqa: E402
import demo_mail  # noqa: E402
import demo_book  # noqa: E402

SRCDIR = os.environ.get("POSTERN_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
BUILDDIR = os.environ.get("POSTERN_BUILDDIR") or SRCDIR
# How many times slower than natively the servers run (scripts/valgrind
# sets it): the bounded waits that are about time, not about behaviour,
# scale by it.
SLOW = float(os.environ.get("POSTERN_SLOW") or 1)
LIGHTTPD = os.environ.get("LIGHTTPD") or shutil.which("lighttpd") or "/usr/sbin/lighttpd"


class Installed:
    """The paths of an installed postern (make install), for a Stack that
    runs it instead of the build tree: pkglibexecdir holds the responders,
    pushd and cgi-bin/, pkgdatadir the web app (www/) and the lighttpd
    configurations. From the environment (POSTERN_PKGLIBEXECDIR and
    POSTERN_PKGDATADIR) when both are set, so that a test run as a program
    (tests/integration/suite.py) can be pointed at an installed copy."""

    def __init__(self, pkglibexecdir, pkgdatadir):
        self.libexec = pkglibexecdir
        self.cgi = os.path.join(pkglibexecdir, "cgi-bin")
        self.pushd = os.path.join(pkglibexecdir, "pushd")
        self.www = os.path.join(pkgdatadir, "www")
        self.conf_dir = pkgdatadir

    @staticmethod
    def from_env():
        libexec = os.environ.get("POSTERN_PKGLIBEXECDIR")
        data = os.environ.get("POSTERN_PKGDATADIR")
        return Installed(libexec, data) if libexec and data else None


# The shipped lighttpd configurations (lighttpd.conf includes
# lighttpd-postern.conf; lighttpd-cgi.conf stands alone), made from
# conf/*.in, and the Lua scripts they run, shipped as they are.
LIGHTTPD_CONFS = ("lighttpd.conf", "lighttpd-postern.conf", "lighttpd-cgi.conf")
LIGHTTPD_LUA = ("lighttpd-limits.lua", "lighttpd-headers.lua")


def fill_in(text, values):
    """text, a shipped configuration, with the value of each line that
    starts with one of the keys replaced, as an operator edits it: a key
    such as "server.port" names the line "server.port = ...", which
    becomes "server.port = VALUE"; a key ending in a space or "=" (as
    "SetEnv POSTERN_CONF ") is followed by the value directly. A key
    whose value is None has its line commented out. Each key may name
    one line at most. Returns (text, the keys found)."""
    lines = text.splitlines()
    found = set()
    for key, value in values.items():
        whole = key.endswith((" ", "="))
        hits = [i for i, line in enumerate(lines) if line.startswith(key) and
                (whole or line[len(key):len(key) + 1] in (" ", "="))]
        if len(hits) > 1:
            raise RuntimeError(f"more than one line {key!r}")
        if not hits:
            continue
        found.add(key)
        line = hits[0]
        if value is None:
            lines[line] = "# (left out by the test harness) " + lines[line]
        else:
            lines[line] = key + value if whole else f"{key} = {value}"
    return "\n".join(lines) + "\n", found


def write_confs(src, dest, names, values):
    """Copies the configurations names from src to dest with values filled
    in; every key must be found in one of them at least, so that a
    renamed line in a shipped file stops the tests rather than being
    silently left as it was."""
    found = set()
    for name in names:
        with open(os.path.join(src, name)) as f:
            text, keys = fill_in(f.read(), values)
        found |= keys
        with open(os.path.join(dest, name), "w") as f:
            f.write(text)
    missing = set(values) - found
    if missing:
        raise RuntimeError(f"{src}: no line for {sorted(missing)}")


free_port = cyrus_mod.free_port


def wait_until(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def proc_stat(pid):
    """(state, parent pid) of a process, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            st = f.read()
    except OSError:
        return None
    fields = st[st.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def children(pid):
    """The pids whose parent is pid."""
    out = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        st = proc_stat(d)
        if st and st[1] == pid:
            out.append(int(d))
    return out


def gone(pids):
    """Whether none of pids runs any more (a zombie has ended)."""
    states = (proc_stat(p) for p in pids)
    return all(st is None or st[0] == "Z" for st in states)


def proc_args(pid):
    """A process's command line as a list, or [] when it is gone. Under a
    tool such as valgrind the program is one of these, not the process's
    name or /proc/PID/exe."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Stack:
    def __init__(self, root, mode="fcgi", port=None, conf_extra=None,
                 seed=True, upstream=None, server="lighttpd", installed=None):
        # An Installed copy to run, else the build tree.
        self.installed = installed or Installed.from_env()
        self.root = os.path.abspath(root)
        self.mode = mode
        self.port = port or free_port()
        self.conf_extra = conf_extra or {}
        self.seed = seed
        self.upstream = upstream   # another JMAP server instead of Cyrus
        # Lines of the shipped Lua scripts to change, as fill_in takes
        # them (e.g. {"local max_conns": "8"}), and of the lighttpd
        # configurations beyond lighttpd_values (e.g. "server.max-fds").
        self.lua_values = {}
        self.lighttpd_extra = {}
        self.cyrus = None
        self.lighttpd = None
        self.pushd = None
        # The sockets' folder; as_installed runs the installed files as
        # an operator would, with only the address and port changed
        # (tests/install/test_install.py sets both).
        self.run_dir = os.path.join(self.root, "run")
        self.as_installed = False
        self.pushd_socket = os.path.join(self.run_dir, "pushd.sock")
        self.pushd_log = os.path.join(self.root, "pushd.log")
        self.url = f"http://127.0.0.1:{self.port}"
        self.conf_path = os.path.join(self.root, "postern.conf")
        self.state_db = os.path.join(self.root, "state.db")
        self.error_log = os.path.join(self.root, "lighttpd-error.log")
        # Apache in place of lighttpd (tests/harness/apache.py): mode is
        # then one of apache.MODES; pushd runs as the user Apache's
        # children run as.
        self.server = server
        self.web = None
        self.run_as = None
        if server == "apache":
            import apache
            self.web = apache.Apache(self, SRCDIR, BUILDDIR)
            self.error_log = self.web.error_log
            self.run_as = self.web.user

    # -- parts ---------------------------------------------------------------

    def start_cyrus(self):
        http_port, smtp_port = free_port(), free_port()
        self.cyrus = cyrus_mod.Cyrus(os.path.join(self.root, "cyrus"),
                                     http_port, smtp_port)
        self.cyrus.start()
        for login, password in demo_mail.DEMO_USERS:
            self.cyrus.add_user(login, password)
        self.cyrus.start_sink()
        if self.seed:
            demo_mail.seed(self.cyrus)
        return self.cyrus.base_url

    def write_conf(self, upstream):
        conf = {
            "upstream": upstream,
            "state_db": self.state_db,
            "secret_file": os.path.join(self.root, "secret"),
            "log_level": "info",
            "pushd_socket": self.pushd_socket,
            # Web Push's VAPID key pair: made by pushd on its first start.
            "webpush_key_file": os.path.join(self.root, "vapid.pem"),
        }
        if self.cyrus and self.cyrus.sieve_port:
            # The filters' ManageSieve: Cyrus's timsieved, on its own port.
            conf["sieve_port"] = self.cyrus.sieve_port
        conf.update(self.conf_extra)
        with open(self.conf_path, "w") as f:
            f.write("# written by tests/harness/stack.py\n")
            for k, v in conf.items():
                f.write(f"{k} = {v}\n")

    def folders(self):
        """The folders the web server configurations name, for this stack:
        the installed copy's or the build tree's programs and app, this
        stack's postern.conf and run folder."""
        inst = self.installed
        folders = {
            "www": inst.www if inst else os.path.join(SRCDIR, "www"),
            "libexec": inst.libexec if inst else os.path.join(BUILDDIR, "fcgi"),
            "cgi": inst.cgi if inst else os.path.join(BUILDDIR, "cgi-bin"),
            "conf": self.conf_path,
            "run": self.run_dir,
        }
        wrapped = self.wrapped_responders()
        folders["libexec"] = wrapped.get("libexec", folders["libexec"])
        folders["cgi"] = wrapped.get("cgi", folders["cgi"])
        return folders

    def lighttpd_values(self):
        """The lines of the shipped lighttpd configurations this stack
        sets: where to listen and its folders. The user lines go: the
        tests run every part as the same user. As installed, only where
        to listen."""
        q = lambda v: f'"{v}"'
        if self.as_installed:
            return {"server.bind": q("127.0.0.1"), "server.port": str(self.port)}
        f = self.folders()
        return self.lighttpd_extra | {
            "server.bind": q("127.0.0.1"), "server.port": str(self.port),
            "server.document-root": q(f["www"]),
            "server.errorfile-prefix": q(f["www"] + "/api-errors/"),
            "var.postern_www": q(f["www"]), "var.postern_libexec": q(f["libexec"]),
            "var.postern_cgi": q(f["cgi"]), "var.postern_conf": q(f["conf"]),
            "var.postern_run": q(f["run"]),
            "var.postern_lua": q(os.path.join(self.root, "lighttpd")),
            "server.username": None, "server.groupname": None,
        }

    def lighttpd_conf(self, values=None):
        """The shipped lighttpd configurations (the build's, written from
        conf/*.in, or the installed ones) with this stack's values in, in
        a folder of the stack; the path of the one to run."""
        src = self.installed.conf_dir if self.installed else os.path.join(BUILDDIR, "conf")
        dest = os.path.join(self.root, "lighttpd")
        os.makedirs(dest, exist_ok=True)
        write_confs(src, dest, LIGHTTPD_CONFS, values or self.lighttpd_values())
        lua = self.installed.conf_dir if self.installed else os.path.join(SRCDIR, "conf")
        write_confs(lua, dest, LIGHTTPD_LUA, self.lua_values)
        return os.path.join(dest, "lighttpd.conf" if self.mode == "fcgi" else "lighttpd-cgi.conf")

    # POSTERN_WRAP runs every responder lighttpd starts under a tool (e.g.
    # valgrind, see scripts/valgrind): scripts of the same names that exec
    # the tool with the real binary, in a folder of this stack.
    def wrapped_responders(self):
        wrap = os.environ.get("POSTERN_WRAP")
        if not wrap:
            return {}
        folder = os.path.join(self.root, "wrap")
        os.makedirs(folder, exist_ok=True)
        for sub, names in (("fcgi", ("postern-auth", "postern-jmap", "postern-blob")),
                           ("cgi-bin", ("postern-auth.cgi", "postern-jmap.cgi",
                                        "postern-blob.cgi"))):
            for name in names:
                path = os.path.join(folder, name)
                with open(path, "w") as f:
                    f.write(f'#!/bin/sh\nexec {wrap} "{os.path.join(BUILDDIR, sub, name)}" "$@"\n')
                os.chmod(path, 0o755)
        return {"libexec": folder, "cgi": folder}

    def start_lighttpd(self):
        os.makedirs(self.run_dir, exist_ok=True)
        conf = self.lighttpd_conf()
        # lighttpd's messages go to its standard error, as shipped.
        with open(self.error_log, "ab") as log:
            self.lighttpd = subprocess.Popen(
                [LIGHTTPD, "-D", "-f", conf], stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True)
        try:
            wait_until(lambda: port_open(self.port) or self.lighttpd.poll() is not None,
                       15 * SLOW, "lighttpd to listen")
        except RuntimeError:
            pass
        if self.lighttpd.poll() is not None or not port_open(self.port):
            raise RuntimeError("lighttpd did not start:\n" + self.log_tail())

    def stop_lighttpd(self):
        if self.lighttpd and self.lighttpd.poll() is None:
            # lighttpd stops the FastCGI children it spawned, without
            # waiting for them: they are waited for here, so that the
            # state database is closed when this returns (its last
            # connection checkpoints it and removes the WAL files).
            kids = children(self.lighttpd.pid)
            self.lighttpd.send_signal(signal.SIGTERM)
            try:
                self.lighttpd.wait(10 * SLOW)
                wait_until(lambda: gone(kids), 10 * SLOW, "lighttpd's children to end")
            except (subprocess.TimeoutExpired, RuntimeError):
                try:
                    os.killpg(self.lighttpd.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.lighttpd.wait()
        self.lighttpd = None

    # pushd runs on its own (lighttpd only connects to its socket): started
    # before lighttpd and stopped after it, when it was built.
    def pushd_bin(self):
        path = (self.installed.pushd if self.installed else
                os.path.join(BUILDDIR, "pushd", "pushd"))
        return path if os.access(path, os.X_OK) else None

    def pushd_listening(self):
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(0.5)
                s.connect(self.pushd_socket)
                return True
        except OSError:
            return False

    def start_pushd(self):
        binary = self.pushd_bin()
        if binary is None:
            return
        os.makedirs(os.path.dirname(self.pushd_socket), exist_ok=True)
        if os.path.exists(self.pushd_socket):
            os.unlink(self.pushd_socket)
        env = dict(os.environ, POSTERN_CONF=self.conf_path)
        # POSTERN_PUSHD_WRAP runs it under a tool, e.g. "valgrind -q".
        cmd = (os.environ.get("POSTERN_PUSHD_WRAP") or "").split() + [binary]
        with open(self.pushd_log, "ab") as log:
            self.pushd = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=log,
                                          user=self.run_as, group=self.run_as,
                                          start_new_session=True)
        try:
            wait_until(lambda: self.pushd_listening() or self.pushd.poll() is not None,
                       30 * SLOW, "pushd to listen")
        except RuntimeError:
            pass
        if self.pushd.poll() is not None or not self.pushd_listening():
            raise RuntimeError("pushd did not start:\n" + self.pushd_tail())

    def stop_pushd(self, sig=signal.SIGTERM):
        if self.pushd and self.pushd.poll() is None:
            self.pushd.send_signal(sig)
            try:
                self.pushd.wait(30 * SLOW)
            except subprocess.TimeoutExpired:
                os.killpg(self.pushd.pid, signal.SIGKILL)
                self.pushd.wait()
        code = self.pushd.returncode if self.pushd else None
        self.pushd = None
        return code

    def pushd_tail(self, n=40):
        try:
            with open(self.pushd_log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no pushd log)"

    def log_tail(self, n=40):
        if self.web:
            return self.web.log_tail(n)
        try:
            with open(self.error_log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no lighttpd error log)"

    # -- whole ---------------------------------------------------------------

    def start(self):
        os.makedirs(self.root, exist_ok=True)
        try:
            if self.web:
                self.web.prepare()
            upstream = self.upstream or self.start_cyrus()
            self.write_conf(upstream)
            if self.web is None or self.web.wants_pushd:
                self.start_pushd()
            if self.web:
                self.web.start()
            else:
                self.start_lighttpd()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self):
        if self.web:
            self.web.stop()
        self.stop_lighttpd()
        self.stop_pushd()
        if self.cyrus:
            self.cyrus.stop()
            self.cyrus = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def main():
    ap = argparse.ArgumentParser(description="Run postern locally on a private JMAP server.")
    ap.add_argument("--port", type=int, default=8080)
    ap.add_argument("--mode", choices=("fcgi", "cgi"), default="fcgi")
    ap.add_argument("--root", default=None, help="state folder (default: a new one under /tmp)")
    args = ap.parse_args()
    root = args.root or os.path.join("/tmp", f"postern-demo-{os.getpid()}")
    stack = Stack(root, mode=args.mode, port=args.port)
    stopping = []
    # Both stop the demo, also when it was started in the background (where
    # SIGINT would otherwise be ignored).
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *a: stopping.append(1))
    print("Starting the private JMAP server (Cyrus), demo mail and lighttpd...", flush=True)
    stack.start()
    # The demo's address books and filters (the tests' start empty).
    demo_book.seed(stack.cyrus)
    print(f"\npostern is running: open {stack.url}/\n")
    print("Demo accounts:")
    for login, password in demo_mail.DEMO_USERS:
        print(f"  {login:24} password: {password}")
    print(f"\nState and logs: {root}\nPress Ctrl-C to stop.", flush=True)
    try:
        while not stopping:
            time.sleep(0.5)
            if stack.lighttpd.poll() is not None:
                print("lighttpd stopped:\n" + stack.log_tail(), file=sys.stderr)
                break
    finally:
        print("Stopping...", flush=True)
        stack.stop()


if __name__ == "__main__":
    main()
