"""The web servers the suite puts in front: postern under lighttpd (the
shipped conf/, with the number of responder processes as asked), postern
under a private Apache (mod_proxy_fcgi to responders on Unix sockets), the
floors (each web server's own reverse proxy to the stand-in) and plain
CGI under both. Everything listens on 127.0.0.1 and lives in a temporary
folder; each start_* returns a Front that stop() takes down."""

import os
import pwd
import re
import shutil
import socket
import subprocess
import time

from common import TOP, fb, stop_group, tree_ticks, ticks

LIGHTTPD = shutil.which("lighttpd") or "/usr/sbin/lighttpd"
APACHE = shutil.which("apache2") or "/usr/sbin/apache2"
APACHE_MODS = "/usr/lib/apache2/modules"


class Front:
    def __init__(self, name, proc, port, stop=None):
        self.name, self.proc, self.port = name, proc, port
        self.pid = proc.pid
        self.url = f"http://127.0.0.1:{port}"
        self.pool = []          # responder processes we started
        self._stop = stop

    def responders(self, comm):
        """Responders this front runs: ours, or lighttpd's children."""
        if self.pool:
            return [p.pid for p in self.pool if comm in p.args[0]]
        return [pid for pid, c in fb.children(self.pid) if c == comm]

    def cpu_groups(self, app=None):
        """Meter groups: the web server (with its workers and what it
        reaped: CGI children), and the responders named app."""
        comm = "apache2" if "apache" in self.name else "lighttpd"
        g = {"front": lambda: tree_ticks(self.pid, comm)}
        if app:
            pids = self.responders(app)
            g["app"] = lambda: sum(ticks(p) for p in pids)
        return g

    def stop(self):
        kids = [pid for pid, _ in fb.children(self.pid)]
        stop_group(self.proc)
        for p in self.pool:
            stop_group(p)
        fb.reap_pids(kids)
        if self._stop:
            self._stop()


