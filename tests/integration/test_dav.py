#!/usr/bin/env python3
"""The address book's CardDAV relay (/api/dav/) against the real Cyrus
(its CardDAV module beside JMAP) behind a real lighttpd, then Apache
(mod_proxy_fcgi): alice finds her address book the way a CardDAV client
does (principal, home, collections), puts a card, finds it with an
addressbook-query, reads it back with its ETag, and deletes it with the
right If-Match only. Refused before the mail server is asked: a path that
could leave the DAV tree, a method CardDAV does not need, a Depth other
than 0 or 1, a body that is not XML or vCard, one over max_request, no
session, no CSRF header. Nothing of bob's is alice's to read. The mail
server gone: 502, as the JMAP relay answers."""

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

import apache  # noqa: E402
from client import Client  # noqa: E402
from stack import Stack  # noqa: E402
from tap import Tap  # noqa: E402
import demo_mail  # noqa: E402

USERS = dict(demo_mail.DEMO_USERS)
ALICE, BOB = "alice@example.test", "bob@example.test"
MAX_REQUEST = 64 * 1024
XML = {"Content-Type": "application/xml; charset=utf-8"}
PRINCIPAL = b"""<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:current-user-principal/></d:prop></d:propfind>"""
HOME = b"""<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">
<d:prop><c:addressbook-home-set/></d:prop></d:propfind>"""
BOOKS = b"""<?xml version="1.0" encoding="utf-8"?>
<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:displayname/></d:prop></d:propfind>"""
QUERY = b"""<?xml version="1.0" encoding="utf-8"?>
<c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">
<d:prop><d:getetag/><c:address-data/></d:prop></c:addressbook-query>"""
CARD = (b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:erin-1\r\nN:Example;Erin;;;\r\n"
        b"FN:Erin Example\r\nEMAIL:erin@example.test\r\nEND:VCARD\r\n")
BOBS = (b"BEGIN:VCARD\r\nVERSION:3.0\r\nUID:bobs-1\r\nN:Friend;Secret;;;\r\n"
        b"FN:Secret Friend\r\nEMAIL:secret-friend@example.test\r\nEND:VCARD\r\n")


def hrefs(body):
    return re.findall(rb"<(?:\w+:)?href>([^<]+)</(?:\w+:)?href>", body)


def api(href):
    """The relay's path for a DAV href the server gave (below /dav/)."""
    h = href.decode()
    return "/api/dav/" + h[len("/dav/"):] if h.startswith("/dav/") else None


