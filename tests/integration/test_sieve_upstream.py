#!/usr/bin/env python3
"""The test harness's Cyrus speaks ManageSieve (RFC 5804) beside JMAP, as
../shared/docs/upstreams.md says of Cyrus 3.6: timsieved on loopback, its
capabilities (SASL PLAIN, the vacation, fileinto and mailbox
extensions), sign-in with the same credentials as JMAP, CHECKSCRIPT
naming the line of an error, one script stored and made active, and a
mail it matches filed into the folder it creates; Cyrus's syslog caught
by the harness (a misfiled delivery says why only there); the demo's
filter and address book (demo_book.py) stored. What
postern's filters and vacation will be built on; checked here so that a
change of the harness or of Debian's Cyrus shows at once."""

import base64
import os
import re
import shutil
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import cyrus  # noqa: E402
from managesieve import Sieve  # noqa: E402
import demo_book  # noqa: E402
import demo_mail  # noqa: E402
from tap import Tap  # noqa: E402

USER, PASSWORD = "alice@example.test", "alice-demo-pass"
NOWHERE = (b"From: carol@example.test\r\nTo: alice@example.test\r\n"
           b"Subject: nowhere to go\r\nMessage-ID: <sieve-2@example.test>\r\n\r\nhi\r\n")
INVOICE = (b"From: carol@example.test\r\nTo: alice@example.test\r\n"
           b"Subject: Your invoice\r\nMessage-ID: <sieve-1@example.test>\r\n\r\nhi\r\n")


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
        # A fileinto to a missing folder without :create: LMTP still says
        # 250 and the mail lands in INBOX; only Cyrus's log says why.
        status, text = s.literal(b'PUTSCRIPT "postern"', 'require "fileinto";\n'
                                 'if header :contains "subject" "nowhere" { fileinto "Nowhere"; }\n')
        t.ok(status == "OK", "a script filing into a missing folder is stored", text)
        c.deliver(USER, NOWHERE)
        log = ""
        for _ in range(50):
            log = c.syslog_text()
            if "Nowhere" in log:
                break
            time.sleep(0.1)
        t.ok("Nowhere" in log, "the harness catches Cyrus's syslog: why a delivery misfiled",
             log[-2000:] or "(empty)")
        s.send(b"LOGOUT\r\n")
        s.close()
        s = None
        # The demo's address books and filter (scripts/demo): every demo
        # user gets the cards and the active script.
        for login, password in demo_mail.DEMO_USERS:
            c.add_user(login, password)
        demo_book.seed(c)
        s = Sieve(c.sieve_port)
        s.response()
        token = base64.b64encode(b"\0bob@example.test\0bob-demo-pass")
        s.send(b'AUTHENTICATE "PLAIN" "' + token + b'"\r\n')
        status, text = s.send(b"GETSCRIPT \"postern\"\r\n")
        with open(os.path.join(os.path.dirname(HERE), "harness", "demo-filter.sieve")) as f:
            t.ok(status == "OK" and f.read() in text.replace("\r\n", "\n"),
                 "the demo's filter is stored for bob", text)
        req = urllib.request.Request(f"{c.base_url}/dav/addressbooks/user/bob@example.test/Default/",
                                     method="PROPFIND", headers={"Depth": "1", "Authorization":
                                     cyrus.basic_auth("bob@example.test", "bob-demo-pass")})
        with urllib.request.urlopen(req, timeout=30) as r:
            cards = r.read().decode().count(".vcf</")
        t.ok(cards == len(demo_book.BOOK), f"the demo's address book has {len(demo_book.BOOK)} cards", cards)
    finally:
        if s:
            s.close()
        c.stop()
        shutil.rmtree(root, ignore_errors=True)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
