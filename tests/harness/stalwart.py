"""The Stalwart-behaviour test server (tests/stalwart/server.py) as a
process on a free loopback port, for the tests that need a server that
pushes: its JMAP at url, its /_control/ routes through control()."""

import json
import os
import subprocess
import sys
import urllib.request

SERVER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "stalwart", "server.py")


class StalwartTest:
    def __init__(self, root, users=None, args=()):
        """users: {login: password} (else the server's own alice and bob);
        args: more of server.py's options. Its log goes to root."""
        cmd = [sys.executable, SERVER, "--port", "0", *args]
        if users:
            cmd += ["--users", ",".join(f"{u}:{p}" for u, p in users.items())]
        os.makedirs(root, exist_ok=True)
        self.log = open(os.path.join(root, "stalwart.log"), "ab")
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log,
                                  stdin=subprocess.DEVNULL)
        line = self.p.stdout.readline()
        if not line:
            self.stop()
            raise RuntimeError("the Stalwart test server did not start")
        info = json.loads(line)
        self.port = info["port"]
        self.accounts = info["accounts"]
        self.url = f"http://127.0.0.1:{self.port}"

    def control(self, name, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.url}/_control/{name}", data=data,
                                     method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()
