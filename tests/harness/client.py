"""An HTTP client for the tests, like a browser tab of the app: keeps the
session cookie, sends the CSRF header on writes, and returns status,
headers and body without raising on errors."""

import gzip
import http.client
import json


class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # list of (name, value)
        self.body = body

    def header(self, name):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def header_all(self, name):
        return [v for k, v in self.headers if k.lower() == name.lower()]

    def json(self):
        body = self.body
        if self.header("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return json.loads(body)

    def __repr__(self):
        return f"<{self.status} {self.body[:300]!r}>"


class Client:
    def __init__(self, base_url, timeout=60, source=None):
        assert base_url.startswith("http://127.0.0.1:")
        host, port = base_url[len("http://"):].split(":")
        self.host, self.port = host, int(port)
        self.timeout = timeout
        self.cookie = None
        # The loopback address to connect from (another client, as the web
        # server sees it), or the kernel's choice.
        self.source = (source, 0) if source else None

    def request(self, method, path, body=None, headers=None, csrf=True):
        h = {"Accept": "application/json"}
        if self.cookie:
            h["Cookie"] = f"postern_session={self.cookie}"
        if csrf and method not in ("GET", "HEAD"):
            h["X-Postern-CSRF"] = "1"
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout,
                                          source_address=self.source)
        try:
            conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            resp = Response(r.status, r.getheaders(), r.read())
        finally:
            conn.close()
        self.take_cookie(resp)
        return resp

    def take_cookie(self, resp):
        for v in resp.header_all("Set-Cookie"):
            name, _, rest = v.partition("=")
            if name.strip() != "postern_session":
                continue
            value = rest.split(";", 1)[0]
            self.cookie = value or None

    @classmethod
    def signed_in(cls, base_url, username, password, **kw):
        """A client signed in as username; raises when the sign-in fails."""
        c = cls(base_url, **kw)
        r = c.login(username, password)
        if r.status != 200:
            raise RuntimeError(f"sign-in of {username} failed: {r}")
        c.account = r.json()["primaryAccounts"]["urn:ietf:params:jmap:mail"]
        return c

    def login(self, username, password, remember=False):
        return self.request("POST", "/api/auth/login",
                            {"username": username, "password": password,
                             "remember": remember})

    def jmap(self, calls, using=None, headers=None):
        using = using or ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail",
                          "urn:ietf:params:jmap:submission"]
        return self.request("POST", "/api/jmap", {"using": using, "methodCalls": calls},
                            headers=headers)
