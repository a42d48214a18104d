#!/usr/bin/env python3
"""The demo's address books and filters, beside its mail (demo_mail.py).

seed(cyrus): for each demo user, the people of the demo corpus they know
as contacts in their address book (CardDAV PUT of vCard 3.0, one card per
person, a group in CATEGORIES), and one filter, demo-filter.sieve (as
postern's filter screen writes it: newsletters into a folder of their
own), stored and made active over ManageSieve. Only the demo (stack.py's
command line) calls it: the tests' suggestions and scripts start empty."""

import os
import urllib.request

try:
    from . import demo_mail
    from .cyrus import basic_auth
    from .managesieve import Sieve
except ImportError:
    import demo_mail
    from cyrus import basic_auth
    from managesieve import Sieve

HERE = os.path.dirname(os.path.abspath(__file__))
# Who is in whose book, and in which group.
BOOK = {
    "dave": "Friends", "erin": "Work", "frank": "Work", "hugo": "Friends",
    "gina": "Lists", "helpdesk": "Work", "hr": "Work",
}


def vcard(key):
    name, email = demo_mail.PEOPLE[key]
    first, _, last = name.partition(" ")
    return ("BEGIN:VCARD\r\nVERSION:3.0\r\n"
            f"UID:demo-{key}\r\nFN:{name}\r\nN:{last};{first};;;\r\n"
            f"EMAIL;TYPE=INTERNET:{email}\r\nCATEGORIES:{BOOK[key]}\r\nEND:VCARD\r\n")


def put_contacts(cyrus, login, password):
    book = f"{cyrus.base_url}/dav/addressbooks/user/{login}/Default/"
    for key in BOOK:
        req = urllib.request.Request(f"{book}demo-{key}.vcf", data=vcard(key).encode(), method="PUT")
        req.add_header("Authorization", basic_auth(login, password))
        req.add_header("Content-Type", "text/vcard; charset=utf-8")
        with urllib.request.urlopen(req, timeout=30) as resp:
            resp.read()


def put_filter(cyrus, login, password, script):
    s = Sieve(cyrus.sieve_port, timeout=30)
    try:
        s.response()
        for step in (lambda: s.login(login, password),
                     lambda: s.literal(b'PUTSCRIPT "postern"', script),
                     lambda: s.send(b'SETACTIVE "postern"\r\n')):
            status, text = step()
            if status != "OK":
                raise OSError(f"ManageSieve refused the demo filter: {text}")
        s.send(b"LOGOUT\r\n")
    finally:
        s.close()


def seed(cyrus):
    with open(os.path.join(HERE, "demo-filter.sieve")) as f:
        script = f.read()
    for login, password in demo_mail.DEMO_USERS:
        put_contacts(cyrus, login, password)
        put_filter(cyrus, login, password, script)