def wait_port(port, proc, what, logpath=None, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    tail = ""
    if logpath and os.path.exists(logpath):
        with open(logpath, errors="replace") as f:
            tail = "".join(f.readlines()[-20:])
    raise RuntimeError(f"{what} did not start on 127.0.0.1:{port}\n{tail}")


# -- postern's state ---------------------------------------------------------------

def site(root, upstream, conf_extra=None):
    """A postern.conf, state folder and run/ folder (the harness's Stack,
    used only to write them): returns the Stack."""
    from stack import Stack
    extra = dict(fb.CONF_EXTRA)
    extra.update(conf_extra or {})
    st = Stack(root, upstream=upstream, conf_extra=extra)
    os.makedirs(os.path.join(st.root, "run"), exist_ok=True)
    st.write_conf(upstream)
    return st


# -- lighttpd -------------------------------------------------------------------------

def set_procs(text, sock, n):
    """conf text with max-procs of the fastcgi.server block for sock set
    to n."""
    parts = re.split(r"(?=fastcgi\.server)", text)
    for i, p in enumerate(parts):
        if f'/{sock}"' in p:
            parts[i] = re.sub(r'"max-procs" => \d+', f'"max-procs" => {n}', p, count=1)
    return "".join(parts)


def start_lighttpd(st, mode="fcgi", jmap=2, auth=1, www=None):
    """postern under lighttpd with the shipped configuration (conf/),
    with jmap and auth responder processes (FastCGI), or as CGI."""
    values = st.lighttpd_values()
    if www:
        values["var.postern_www"] = values["server.document-root"] = f'"{www}"'
    conf = st.lighttpd_conf(values)
    with open(os.path.join(os.path.dirname(conf), "lighttpd-postern.conf")) as f:
        text = f.read()
    with open(os.path.join(os.path.dirname(conf), "lighttpd-postern.conf"), "w") as f:
        f.write(set_procs(set_procs(text, "jmap.sock", jmap), "auth.sock", auth))
    if mode != st.mode:
        conf = os.path.join(os.path.dirname(conf),
                            "lighttpd.conf" if mode == "fcgi" else "lighttpd-cgi.conf")
    err = open(st.error_log, "ab")
    p = subprocess.Popen([LIGHTTPD, "-D", "-f", conf], stdin=subprocess.DEVNULL,
                         stdout=err, stderr=err, start_new_session=True)
    err.close()
    wait_port(st.port, p, "lighttpd (postern)", st.error_log)
    return Front(f"lighttpd-{mode}", p, st.port)


FLOOR_STATIC = """
server.modules = ( "mod_indexfile", "mod_staticfile" )
server.bind = "127.0.0.1"
server.port = %(port)d
server.document-root = "%(www)s"
server.errorlog = "%(log)s"
server.tag = ""
mimetype.assign = ( ".html" => "text/html", ".js" => "text/javascript",
  ".css" => "text/css", ".json" => "application/json", ".txt" => "text/plain" )
"""


def start_lighttpd_floor(tmp, upstream_port):
    """lighttpd's own mod_proxy to the stand-in (bench/foundation.py's
    floor); also serves a 2 KB static.txt."""
    p, port = fb.start_floor(tmp, upstream_port, LIGHTTPD, fb.Procs())
    return Front("lighttpd-floor", p, port)


def start_lighttpd_static(tmp, www):
    """A plain lighttpd serving www as files: no compression, no headers."""
    port = fb.free_port()
    conf = os.path.join(tmp, "static-floor.conf")
    with open(conf, "w") as f:
        f.write(FLOOR_STATIC % {"port": port, "www": www,
                                "log": os.path.join(tmp, "static-floor.log")})
    p = subprocess.Popen([LIGHTTPD, "-D", "-f", conf], stdin=subprocess.DEVNULL,
                         start_new_session=True)
    wait_port(port, p, "lighttpd (plain files)")
    return Front("lighttpd-static", p, port)


# -- responders on Unix sockets ------------------------------------------------------

def start_pool(st, prog, sock, n, builddir):
    """n processes of a FastCGI responder sharing one listening Unix socket
    (handed over as fd 0, as a web server or spawn-fcgi does; -s PATH
    serves one process alone). The socket is open to the web server's
    user (Apache's workers run as www-data)."""
    path = os.path.join(st.root, "run", sock)
    if os.path.exists(path):
        os.unlink(path)
    ls = socket.socket(socket.AF_UNIX)
    ls.bind(path)
    ls.listen(128)
    os.chmod(path, 0o666)
    env = dict(os.environ, POSTERN_CONF=st.conf_path)
    out = []
    with open(os.path.join(st.root, "stderr.log"), "ab") as err:
        for _ in range(n):
            out.append(subprocess.Popen([os.path.join(builddir, "fcgi", prog)], env=env,
                                        stdin=ls.fileno(), stdout=err, stderr=err,
                                        start_new_session=True))
    ls.close()
    return out


# -- Apache ------------------------------------------------------------------------------

APACHE_CONF = """# written by bench/suite/fronts.py: a private Apache on loopback
ServerRoot "%(root)s"
Listen 127.0.0.1:%(port)d
ServerName 127.0.0.1
PidFile "%(root)s/httpd.pid"
DefaultRuntimeDir "%(root)s"
ErrorLog "%(root)s/error.log"
LogLevel warn
TypesConfig /etc/mime.types
%(user)s
LoadModule mpm_event_module %(mods)s/mod_mpm_event.so
LoadModule authz_core_module %(mods)s/mod_authz_core.so
LoadModule mime_module %(mods)s/mod_mime.so
LoadModule env_module %(mods)s/mod_env.so
LoadModule alias_module %(mods)s/mod_alias.so
LoadModule proxy_module %(mods)s/mod_proxy.so
LoadModule proxy_http_module %(mods)s/mod_proxy_http.so
LoadModule proxy_fcgi_module %(mods)s/mod_proxy_fcgi.so
LoadModule cgid_module %(mods)s/mod_cgid.so
# Enough threads for 200 busy connections, all started at once.
ServerLimit 4
StartServers 4
ThreadsPerChild 64
MaxRequestWorkers 256
MinSpareThreads 64
MaxSpareThreads 256
MaxConnectionsPerChild 0
KeepAlive On
MaxKeepAliveRequests 0
Timeout 30
ScriptSock "%(root)s/cgid.sock"
DocumentRoot "%(root)s/www"
<Directory />
  Require all granted
</Directory>
%(body)s
"""


def start_apache(root, body):
    """A private Apache (event MPM) with body in its configuration."""
    os.makedirs(os.path.join(root, "www"), exist_ok=True)
    with open(os.path.join(root, "www", "static.txt"), "w") as f:
        f.write(("postern " * 256)[:2048])
    # Its workers run as www-data when started by root: they must reach
    # the sockets and files under root.
    os.chmod(root, 0o755)
    d = os.path.dirname(root)
    os.chmod(d, os.stat(d).st_mode | 0o755)
    port = fb.free_port()
    user = "User www-data\nGroup www-data" if os.geteuid() == 0 else ""
    conf = os.path.join(root, "httpd.conf")
    with open(conf, "w") as f:
        f.write(APACHE_CONF % {"root": root, "port": port, "user": user,
                               "mods": APACHE_MODS, "body": body})
    p = subprocess.Popen([APACHE, "-f", conf, "-DFOREGROUND"], stdin=subprocess.DEVNULL,
                         start_new_session=True,
                         env=dict(os.environ, APACHE_RUN_DIR=root, APACHE_LOCK_DIR=root))
    wait_port(port, p, "apache2", os.path.join(root, "error.log"))
    return p, port


def start_apache_postern(st, builddir, jmap=2, auth=1):
    """postern under Apache: mod_proxy_fcgi to responder pools."""
    run = os.path.join(st.root, "run")
    pool = (start_pool(st, "postern-jmap", "jmap.sock", jmap, builddir) +
            start_pool(st, "postern-auth", "auth.sock", auth, builddir))
    os.chmod(run, 0o755)
    body = (f'ProxyPass /api/jmap "unix:{run}/jmap.sock|fcgi://postern-jmap/api/jmap"\n'
            f'ProxyPass /api/auth/ "unix:{run}/auth.sock|fcgi://postern-auth/api/auth/"\n')
    try:
        p, port = start_apache(os.path.join(st.root, "apache"), body)
    except BaseException:
        for q in pool:
            stop_group(q)
        raise
    f = Front("apache-fcgi", p, port)
    f.pool = pool
    return f


def start_apache_floor(tmp, upstream_port):
    """Apache's own mod_proxy_http to the stand-in."""
    body = f"ProxyPass /jmap/ http://127.0.0.1:{upstream_port}/jmap/\n"
    p, port = start_apache(os.path.join(tmp, "apache-floor"), body)
    return Front("apache-floor", p, port)


def start_apache_cgi(st, builddir):
    """postern as plain CGI under Apache (mod_cgid). The CGI programs run
    as Apache's user: they get a copy of the programs and a state folder
    of their own."""
    cgi = os.path.join(st.root, "cgi-bin")
    os.makedirs(cgi, exist_ok=True)
    for prog in ("postern-jmap.cgi", "postern-auth.cgi"):
        shutil.copy(os.path.join(builddir, "cgi-bin", prog), cgi)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("www-data")
        for dirpath, dirs, files in os.walk(st.root):
            for name in [dirpath] + [os.path.join(dirpath, x) for x in files]:
                os.chown(name, pw.pw_uid, pw.pw_gid)
    body = (f'SetEnv POSTERN_CONF "{st.conf_path}"\n'
            f'ScriptAlias /api/jmap "{cgi}/postern-jmap.cgi"\n'
            f'ScriptAlias /api/auth/ "{cgi}/postern-auth.cgi/"\n')
    p, port = start_apache(os.path.join(st.root, "apache"), body)
    return Front("apache-cgi", p, port)
