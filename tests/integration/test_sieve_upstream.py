#!/usr/bin/env python3
"""The test harness's Cyrus speaks ManageSieve (RFC 5804) beside JMAP, as
../shared/docs/upstreams.md says of Cyrus 3.6: timsieved on loopback, its
capabilities (SASL PLAIN, the vacation, fileinto and mailbox
extensions), sign-in with the same credentials as JMAP, CHECKSCRIPT
naming the line of an error, one script stored and made active, and a
mail it matches filed into the folder it creates. What
postern's filters and vacation will be built on; checked here so that a
change of the harness or of Debian's Cyrus shows at once."""

import base64
import os
import re
import shutil
import socket
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import cyrus  # noqa: E402
from tap import Tap  # noqa: E402

USER, PASSWORD = "alice@example.test", "alice-demo-pass"
INVOICE = (b"From: carol@example.test\r\nTo: alice@example.test\r\n"
           b"Subject: Your invoice\r\nMessage-ID: <sieve-1@example.test>\r\n\r\nhi\r\n")


class Sieve:
    """A ManageSieve client just big enough for these checks."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
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
            lines.append(line.decode())
            word = line.split(b" ", 1)[0].rstrip(b"\r\n").upper()
            if word in (b"OK", b"NO", b"BYE"):
                return word.decode(), "".join(lines)

    def send(self, data):
        self.sock.sendall(data)
        return self.response()

    def literal(self, command, script):
        body = script.encode()
        return self.send(command + b" {%d+}\r\n" % len(body) + body + b"\r\n")

    def close(self):
        self.sock.close()


def main():
    t = Tap()
    root = tempfile.mkdtemp(prefix="postern-sieve-")
    c = cyrus.Cyrus(root, cyrus.free_port(), cyrus.free_port())
    s = None
    try:
        c.start()
        c.add_user(USER, PASSWORD)          # with her mailboxes: she can sign in
        s = Sieve(c.sieve_port)
        status, greeting = s.response()
        t.ok(status == "OK" and '"IMPLEMENTATION" "Cyrus timsieved' in greeting,
             "timsieved answers on loopback", greeting)
        sieve = re.search(r'"SIEVE" "([^"]*)"', greeting)
        exts = set(sieve.group(1).split()) if sieve else set()
        t.ok({"vacation", "fileinto", "mailbox", "imap4flags", "copy"} <= exts,
             "vacation, fileinto, mailbox, imap4flags, copy offered", sorted(exts))
        t.ok(re.search(r'"SASL" "[^"]*PLAIN', greeting) is not None, "SASL PLAIN offered", greeting)
        token = base64.b64encode(b"\0" + USER.encode() + b"\0" + PASSWORD.encode())
        status, text = s.send(b'AUTHENTICATE "PLAIN" "' + token + b'"\r\n')
        t.ok(status == "OK", "signed in with the JMAP credentials", text)
        status, text = s.literal(b"CHECKSCRIPT", 'require "fileinto";\n\nfileinto "Invoices"\n')
        t.ok(status == "NO" and re.search(r"line \d+", text) is not None,
             "CHECKSCRIPT names the line of an error", text)
        script = 'require ["fileinto", "mailbox"];\nif header :contains "subject" "invoice" ' \
                 '{ fileinto :create "Invoices"; }\n'
        status, text = s.literal(b'PUTSCRIPT "postern"', script)
        t.ok(status == "OK", "a script is stored", text)
        status, text = s.send(b'SETACTIVE "postern"\r\n')
        t.ok(status == "OK", "and made active", text)
        c.deliver(USER, INVOICE)
        boxes = c.jmap(USER, PASSWORD, [["Mailbox/get", {"accountId": USER, "ids": None}, "0"]])
        filed = [m for m in boxes[0][1].get("list", []) if m.get("name") == "Invoices"]
        t.ok(filed and filed[0].get("totalEmails") == 1,
             "a mail the script matches is filed into the folder it made", boxes)
        status, text = s.send(b"LISTSCRIPTS\r\n")
        t.ok(status == "OK" and '"postern" ACTIVE' in text, "LISTSCRIPTS shows it active", text)
        status, text = s.send(b'GETSCRIPT "postern"\r\n')
        t.ok(status == "OK" and "fileinto :create" in text, "GETSCRIPT gives it back", text)
        s.send(b"LOGOUT\r\n")
    finally:
        if s:
            s.close()
        c.stop()
        shutil.rmtree(root, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
