"""A ManageSieve (RFC 5804) client just big enough for the tests and the
demo: plain on loopback, AUTHENTICATE "PLAIN", commands with a literal.
postern's own client is shared/msieve.c; this one only drives Cyrus."""

import base64
import re
import socket


class Sieve:
    def __init__(self, port, host="127.0.0.1", timeout=10):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.f = self.sock.makefile("rb")

    def response(self):
        """The lines up to OK/NO/BYE (literals read whole): (status, text)."""
        lines = []
        while True:
            line = self.f.readline()
            if not line:
                raise EOFError("the server closed the connection")
            while (m := re.search(rb"\{(\d+)\+?\}\r\n$", line)) is not None:
                line += self.f.read(int(m.group(1)))
                line += self.f.readline()
            lines.append(line.decode(errors="replace"))
            word = line.split(b" ", 1)[0].rstrip(b"\r\n").upper()
            if word in (b"OK", b"NO", b"BYE"):
                return word.decode(), "".join(lines)

    def send(self, data):
        self.sock.sendall(data)
        return self.response()

    def login(self, user, password):
        """AUTHENTICATE "PLAIN" (after the greeting was read)."""
        token = base64.b64encode(b"\0" + user.encode() + b"\0" + password.encode())
        return self.send(b'AUTHENTICATE "PLAIN" "' + token + b'"\r\n')

    def literal(self, command, script):
        body = script.encode()
        return self.send(command + b" {%d+}\r\n" % len(body) + body + b"\r\n")

    def close(self):
        self.sock.close()
