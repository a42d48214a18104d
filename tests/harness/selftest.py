#!/usr/bin/env python3
"""End-to-end check of the harness itself (run as root, takes ~10 s):

two instances started in parallel through the CLI, each serving the JMAP
session, mailboxes with roles, a Xapian text query and EmailSubmission
(alice -> bob through the sink into bob's INBOX, alice -> alice, and an
unknown local recipient refused); then both stopped and no process left.

    python3 tests/harness/selftest.py
"""

import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cyrus  # noqa: E402

USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail",
         "urn:ietf:params:jmap:submission"]
ALICE = ("alice@example.test", "alice-demo-pass")
BOB = ("bob@example.test", "bob-demo-pass")


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print(f"  ok: {what}")


def cli(*args):
    proc = subprocess.run([sys.executable, os.path.join(HERE, "cyrus.py"), *args],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"cyrus.py {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def call(c, user, *calls):
    return c.jmap(user[0], user[1], [list(x) for x in calls], using=USING)


def mailbox_ids(c, user):
    resp = call(c, user, ("Mailbox/get", {"accountId": user[0]}, "0"))
    return {m["role"]: m["id"] for m in resp[0][1]["list"] if m["role"]}


def submit(c, to, subject):
    """Create a draft in alice's Drafts and submit it; returns the response."""
    boxes = mailbox_ids(c, ALICE)
    identity = call(c, ALICE, ("Identity/get", {"accountId": ALICE[0]}, "0"))[0][1]["list"][0]
    email = {"mailboxIds": {boxes["drafts"]: True}, "keywords": {"$draft": True, "$seen": True},
             "from": [{"email": ALICE[0]}], "to": [{"email": to}], "subject": subject,
             "bodyValues": {"b": {"value": f"{subject}: hello from the selftest"}},
             "textBody": [{"partId": "b", "type": "text/plain"}]}
    update = {"#s": {f"mailboxIds/{boxes['drafts']}": None,
                     f"mailboxIds/{boxes['sent']}": True, "keywords/$draft": None}}
    return call(c, ALICE,
                ("Email/set", {"accountId": ALICE[0], "create": {"d": email}}, "0"),
                ("EmailSubmission/set", {"accountId": ALICE[0], "onSuccessUpdateEmail": update,
                                         "create": {"s": {"identityId": identity["id"],
                                                          "emailId": "#d"}}}, "1"))


def inbox_subjects(c, user):
    boxes = mailbox_ids(c, user)
    resp = call(c, user,
                ("Email/query", {"accountId": user[0], "filter": {"inMailbox": boxes["inbox"]}}, "0"),
                ("Email/get", {"accountId": user[0], "properties": ["subject"],
                               "#ids": {"resultOf": "0", "name": "Email/query", "path": "/ids"}}, "1"))
    return {e["subject"] for e in resp[1][1]["list"]}


def eventually(predicate, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def exercise(root):
    info = json.loads(cli("start", "--root", root))
    print(f"{root}: started in {info['start_seconds']} s on http {info['http_port']}, "
          f"smtp {info['smtp_port']}")
    c = cyrus.Cyrus.load(root)
    session = c.session(*ALICE)
    check(session["apiUrl"] == "/jmap/" and ALICE[0] in session["accounts"], "session JSON")
    roles = set(mailbox_ids(c, ALICE))
    check(roles == {"inbox", "drafts", "sent", "trash", "junk", "archive"}, f"roles {sorted(roles)}")
    found = call(c, ALICE, ("Email/query", {"accountId": ALICE[0], "filter": {"text": "hello"}}, "0"))
    check(found[0][0] == "Email/query" and found[0][1]["total"] > 3, "Email/query text filter")

    resp = submit(c, BOB[0], "selftest to bob")
    check(resp[1][0] == "EmailSubmission/set" and "s" in resp[1][1]["created"], "submission to bob")
    check(eventually(lambda: "selftest to bob" in inbox_subjects(c, BOB)), "arrived in bob's INBOX")
    resp = submit(c, ALICE[0], "selftest to self")
    check("s" in resp[1][1]["created"], "submission to self (no deadlock)")
    check(eventually(lambda: "selftest to self" in inbox_subjects(c, ALICE)), "arrived in alice's INBOX")
    resp = submit(c, "nobody@example.test", "selftest to nobody")
    check(resp[1][1].get("notCreated"), f"unknown local user refused: {resp[1][1].get('notCreated')}")
    return info


def leftovers(infos):
    """Processes of the instances still alive (zombies excluded)."""
    out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    marks = [i["tree"] for i in infos] + [os.path.join(i["root"], "sink") for i in infos]
    return [line for line in out.splitlines()
            if any(m in line for m in marks) and " Z" not in line]


def main():
    base = tempfile.mkdtemp(prefix="postern-harness-selftest-")
    roots = [os.path.join(base, "one"), os.path.join(base, "two")]
    infos = []
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            infos = list(pool.map(exercise, roots))
        check(infos[0]["http_port"] != infos[1]["http_port"], "two instances side by side")
    finally:
        for root in roots:
            if os.path.exists(os.path.join(root, "cyrus.json")):
                cli("stop", "--root", root)
    check(not leftovers(infos), "no Cyrus or sink process left after stop")
    check(all(not os.path.exists(i["tree"]) for i in infos), "trees under /tmp removed")
    shutil.rmtree(base)
    print("selftest passed")


if __name__ == "__main__":
    main()