class Suite:
    def __init__(self, t, stack):
        self.t, self.s = t, stack
        self.c = Client(stack.url)
        r = self.c.login(ALICE, USERS[ALICE])
        if r.status != 200:
            raise RuntimeError(f"alice could not sign in: {r}")

    def dav(self, method, path, body=None, headers=None, client=None, csrf=True):
        return (client or self.c).request(method, path, body=body, headers=headers, csrf=csrf)

    def run(self):
        t = self.t
        r = self.c.request("GET", "/api/config")
        t.eq(r.json().get("features", {}).get("contacts"), True,
             "/api/config says there is an address book")
        book = self.discover()
        if book:
            self.card(book)
        self.refusals(book or f"/api/dav/addressbooks/user/{ALICE}/Default/")
        self.unreachable(book or f"/api/dav/addressbooks/user/{ALICE}/Default/")

    def unreachable(self, book):
        """The mail server gone (last: the stack's Cyrus is stopped): 502
        in JSON, as the JMAP relay answers."""
        self.s.cyrus.stop()
        r = self.dav("PROPFIND", book, BOOKS, {**XML, "Depth": "0"})
        self.t.ok(r.status == 502 and r.json().get("error") == "upstream_error",
                  "the mail server unreachable: 502 upstream_error", f"{r.status} {r.body[:200]!r}")

    def discover(self):
        """principal → addressbook-home-set → the collections: the book."""
        t = self.t
        r = self.dav("PROPFIND", "/api/dav/", PRINCIPAL, {**XML, "Depth": "0"})
        t.ok(r.status == 207 and b"principals" in r.body,
             "PROPFIND of the DAV root: 207, the current user's principal",
             f"{r.status} {r.body[:300]!r}")
        t.ok((r.header("Content-Type") or "").startswith(("application/xml", "text/xml")),
             "the answer is XML", r.header("Content-Type"))
        t.eq(r.header("X-Content-Type-Options"), "nosniff", "with the API's security headers")
        principal = next((api(h) for h in hrefs(r.body) if b"principals" in h), None)
        r = self.dav("PROPFIND", principal or "/api/dav/", HOME, {**XML, "Depth": "0"})
        home = next((api(h) for h in hrefs(r.body) if b"addressbooks" in h), None)
        t.ok(r.status == 207 and home, "the principal's addressbook-home-set",
             f"{r.status} {r.body[:300]!r}")
        if not home:
            return None
        r = self.dav("PROPFIND", home, BOOKS, {**XML, "Depth": "1"})
        books = [api(h) for h in hrefs(r.body) if api(h) and api(h) != home]
        t.ok(r.status == 207 and books, "Depth 1 on the home lists an address book",
             f"{r.status} {books} {r.body[:300]!r}")
        return books[0] if books else None

    def card(self, book):
        t = self.t
        path = book + "erin-1.vcf"
        r = self.dav("PUT", path, CARD, {"Content-Type": "text/vcard; charset=utf-8",
                                        "If-None-Match": "*"})
        t.ok(r.status in (201, 204), "PUT of a vCard: created", f"{r.status} {r.body[:200]!r}")
        r = self.dav("REPORT", book, QUERY, {**XML, "Depth": "1"})
        t.ok(r.status == 207 and b"erin@example.test" in r.body,
             "an addressbook-query finds the card's address", f"{r.status} {r.body[:300]!r}")
        r = self.dav("GET", path)
        etag = r.header("ETag")
        t.ok(r.status == 200 and b"FN:Erin Example" in r.body and etag,
             "GET of the card: the vCard, with its ETag",
             f"{r.status} {r.header('Content-Type')} {etag}")
        r = self.dav("DELETE", path, headers={"If-Match": '"not-its-etag"'})
        t.ok(r.status == 412 and r.json().get("error") == "dav_refused",
             "DELETE with another ETag: 412 dav_refused, in JSON", f"{r.status} {r.body[:200]!r}")
        r = self.dav("DELETE", path, headers={"If-Match": etag or "*"})
        t.ok(r.status in (200, 204), "DELETE with its ETag", f"{r.status}")
        r = self.dav("GET", path)
        t.eq(r.status, 404, "then the card is gone")

    def refusals(self, book):
        t = self.t
        for path, what in (("/api/dav/../jmap/session", "a .. segment"),
                           ("/api/dav/addressbooks/%2e%2e/%2e%2e/", "an encoded .."),
                           ("/api/dav//etc/", "an empty segment"),
                           ("/api/dav/a%2fb/", "an encoded slash"),
                           ("/api/dav/a\\b/", "a backslash")):
            r = self.dav("PROPFIND", path, BOOKS, {**XML, "Depth": "0"})
            # The web servers normalise these before routing (then no
            # route is there: 404), and Apache answers an encoded slash
            # itself (AllowEncodedSlashes off): refused before the mail
            # server either way; postern's own check is tested below.
            t.ok(r.status in (400, 404) and (b"%2f" in path.encode() or
                                             r.json().get("error") in ("bad_request", "not_found")),
                 f"{what} in the path: refused by the web server or postern",
                 f"{r.status} {r.body[:200]!r}")
        # Passed unchanged by both web servers: postern's own refusal.
        for path, what in (("/api/dav/%252e%252e/%252e%252e/jmap/", "a doubly encoded .."),
                           ("/api/dav/a%5cb/", "an encoded backslash")):
            r = self.dav("PROPFIND", path, BOOKS, {**XML, "Depth": "0"})
            t.ok(r.status == 400 and r.json().get("error") == "bad_request",
                 f"{what} in the path: 400 bad_request from postern", f"{r.status} {r.body[:200]!r}")
        r = self.dav("GET", book + "x.vcf", b"<x/>", XML)
        t.eq(r.status, 400, "a GET with a body: 400 (it would go out as another method)")
        r = self.dav("DELETE", book + "x.vcf", headers={"If-Match": '"' + "e" * 300 + '"'})
        t.eq(r.status, 400, "an If-Match too long to pass on: 400, never dropped")
        r = self.dav("MKCOL", book + "new/")
        t.eq(r.status, 405, "a method CardDAV reading and editing does not need: 405")
        r = self.dav("PROPFIND", book, BOOKS, {**XML, "Depth": "infinity"})
        t.eq(r.status, 400, "Depth infinity: 400")
        r = self.dav("REPORT", book, b'{"not": "xml"}', {"Content-Type": "application/json"})
        t.eq(r.status, 415, "a body that is not XML or vCard: 415")
        big = b"<x>" + b"a" * (MAX_REQUEST + 1024) + b"</x>"
        r = self.dav("REPORT", book, big, {**XML, "Depth": "1"})
        t.eq(r.status, 413, "a body over max_request: 413")
        r = self.dav("PROPFIND", book, BOOKS, {**XML, "Depth": "0"}, csrf=False)
        t.eq(r.status, 403, "without the CSRF header: 403")
        r = self.dav("PROPFIND", book, BOOKS, {**XML, "Depth": "0"}, client=Client(self.s.url))
        t.eq(r.status, 401, "without a session: 401")
        theirs = f"/api/dav/addressbooks/user/{BOB}/Default/"
        bob = Client(self.s.url)
        t.eq(bob.login(BOB, USERS[BOB]).status, 200, "bob signs in")
        r = self.dav("PUT", theirs + "bobs-1.vcf", BOBS, {"Content-Type": "text/vcard"}, client=bob)
        t.ok(r.status in (201, 204), "bob puts a card in his own book", f"{r.status}")
        r = self.dav("REPORT", theirs, QUERY, {**XML, "Depth": "1"})
        t.ok(not 200 <= r.status < 300 and b"secret-friend" not in r.body and
             r.json().get("error") in ("dav_refused", "upstream_error"),
             "bob's address book from alice's session: refused, nothing of it in the answer",
             f"{r.status} {r.body[:200]!r}")


def one_server(tap, root, label, **kind):
    stack = Stack(os.path.join(root, label), seed=False,
                  conf_extra={"max_request": str(MAX_REQUEST), "push_mode": "poll"}, **kind)
    try:
        stack.start()
    except Exception as e:
        tap.bail(f"{label}: the stack did not start: {e}")
    try:
        tap.run(f"{label}: CardDAV relay", Suite(tap.labelled(label), stack).run)
    finally:
        stack.stop()


def main():
    tap = Tap()
    apache.lighttpd_then_apache("postern-it-dav-", one_server, tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
