"""A real Apache 2.4 (event MPM) in place of lighttpd in the Stack, on a
loopback port, with a private ServerRoot in the stack's folder. The
postern parts of its configuration are the shipped files in conf/, with
the paths filled in by Define (apache-postern.conf, apache-fcgid.conf) or
by replacing the one placeholder line (postern.htaccess): the tests prove
what users install.

Modes:
    proxy_fcgi      responders as FastCGI servers on sockets (-s), started
                    here; apache-postern.conf
    fcgid           mod_fcgid spawns the responders; apache-fcgid.conf
    htaccess-cgi    a web root with postern.htaccess as .htaccess and the
                    responders as CGI in its cgi-bin/, mod_fcgid not loaded
    htaccess-fcgid  the same with mod_fcgid loaded, and cgi-bin/ holding
                    copies of postern-cgi.sh (mod_fcgid gives the processes
                    no SetEnv variable) with the paths written in
No pushd in the htaccess modes: shared hosts allow no daemon.

    s = Stack(root, mode="proxy_fcgi", server="apache")

When the tests run as root, Apache's children, pushd and the responders
run as www-data (Apache refuses to serve as root), and the stack's
folder is handed to that user so that they can write the database.
"""

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from stack import SLOW, fill_in

MODES = ("proxy_fcgi", "fcgid", "htaccess-cgi", "htaccess-fcgid")
# Each pool by its socket's name, as the units run them: one
# postern-responder@NAME each, and postern-login.service, postern-auth
# again on login.sock for sign-in alone.
RESPONDERS = ("auth", "login", "jmap", "blob", "image")
PROGRAM_OF = {"login": "auth"}
# The processes of each responder on its socket, as the units run them
# (-n 4).
RESPONDER_PROCS = 4
# Under CGI, where no pool can be held, postern-blob serves the image
# proxy too.
CGI_RESPONDERS = ("auth", "jmap", "blob")
APACHE2 = os.environ.get("APACHE2") or shutil.which("apache2") or "/usr/sbin/apache2"
MODULE_DIR = os.environ.get("APACHE_MODULES") or "/usr/lib/apache2/modules"
RUN_USER = "www-data"
BASE_MODULES = ("mpm_event", "authz_core", "mime", "dir", "alias", "env",
                "headers", "filter", "deflate", "rewrite", "proxy", "proxy_fcgi",
                "buffer", "reqtimeout")
# Loaded when installed: the per-address cap of apache-postern.conf
# (Debian's libapache2-mod-qos). Debian 12's mod_qos was built against
# PCRE 1, which its Apache no longer links: the library is loaded first
# (INSTALL.md says the same for a real server).
OPTIONAL_MODULES = ("qos",)
PRELOAD = {"qos": "/usr/lib/x86_64-linux-gnu/libpcre.so.3"}
MODE_MODULES = {
    "proxy_fcgi": (),
    "fcgid": ("fcgid",),
    "htaccess-cgi": ("cgid",),
    "htaccess-fcgid": ("cgid", "fcgid"),
}


def module_path(name):
    return os.path.join(MODULE_DIR, f"mod_{name}.so")


def skip_reason(mode):
    """Why this mode cannot run here, or None."""
    if not os.access(APACHE2, os.X_OK):
        return "apache2 is not installed"
    for m in BASE_MODULES + MODE_MODULES[mode]:
        if not os.path.exists(module_path(m)):
            return f"Apache module mod_{m} is not installed"
    return None


def lighttpd_then_apache(prefix, one_server, tap):
    """one_server(tap, root, label, **kind) under lighttpd (FastCGI), then
    under Apache (mod_proxy_fcgi) where it can run here, in a new short
    folder (Apache's Unix socket paths) that the web server's user, who
    runs the responders under Apache, can enter."""
    root = tempfile.mkdtemp(prefix=prefix)
    os.chmod(root, 0o755)
    one_server(tap, root, "lighttpd", mode="fcgi")
    if skip_reason("proxy_fcgi"):
        print(f"# Apache left out: {skip_reason('proxy_fcgi')}")
    else:
        one_server(tap, root, "apache", mode="proxy_fcgi", server="apache")


def run_user():
    """The user Apache's children and postern run as: ourselves, or
    www-data when we are root."""
    return RUN_USER if os.geteuid() == 0 else None


class Apache:
    def __init__(self, stack, srcdir, builddir):
        if stack.mode not in MODES:
            raise ValueError(f"unknown Apache mode {stack.mode!r}")
        self.s = stack
        self.mode = stack.mode
        self.srcdir, self.builddir = srcdir, builddir
        self.dir = os.path.join(stack.root, "apache")
        self.conf = os.path.join(self.dir, "httpd.conf")
        self.error_log = os.path.join(self.dir, "error.log")
        self.docroot = os.path.join(self.dir, "htdocs")
        self.run = stack.run_dir
        self.user = run_user()
        self.proc = None
        self.responders = []
        self.wants_pushd = not self.mode.startswith("htaccess")
        # Modules to leave out (a host without mod_headers), and the
        # per-address cap (POSTERN_CONNS_PER_IP) when not the shipped one.
        self.without = set()
        self.conns_per_ip = None

    # -- setup -----------------------------------------------------------------

    def prepare(self):
        """Before anything runs: the folders, owned by the user postern
        runs as (it writes the database and the secret beside them)."""
        os.makedirs(self.dir, exist_ok=True)
        os.makedirs(self.run, exist_ok=True)
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chmod(self.s.root, 0o755)
            for d in (self.s.root, self.run):
                os.chown(d, pw.pw_uid, pw.pw_gid)

    def main_conf(self):
        lines = [
            f'ServerRoot "{self.dir}"',
            f"Listen 127.0.0.1:{self.s.port}",
            "ServerName 127.0.0.1",
            f'PidFile "{self.dir}/httpd.pid"',
            f'ErrorLog "{self.error_log}"',
            "LogLevel warn",
            f'DefaultRuntimeDir "{self.dir}"',
            f"Mutex file:{self.dir} default",
            "ServerTokens Prod",
            # Bounded: one process of 32 threads is plenty for the tests.
            "StartServers 1", "ServerLimit 2", "ThreadsPerChild 32",
            "MaxRequestWorkers 64", "MinSpareThreads 16", "MaxSpareThreads 64",
            "Timeout 60",
            "TypesConfig /etc/mime.types",
            # A server-wide compressor as Debian's deflate.conf sets one,
            # and more: postern's files must keep it off /api/.
            "AddOutputFilterByType DEFLATE text/html text/plain text/css text/javascript "
            "application/javascript application/json application/octet-stream "
            "text/event-stream",
        ]
        if self.user:
            lines += [f"User {self.user}", f"Group {self.user}"]
        optional = tuple(m for m in OPTIONAL_MODULES if os.path.exists(module_path(m)))
        for m in BASE_MODULES + MODE_MODULES[self.mode] + optional:
            if m in self.without:
                continue
            if m in PRELOAD and os.path.exists(PRELOAD[m]):
                lines.append(f'LoadFile "{PRELOAD[m]}"')
            lines.append(f'LoadModule {m}_module "{module_path(m)}"')
        if "cgid" in MODE_MODULES[self.mode]:
            lines.append(f'ScriptSock "{self.dir}/cgid.sock"')
        if "fcgid" in MODE_MODULES[self.mode]:
            lines += [f'FcgidIPCDir "{self.dir}/fcgid"',
                      f'FcgidProcessTableFile "{self.dir}/fcgid-shm"']
        return lines

    def programs(self, kind):
        """The folder of the FastCGI programs (kind "fcgi") or of the CGI
        ones ("cgi-bin"): the build's or the installed copy's, or under
        POSTERN_WRAP the stack's scripts that run them under the tool
        (valgrind)."""
        if self.s.installed:
            return self.s.installed.libexec if kind == "fcgi" else self.s.installed.cgi
        wrapped = self.s.wrapped_responders()
        key = "libexec" if kind == "fcgi" else "cgi"
        return wrapped.get(key) or os.path.join(self.builddir, kind)

    def defines(self):
        """The paths this stack sets before the Include; as installed,
        none: the files' own defaults are what make install wrote."""
        if self.s.as_installed:
            return []
        cap = [f"Define POSTERN_CONNS_PER_IP {self.conns_per_ip}"] if self.conns_per_ip else []
        return cap + [
            f'Define POSTERN_WWW "{self.www()}"',
            f'Define POSTERN_RUN "{self.run}"',
            f'Define POSTERN_LIBEXEC "{self.programs("fcgi")}"',
            f'Define POSTERN_CONF "{self.s.conf_path}"',
            f'Define POSTERN_SHARE "{self.confdir()}"',
        ]

    def confdir(self):
        """The shipped Apache files as the build wrote them from conf/*.in,
        or as installed."""
        if self.s.installed:
            return self.s.installed.conf_dir
        return os.path.join(self.builddir, "conf")

    def www(self):
        return self.s.installed.www if self.s.installed else os.path.join(self.srcdir, "www")

    def vhost(self):
        conf = self.confdir()
        if self.mode == "proxy_fcgi":
            body = self.defines() + [f'Include "{conf}/apache-postern.conf"']
        elif self.mode == "fcgid":
            body = self.defines() + [f'Include "{conf}/apache-fcgid.conf"']
        else:
            self.write_docroot()
            # What a shared host typically allows in .htaccess.
            body = [f'DocumentRoot "{self.docroot}"',
                    f'<Directory "{self.docroot}">',
                    "    Options SymLinksIfOwnerMatch",
                    "    AllowOverride FileInfo Indexes Options=ExecCGI,Indexes",
                    "    Require all granted",
                    "</Directory>"]
        return ([f"<VirtualHost 127.0.0.1:{self.s.port}>"] +
                ["    " + line for line in body] + ["</VirtualHost>"])

    def write_docroot(self):
        """The web root of a shared host: the app, cgi-bin/ with the .cgi
        programs (or the wrapper script under their names), and
        postern.htaccess as .htaccess, the paths written in."""
        if os.path.exists(self.docroot):
            shutil.rmtree(self.docroot)
        shutil.copytree(self.www(), self.docroot)
        cgi = os.path.join(self.docroot, "cgi-bin")
        os.makedirs(cgi)
        conf = self.confdir()
        # As installed both files are used as make install wrote them.
        wrapper_values = {} if self.s.as_installed else {
            "POSTERN_CONF=": self.s.conf_path, "POSTERN_LIBEXEC=": self.programs("fcgi")}
        htaccess_values = {} if self.s.as_installed else {
            "SetEnv POSTERN_CONF ": self.s.conf_path}
        wrapper = fill_file(os.path.join(conf, "postern-cgi.sh"), wrapper_values)
        for r in CGI_RESPONDERS:
            dest = os.path.join(cgi, f"postern-{r}.cgi")
            if self.mode == "htaccess-fcgid":
                with open(dest, "w") as f:
                    f.write(wrapper)
                os.chmod(dest, 0o755)
            else:
                shutil.copy2(os.path.join(self.programs("cgi-bin"), f"postern-{r}.cgi"), dest)
        with open(os.path.join(self.docroot, ".htaccess"), "w") as f:
            f.write(fill_file(os.path.join(conf, "postern.htaccess"), htaccess_values))

    # -- processes -------------------------------------------------------------

    def start(self):
        with open(self.conf, "w") as f:
            f.write("# written by tests/harness/apache.py\n")
            f.write("\n".join(self.main_conf() + self.vhost()) + "\n")
        if self.mode == "proxy_fcgi":
            self.start_responders()
        # Apache's own words before its error log is open go to stderr.
        with open(self.error_log + ".stderr", "ab") as err:
            self.proc = subprocess.Popen(
                [APACHE2, "-f", self.conf, "-DFOREGROUND"], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        end = time.monotonic() + 15 * SLOW
        while time.monotonic() < end and self.proc.poll() is None and not self.listening():
            time.sleep(0.05)
        if self.proc.poll() is not None or not self.listening():
            raise RuntimeError("apache2 did not start:\n" + self.log_tail())

    def listening(self):
        try:
            with socket.create_connection(("127.0.0.1", self.s.port), timeout=0.5):
                return True
        except OSError:
            return False

    def start_responders(self):
        """Each responder a FastCGI server on its own socket, as the
        systemd units postern-responder@.service and postern-login.service
        run them."""
        env = dict(os.environ, POSTERN_CONF=self.s.conf_path)
        if self.s.as_installed:
            # As postern-responder@.service runs them: the installed
            # configuration, which is the programs' own default.
            env.pop("POSTERN_CONF", None)
        for r in RESPONDERS:
            sock = os.path.join(self.run, f"{r}.sock")
            log = open(os.path.join(self.s.root, f"responder-{r}.log"), "ab")
            prog = f"postern-{PROGRAM_OF.get(r, r)}"
            p = subprocess.Popen([os.path.join(self.programs("fcgi"), prog), "-s", sock,
                                  "-n", str(RESPONDER_PROCS)],
                                 env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 user=self.user, group=self.user, start_new_session=True)
            log.close()
            self.responders.append(p)
            end = time.monotonic() + 15 * SLOW
            while time.monotonic() < end and p.poll() is None and not unix_listening(sock):
                time.sleep(0.05)
            if not unix_listening(sock):
                raise RuntimeError(f"postern-{r} did not listen on {sock}")

    def stop(self):
        # SIGTERM: Apache stops its children (and mod_fcgid's) and exits.
        stop_process(self.proc, 15)
        self.proc = None
        for p in self.responders:
            stop_process(p, 10)
        self.responders = []
        # The logs stay; the web root's copies of the programs need not.
        shutil.rmtree(self.docroot, ignore_errors=True)

    def log_tail(self, n=40):
        text = ""
        for path in (self.error_log + ".stderr", self.error_log):
            try:
                with open(path, errors="replace") as f:
                    text += "".join(f.readlines()[-n:])
            except OSError:
                pass
        return text or "(no Apache error log)"


def stop_process(p, timeout):
    """SIGTERM, then after timeout seconds SIGKILL to its session."""
    if p is None or p.poll() is not None:
        return
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def fill_file(path, values):
    """The text of a shipped file with the value of each line that starts
    with one of the keys replaced, as a user edits it (stack.fill_in);
    every key must name a line."""
    with open(path) as f:
        text, found = fill_in(f.read(), values)
    if set(values) - found:
        raise RuntimeError(f"{path}: no line {sorted(set(values) - found)}")
    return text


def unix_listening(path):
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(0.5)
            s.connect(path)
            return True
    except OSError:
        return False
