#!/usr/bin/env python3
"""A JMAP test server that behaves like Stalwart where postern's tests need it.

Python 3.11 standard library only. It reproduces the facts in the project's
docs/upstreams.md ("Stalwart — facts for the test server to reproduce"):
absolute https URLs in the session, Stalwart's EventSource frames, RFC 8620
PushSubscription with delayed verification and throttled, retried
deliveries, and Stalwart's limits and problem-JSON errors. Everything else
(mail storage, search, submission) is a small in-memory model, just enough to
produce real state changes.

CLI::

    python3 tests/stalwart/server.py --port N [--public-origin https://mail.example.test]
        [--verify-delay 60] [--verify-interval SECONDS] [--coalesce 1.0]
        [--retry-delay 60] [--retries 3] [--min-ping 30] [--allow-loopback-push]
        [--push-route https://public.origin=http://127.0.0.1:PORT ...]
        [--users alice@example.test:pw,bob@example.test:pw]
        [--account-rate 1000] [--anon-rate 100] [--fail-ban 100]

It binds 127.0.0.1 only (port 0 picks a free one) and prints one JSON line
when ready: {"port": N, "control": "http://127.0.0.1:N/_control/",
"session": "http://127.0.0.1:N/jmap/session", "accounts": {login: accountId}}.
SIGINT/SIGTERM stop it.

Library::

    s = StalwartServer(0, verify_delay=1, coalesce=0.2, allow_loopback_push=True)
    s.start()            # serves from a thread; s.port is the bound port
    s.deliver("alice@example.test", subject="hi")
    s.stats()
    s.stop()

Control API (plain JSON on the same port, no authentication, never rate
limited, never counted in the statistics; for tests only):

    GET  /_control/stats       {"tcpConnections": n,          open TCP connections (this one too)
                                "eventSource": {acct: n},     open EventSource streams
                                "inFlight": {acct: n},        API requests being served
                                "requests": {acct: n},        authenticated requests so far
                                "subscriptions": {acct: n},
                                "push": {subId: {"account", "url", "verified", "exists",
                                         "sent", "failed", "dropped", "attempts"}},
                                "verifications": {acct: {"sent", "failed", "suppressed"}},
                                "bannedIps": [...], "accounts": {login: acct}}
    GET  /_control/push-log    every outgoing push POST: [{"t", "url", "target",
                                "kind": "PushVerification"|"StateChange",
                                "subscription", "body", "status", "error"}]
    POST /_control/deliver     {"account": login-or-id, "subject": "...",
                                "from": "...", "mailbox": role-or-id (default inbox)}
                               -> {"emailId", "states": {type: state}}
                               creates an email; bumps Email, Mailbox, Thread
                               and EmailDelivery.
    POST /_control/password    {"account": login, "password": "..."}
                               changes the account's password; streams already
                               open stay open.
    POST /_control/config      {"apiDelay": s, "verifyDelay": s, "verifyInterval": s,
                                "coalesce": s, "retryDelay": s, "retries": n,
                                "minPing": s, "accountRate": n, "anonRate": n,
                                "failBan": n, "eventSourceStatus": n} -> the current values.
                               apiDelay makes every POST /jmap/ sleep (concurrency tests);
                               eventSourceStatus, when not 0, answers every EventSource
                               request with that status (a server whose stream fails).
    POST /_control/drop-streams closes every open EventSource stream.
    POST /_control/reset       back to the start: mail, subscriptions, timers,
                               counters, bans, push log; closes EventSource
                               streams; config knobs go back to the CLI values.

Interpretations (see README.md): a banned IP gets 429 problem JSON without
Retry-After; EventSource streams do not count toward maxConcurrentRequests;
PushSubscription/get always returns "url": null and "keys": null; a quota
overflow is the SetError "overQuota"; "retried 3 times" means 1 + 3 attempts;
outgoing push POSTs only ever go to 127.0.0.1 or ::1.
"""

import argparse
import base64
import hashlib
import heapq
import http.client
import ipaddress
import itertools
import json
import math
import secrets
import select
import signal
import socket
import ssl
import string
import sys
import threading
import time
import urllib.parse
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CORE = "urn:ietf:params:jmap:core"
MAIL = "urn:ietf:params:jmap:mail"
SUBMISSION = "urn:ietf:params:jmap:submission"
QUOTA = "urn:ietf:params:jmap:quota"
CAPABILITIES = (CORE, MAIL, SUBMISSION, QUOTA)
# RFC 9425: one Quota per account, its mail in octets. The limit is the
# test server's own choice; Stalwart's comes from its configuration.
QUOTA_OCTETS = 100 * 1024 * 1024

LIMITS = {
    "maxSizeUpload": 50000000,
    "maxConcurrentUpload": 4,
    "maxSizeRequest": 10000000,
    "maxConcurrentRequests": 4,
    "maxCallsInRequest": 16,
    "maxObjectsInGet": 500,
    "maxObjectsInSet": 500,
    "collationAlgorithms": ["i;ascii-numeric", "i;ascii-casemap", "i;unicode-casemap"],
}

# Stalwart's DataType names accepted in `types` (EventSource, PushSubscription).
DATA_TYPES = ("Core", "Mailbox", "Thread", "Email", "EmailDelivery",
              "EmailSubmission", "Identity", "SearchSnippet",
              "VacationResponse", "MDN", "Quota", "SieveScript",
              "PushSubscription")
MAILBOXES = (("Inbox", "inbox"), ("Drafts", "drafts"), ("Sent", "sent"),
             ("Trash", "trash"), ("Junk", "junk"), ("Archive", "archive"))
EXPIRES_MAX = 7 * 24 * 3600
VERIFICATION_CODE_LEN = 32
MAX_SUBSCRIPTIONS = 15
PUSH_TIMEOUT = 5.0
PUSH_LOG_MAX = 10000  # /_control/push-log keeps the newest entries
DEFAULT_USERS = "alice@example.test:alice-demo-pass,bob@example.test:bob-demo-pass"
FAIL_WINDOW = 24 * 3600
RATE_WINDOW = 60.0


def utc_date(ts):
    return datetime.fromtimestamp(int(ts), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_utc_date(s):
    """RFC 3339 UTCDate ("...Z") -> epoch seconds, or None."""
    if not isinstance(s, str) or not s.endswith("Z"):
        return None
    try:
        return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def account_id_for(login):
    """Opaque, stable, short: never the login itself (Cyrus uses the address)."""
    digest = hashlib.sha256(login.encode()).digest()
    return "a" + base64.b32encode(digest)[:7].decode().lower()


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


class Problem(Exception):
    """An RFC 7807 problem answered before (or instead of) the method calls."""

    def __init__(self, status, title, detail, type_="about:blank", headers=None, **extra):
        super().__init__(detail)
        self.status, self.headers = status, headers or {}
        self.body = {"type": type_, "status": status, "title": title, "detail": detail}
        self.body.update(extra)


def limit_problem(limit, detail):
    return Problem(400, "Request limit", detail,
                   "urn:ietf:params:jmap:error:limit", limit=limit)


class MethodError(Exception):
    def __init__(self, type_, description=None):
        super().__init__(type_)
        self.body = {"type": type_}
        if description:
            self.body["description"] = description


def set_error(type_, description=None, properties=None):
    err = {"type": type_}
    if description:
        err["description"] = description
    if properties:
        err["properties"] = properties
    return err


# ---------------------------------------------------------------------------
# Accounts, mail and change log

class Account:
    def __init__(self, login, password):
        self.login, self.password = login, password
        self.id = account_id_for(login)
        self.reset()

    def reset(self):
        self.counter = 0
        self.states = {t: 0 for t in ("Email", "Mailbox", "Thread", "EmailDelivery")}
        self.log = []  # (counter, type, created, updated, destroyed)
        self.emails = {}
        self.blobs = {}
        self.mailboxes = {}
        self.ids = itertools.count(1)
        for sort, (name, role) in enumerate(MAILBOXES):
            mid = "m" + format(sort, "x")
            self.mailboxes[mid] = {"id": mid, "name": name, "role": role,
                                   "parentId": None, "sortOrder": sort,
                                   "isSubscribed": True}
        self.subscriptions = {}  # id -> dict, insertion order = creation order
        self.sub_seq = itertools.count(1)

    def state(self, type_):
        return "s" + format(self.states.get(type_, 0), "x")

    def new_id(self, prefix):
        return prefix + format(next(self.ids), "x") + secrets.token_hex(2)

    def commit(self, changes):
        """changes: {type: (created, updated, destroyed)} -> {type: newState}."""
        self.counter += 1
        out = {}
        for type_, (c, u, d) in changes.items():
            self.states[type_] = self.counter
            self.log.append((self.counter, type_, list(c), list(u), list(d)))
            out[type_] = self.state(type_)
        return out

    def mailbox_counts(self, mid):
        total = unread = 0
        for e in self.emails.values():
            if mid in e["mailboxIds"]:
                total += 1
                unread += "$seen" not in e["keywords"]
        return total, unread

    def mailbox_view(self, mid):
        m = dict(self.mailboxes[mid])
        total, unread = self.mailbox_counts(mid)
        m.update(totalEmails=total, unreadEmails=unread, totalThreads=total,
                 unreadThreads=unread,
                 myRights={k: True for k in ("mayReadItems", "mayAddItems",
                           "mayRemoveItems", "maySetSeen", "maySetKeywords",
                           "mayCreateChild", "mayRename", "mayDelete", "maySubmit")})
        return m

    def changes(self, type_, since, max_changes):
        if not isinstance(since, str) or not since.startswith("s"):
            raise MethodError("cannotCalculateChanges")
        try:
            since_n = int(since[1:], 16)
        except ValueError:
            raise MethodError("cannotCalculateChanges") from None
        if since_n > self.counter or since_n < 0:
            raise MethodError("cannotCalculateChanges")
        status, new_n, more = {}, since_n, False
        for n, t, c, u, d in self.log:
            if n <= since_n or t != type_:
                continue
            touched = set(c) | set(u) | set(d)
            if max_changes and len(set(status) | touched) > max_changes and status:
                more = True
                break
            for i in c:
                status[i] = "created"
            for i in u:
                status.setdefault(i, "updated")
            for i in d:
                status[i] = "gone" if status.get(i) == "created" else "destroyed"
            new_n = n
        if not more:
            new_n = max(new_n, self.states.get(type_, 0), since_n)
        pick = lambda s: [i for i, v in status.items() if v == s]  # noqa: E731
        return {"oldState": since, "newState": "s" + format(new_n, "x"),
                "hasMoreChanges": more, "created": pick("created"),
                "updated": pick("updated"), "destroyed": pick("destroyed")}

    def message_bytes(self, e):
        frm = ", ".join(a.get("email", "") for a in e.get("from") or [])
        to = ", ".join(a.get("email", "") for a in e.get("to") or [])
        return (f"From: {frm}\r\nTo: {to}\r\nSubject: {e.get('subject') or ''}\r\n"
                f"Date: {e['receivedAt']}\r\nMessage-ID: <{e['id']}@test>\r\n"
                f"Content-Type: text/plain; charset=utf-8\r\n\r\n"
                f"{e.get('preview', '')}\r\n").encode()


# ---------------------------------------------------------------------------
# Timers

class Scheduler:
    """One thread running callbacks at absolute monotonic times."""

    def __init__(self):
        self.heap, self.seq = [], itertools.count()
        self.cond = threading.Condition()
        self.running = False
        self.thread = None

    def start(self):
        self.running = True
        self.thread = threading.Thread(target=self._run, name="scheduler", daemon=True)
        self.thread.start()

    def stop(self):
        with self.cond:
            self.running = False
            self.cond.notify_all()
        if self.thread:
            self.thread.join(5)

    def clear(self):
        with self.cond:
            self.heap.clear()

    def at(self, when, fn):
        with self.cond:
            heapq.heappush(self.heap, (when, next(self.seq), fn))
            self.cond.notify_all()

    def _run(self):
        while True:
            with self.cond:
                while self.running and (not self.heap or self.heap[0][0] > time.monotonic()):
                    wait = self.heap[0][0] - time.monotonic() if self.heap else None
                    self.cond.wait(wait)
                if not self.running:
                    return
                _, _, fn = heapq.heappop(self.heap)
            try:
                fn()
            except Exception as exc:  # a test server must not die of one timer
                print(f"stalwart-test: timer failed: {exc!r}", file=sys.stderr)


# ---------------------------------------------------------------------------
# EventSource listeners

class Listener:
    def __init__(self, account, types):
        self.account, self.types = account, types
        self.pending = {}
        self.cond = threading.Condition()
        self.closed = False

    def notify(self, states):
        with self.cond:
            for t, s in states.items():
                if self.types is None or t in self.types:
                    self.pending[t] = s
            self.cond.notify_all()

    def close(self):
        with self.cond:
            self.closed = True
            self.cond.notify_all()


# ---------------------------------------------------------------------------
# The server

class StalwartServer:
    def __init__(self, port=0, public_origin="https://mail.example.test",
                 users=DEFAULT_USERS, verify_delay=60.0, verify_interval=None,
                 coalesce=1.0, retry_delay=60.0, retries=3, min_ping=30.0,
                 allow_loopback_push=False, push_routes=None, push_cafile=None,
                 account_rate=1000, anon_rate=100, fail_ban=100):
        self.port = port
        self.origin = public_origin.rstrip("/")
        self.allow_loopback_push = allow_loopback_push
        self.push_routes = dict(push_routes or {})
        self.push_cafile = push_cafile
        self.defaults = {
            "apiDelay": 0.0, "verifyDelay": float(verify_delay),
            "verifyInterval": float(verify_delay if verify_interval is None else verify_interval),
            "coalesce": float(coalesce), "retryDelay": float(retry_delay),
            "retries": int(retries), "minPing": float(min_ping),
            "accountRate": int(account_rate), "anonRate": int(anon_rate),
            "failBan": int(fail_ban), "eventSourceStatus": 0}
        self.accounts = {}
        for pair in (users.split(",") if isinstance(users, str) else users):
            login, _, password = pair.partition(":")
            if login:
                acc = Account(login.strip(), password)
                self.accounts[acc.id] = acc
        self.by_login = {a.login: a for a in self.accounts.values()}
        self.lock = threading.RLock()
        self.scheduler = Scheduler()
        self.httpd = None
        self.thread = None
        self.conns = set()
        self._reset_runtime()

    # -- lifecycle ---------------------------------------------------------

    def _reset_runtime(self):
        self.generation = getattr(self, "generation", 0) + 1
        self.cfg = dict(self.defaults)
        self.listeners = set()
        self.in_flight = {}
        self.requests = {}
        self.rate = {}       # key -> [window_start, count]
        self.failures = {}   # ip -> [timestamps]
        self.banned = set()
        self.push_log = []
        self.push_stats = {}  # subId -> counters (kept after destroy)
        self.verify_stats = {}
        self.verify_timer = {}   # acct -> due time
        self.last_verify = {}    # acct -> monotonic time of last verification sent

    def start(self):
        server = self

        class Httpd(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False
            allow_reuse_address = True
            request_queue_size = 128

            def process_request_thread(self, request, client_address):
                with server.lock:
                    server.conns.add(request)
                try:
                    super().process_request_thread(request, client_address)
                finally:
                    with server.lock:
                        server.conns.discard(request)

        self.httpd = Httpd(("127.0.0.1", self.port), make_handler(self))
        self.port = self.httpd.server_address[1]
        self.scheduler.start()
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1},
                                       name="stalwart-http", daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if not self.httpd:
            return
        self.httpd.shutdown()
        self.httpd.server_close()
        self.scheduler.stop()
        with self.lock:
            for l in list(self.listeners):
                l.close()
            conns = list(self.conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def reset(self):
        self.scheduler.clear()
        with self.lock:
            for l in list(self.listeners):
                l.close()
            for acc in self.accounts.values():
                acc.reset()
            self._reset_runtime()

    def drop_streams(self):
        with self.lock:
            for l in list(self.listeners):
                l.close()

    # -- authentication and limits ----------------------------------------

    def _rate_hit(self, key, limit):
        """Counts one request in a fixed 60 s window; returns Retry-After or 0."""
        now = time.monotonic()
        win = self.rate.get(key)
        if not win or now - win[0] >= RATE_WINDOW:
            win = self.rate[key] = [now, 0]
        win[1] += 1
        if limit and win[1] > limit:
            return max(1, math.ceil(RATE_WINDOW - (now - win[0])))
        return 0

    def rate_problem(self, retry):
        return Problem(429, "Too Many Requests",
                       "Your request has been rate limited. Please try again in a few seconds.",
                       headers={"Retry-After": str(retry)})

    def authenticate(self, ip, header):
        """-> Account, or raises Problem (401, 429)."""
        with self.lock:
            if ip in self.banned:
                raise Problem(429, "Too Many Requests",
                              "Your IP address has been blocked after too many failed "
                              "login attempts.")
            if not header:
                retry = self._rate_hit(("anon", ip), self.cfg["anonRate"])
                if retry:
                    raise self.rate_problem(retry)
                raise Problem(401, "Unauthorized", "You have to authenticate first.",
                              headers={"WWW-Authenticate": "Basic realm=\"Stalwart Server\""})
            acc = None
            scheme, _, cred = header.partition(" ")
            if scheme.lower() == "basic":
                try:
                    login, _, pw = base64.b64decode(cred.strip(), validate=True) \
                        .decode("utf-8").partition(":")
                    cand = self.by_login.get(login)
                    if cand and secrets.compare_digest(cand.password, pw):
                        acc = cand
                except (ValueError, UnicodeDecodeError):
                    acc = None
            if acc is None:
                now = time.time()
                fails = [t for t in self.failures.get(ip, []) if now - t < FAIL_WINDOW]
                fails.append(now)
                self.failures[ip] = fails
                if self.cfg["failBan"] and len(fails) >= self.cfg["failBan"]:
                    self.banned.add(ip)
                raise Problem(401, "Unauthorized", "You have to authenticate first.",
                              headers={"WWW-Authenticate": "Basic realm=\"Stalwart Server\""})
            self.requests[acc.id] = self.requests.get(acc.id, 0) + 1
            retry = self._rate_hit(("acct", acc.id), self.cfg["accountRate"])
            if retry:
                raise self.rate_problem(retry)
            return acc

    def anonymous(self, ip):
        with self.lock:
            if ip in self.banned:
                raise Problem(429, "Too Many Requests",
                              "Your IP address has been blocked after too many failed "
                              "login attempts.")
            retry = self._rate_hit(("anon", ip), self.cfg["anonRate"])
            if retry:
                raise self.rate_problem(retry)

    def enter(self, acc):
        with self.lock:
            n = self.in_flight.get(acc.id, 0)
            if n >= LIMITS["maxConcurrentRequests"]:
                raise limit_problem("maxConcurrentRequests",
                                    "You have exceeded the number of concurrent requests.")
            self.in_flight[acc.id] = n + 1

    def leave(self, acc):
        with self.lock:
            self.in_flight[acc.id] -= 1

    # -- session -----------------------------------------------------------

    def session(self, acc):
        o = self.origin
        mail_caps = {"maxMailboxesPerEmail": None, "maxMailboxDepth": 10,
                     "maxSizeMailboxName": 255, "maxSizeAttachmentsPerEmail": 50000000,
                     "emailQuerySortOptions": ["receivedAt", "size", "from", "to",
                                               "subject", "sentAt", "hasKeyword"],
                     "mayCreateTopLevelMailbox": True}
        sub_caps = {"maxDelayedSend": 2592000, "submissionExtensions": {}}
        doc = {
            "capabilities": {CORE: dict(LIMITS), MAIL: {}, SUBMISSION: {}, QUOTA: {}},
            "accounts": {acc.id: {"name": acc.login, "isPersonal": True,
                                  "isReadOnly": False,
                                  "accountCapabilities": {MAIL: mail_caps,
                                                          SUBMISSION: sub_caps,
                                                          QUOTA: {}}}},
            "primaryAccounts": {MAIL: acc.id, SUBMISSION: acc.id, QUOTA: acc.id},
            "username": acc.login,
            "apiUrl": f"{o}/jmap/",
            "downloadUrl": f"{o}/jmap/download/{{accountId}}/{{blobId}}/{{name}}?accept={{type}}",
            "uploadUrl": f"{o}/jmap/upload/{{accountId}}/",
            "eventSourceUrl": f"{o}/jmap/eventsource/?types={{types}}&closeafter={{closeafter}}&ping={{ping}}",
        }
        doc["state"] = hashlib.sha256(dumps(doc).encode()).hexdigest()[:12]
        return doc

    # -- state changes ------------------------------------------------------

    def changed(self, acc, states):
        """Called with the lock held after acc.commit(): fans out to
        EventSource listeners and verified push subscriptions."""
        for l in list(self.listeners):
            if l.account is acc:
                l.notify(states)
        now = time.time()
        for sub in acc.subscriptions.values():
            if not sub["verified"] or sub["expires"] <= now:
                continue
            types = sub.get("types")
            picked = {t: s for t, s in states.items() if not types or t in types}
            if picked:
                sub["pending"].update(picked)
                self._push_kick(acc, sub)

    def deliver(self, account, subject="Test message", sender="carol@example.test",
                mailbox="inbox"):
        with self.lock:
            acc = self.accounts.get(account) or self.by_login.get(account)
            if acc is None:
                raise KeyError(account)
            mid = mailbox if mailbox in acc.mailboxes else next(
                (m for m, v in acc.mailboxes.items() if v["role"] == mailbox), None)
            if mid is None:
                raise KeyError(mailbox)
            eid = acc.new_id("e")
            acc.emails[eid] = self._email(acc, eid, {
                "mailboxIds": {mid: True}, "subject": subject,
                "from": [{"name": None, "email": sender}],
                "to": [{"name": None, "email": acc.login}]})
            states = acc.commit({"Email": ([eid], [], []), "Mailbox": ([], [mid], []),
                                 "Thread": ([acc.emails[eid]["threadId"]], [], []),
                                 "EmailDelivery": ([], [], [])})
            self.changed(acc, states)
            return {"emailId": eid, "states": states}

    # -- push subscriptions -------------------------------------------------

    def _sub_stats(self, acc, sub):
        return self.push_stats.setdefault(sub["id"], {
            "account": acc.id, "url": sub["url"], "verified": False,
            "sent": 0, "failed": 0, "dropped": 0, "attempts": 0})

    def _push_kick(self, acc, sub):
        """Sends pending changes now or schedules it (lock held)."""
        if sub["in_flight"] or not sub["pending"] or sub["timer"]:
            return
        now = time.monotonic()
        wait = self.cfg["retryDelay"] if sub["failures"] else self.cfg["coalesce"]
        due = sub["last_request"] + wait
        if due <= now:
            self._push_send(acc, sub)
        else:
            sub["timer"] = True

            def fire():
                with self.lock:
                    sub["timer"] = False
                    if acc.subscriptions.get(sub["id"]) is sub:
                        self._push_kick(acc, sub)
            self.scheduler.at(due, fire)

    def _push_send(self, acc, sub):
        payload = dict(sub["pending"])
        sub["pending"] = {}
        sub["in_flight"] = True
        sub["last_request"] = time.monotonic()
        st = self._sub_stats(acc, sub)
        st["attempts"] += 1
        body = {"@type": "StateChange", "changed": {acc.id: payload}}

        def run():
            ok = self.post(sub["url"], body, "StateChange", sub["id"])
            with self.lock:
                sub["in_flight"] = False
                if ok:
                    st["sent"] += 1
                    sub["failures"] = 0
                else:
                    st["failed"] += 1
                    sub["failures"] += 1
                    if sub["failures"] > self.cfg["retries"]:
                        st["dropped"] += 1
                        sub["failures"] = 0
                        # Stalwart drops the queued changes with the failed ones.
                        sub["pending"] = {}
                    else:
                        merged = dict(payload)
                        merged.update(sub["pending"])
                        sub["pending"] = merged
                if acc.subscriptions.get(sub["id"]) is sub:
                    self._push_kick(acc, sub)
        threading.Thread(target=run, daemon=True).start()

    def _schedule_verify(self, acc):
        """After a /set that changed the account's subscriptions (lock held)."""
        if acc.id in self.verify_timer:
            return
        due = time.monotonic() + self.cfg["verifyDelay"]
        self.verify_timer[acc.id] = due
        self.scheduler.at(due, lambda: self._verify(acc, due))

    def _verify(self, acc, due):
        with self.lock:
            if self.verify_timer.get(acc.id) != due:
                return  # reset in between
            del self.verify_timer[acc.id]
            now = time.time()
            pending = [s for s in acc.subscriptions.values()
                       if not s["verified"] and s["expires"] > now]
            if not pending:
                return
            vs = self.verify_stats.setdefault(acc.id, {"sent": 0, "failed": 0,
                                                       "suppressed": 0})
            last = self.last_verify.get(acc.id)
            if last is not None and time.monotonic() - last < self.cfg["verifyInterval"]:
                vs["suppressed"] += 1
                return
            self.last_verify[acc.id] = time.monotonic()
            sub = pending[-1]
            body = {"@type": "PushVerification", "pushSubscriptionId": sub["id"],
                    "verificationCode": sub["code"]}
            url, sid = sub["url"], sub["id"]

        def run():
            ok = self.post(url, body, "PushVerification", sid)
            with self.lock:
                vs["sent" if ok else "failed"] += 1
        threading.Thread(target=run, daemon=True).start()

    def _target(self, url):
        """The loopback URL an outgoing POST really goes to, or None."""
        for pub, local in self.push_routes.items():
            if url == pub or url.startswith(pub.rstrip("/") + "/"):
                url = local.rstrip("/") + url[len(pub.rstrip("/")):]
                break
        parts = urllib.parse.urlsplit(url)
        try:
            ip = ipaddress.ip_address(parts.hostname or "")
        except ValueError:
            return None
        if not ip.is_loopback or str(ip) not in ("127.0.0.1", "::1"):
            return None
        return url

    def post(self, url, body, kind, sid):
        """One POST, never retried here; only ever to 127.0.0.1/::1."""
        data = dumps(body).encode()
        generation = self.generation
        entry = {"t": time.time(), "url": url, "target": None, "kind": kind,
                 "subscription": sid, "body": body, "status": None, "error": None}
        target = self._target(url)
        ok = False
        if target is None:
            entry["error"] = "refused: not a loopback address (test server sends nowhere else)"
        else:
            entry["target"] = target
            parts = urllib.parse.urlsplit(target)
            try:
                if parts.scheme == "https":
                    ctx = ssl.create_default_context(cafile=self.push_cafile)
                    conn = http.client.HTTPSConnection(parts.hostname, parts.port or 443,
                                                       timeout=PUSH_TIMEOUT, context=ctx)
                else:
                    conn = http.client.HTTPConnection(parts.hostname, parts.port or 80,
                                                      timeout=PUSH_TIMEOUT)
                path = parts.path or "/"
                if parts.query:
                    path += "?" + parts.query
                try:
                    conn.request("POST", path, body=data, headers={
                        "Content-Type": "application/json", "TTL": "86400",
                        "Urgency": "normal", "Host": urllib.parse.urlsplit(url).netloc})
                    resp = conn.getresponse()
                    resp.read(65536)
                    entry["status"] = resp.status
                    ok = 200 <= resp.status < 300
                finally:
                    conn.close()
            except (OSError, http.client.HTTPException) as exc:
                entry["error"] = f"{type(exc).__name__}: {exc}"
        with self.lock:
            if generation == self.generation:  # not from before a reset
                self.push_log.append(entry)
                del self.push_log[:-PUSH_LOG_MAX]
        return ok

    def check_push_url(self, url):
        if not isinstance(url, str) or len(url) >= 512:
            return "url must be a string shorter than 512 characters"
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            ip = None
        loop_ok = self.allow_loopback_push and ip is not None and ip.is_loopback
        if parts.scheme != "https" and not (loop_ok and parts.scheme == "http"):
            return "url must use https://"
        if parts.username is not None or parts.password is not None or "@" in parts.netloc:
            return "url must not contain credentials"
        if not host:
            return "url has no host"
        if ip is not None and not loop_ok and (
                ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
                or ip.is_reserved or ip.is_unspecified
                or (ip.version == 6 and ip.ipv4_mapped is not None)):
            return "url must not point to a private or loopback address"
        return None

    def push_get(self, acc, args):
        props = args.get("properties")
        default = ["id", "deviceClientId", "verificationCode", "expires", "types"]
        props = default if props is None else list(props)
        if "id" not in props:
            props.insert(0, "id")
        ids = args.get("ids")
        if ids is not None and len(ids) > LIMITS["maxObjectsInGet"]:
            raise MethodError("requestTooLarge")
        subs = acc.subscriptions
        ids = list(subs) if ids is None else ids
        out, missing = [], []
        for i in ids:
            sub = subs.get(i)
            if sub is None:
                missing.append(i)
                continue
            obj = {}
            for p in props:
                if p in ("url", "keys"):
                    continue
                if p == "expires":
                    obj[p] = utc_date(sub["expires"])
                elif p == "verificationCode":
                    obj[p] = sub["code"] if sub["verified"] else None
                elif p in ("id", "deviceClientId", "types"):
                    obj[p] = sub.get(p)
                else:
                    raise MethodError("invalidArguments", f"Unknown property {p}")
            obj["url"] = None
            obj["keys"] = None
            out.append(obj)
        return {"list": out, "notFound": missing}

    def push_set(self, acc, args):
        resp = {"created": {}, "updated": {}, "destroyed": [], "notCreated": {},
                "notUpdated": {}, "notDestroyed": {}}
        create = args.get("create") or {}
        update = args.get("update") or {}
        destroy = args.get("destroy") or []
        if len(create) + len(update) + len(destroy) > LIMITS["maxObjectsInSet"]:
            raise MethodError("requestTooLarge")
        now = time.time()
        for cid, obj in create.items():
            if len(acc.subscriptions) >= MAX_SUBSCRIPTIONS:
                resp["notCreated"][cid] = set_error(
                    "overQuota", "There are too many subscriptions, please delete "
                    "some before adding a new one.")
                continue
            err = None
            if not isinstance(obj, dict):
                err = set_error("invalidProperties", "Not an object")
            elif not isinstance(obj.get("deviceClientId"), str) or not isinstance(obj.get("url"), str):
                err = set_error("invalidProperties", "Missing required properties",
                                ["deviceClientId", "url"])
            elif len(obj["deviceClientId"]) >= 255:
                err = set_error("invalidProperties", "deviceClientId too long",
                                ["deviceClientId"])
            else:
                why = self.check_push_url(obj["url"])
                if why:
                    err = set_error("invalidProperties", why, ["url"])
            sub = None
            if err is None:
                sub = {"id": None, "deviceClientId": obj["deviceClientId"],
                       "url": obj["url"], "types": None,
                       "expires": now + EXPIRES_MAX}
                for p, v in obj.items():
                    if p in ("deviceClientId", "url"):
                        continue
                    err = self._push_prop(sub, p, v, creating=True)
                    if err:
                        break
            if err:
                resp["notCreated"][cid] = err
                continue
            sid = "p" + format(next(acc.sub_seq), "x") + secrets.token_hex(3)
            sub.update(id=sid, verified=False, pending={}, in_flight=False,
                       timer=False, failures=0, last_request=-1e9,
                       code="".join(secrets.choice(string.ascii_letters + string.digits)
                                    for _ in range(VERIFICATION_CODE_LEN)))
            acc.subscriptions[sid] = sub
            self._sub_stats(acc, sub)
            resp["created"][cid] = {"id": sid, "keys": None,
                                    "expires": utc_date(sub["expires"])}
        for sid, patch in update.items():
            sub = acc.subscriptions.get(sid)
            if sid in destroy:
                resp["notUpdated"][sid] = set_error("willDestroy")
                continue
            if sub is None:
                resp["notUpdated"][sid] = set_error("notFound")
                continue
            trial = dict(sub)
            err = None if isinstance(patch, dict) else set_error("invalidPatch")
            for p, v in (patch.items() if err is None else ()):
                err = self._push_prop(trial, p, v, creating=False)
                if err:
                    break
            if err:
                resp["notUpdated"][sid] = err
                continue
            sub.update(trial)
            self._sub_stats(acc, sub)["verified"] = sub["verified"]
            resp["updated"][sid] = None
        for sid in destroy:
            if acc.subscriptions.pop(sid, None) is None:
                resp["notDestroyed"][sid] = set_error("notFound")
            else:
                resp["destroyed"].append(sid)
        if resp["created"] or resp["updated"] or resp["destroyed"]:
            self._schedule_verify(acc)
        return {k: (v or None) for k, v in resp.items()}

    def _push_prop(self, sub, p, v, creating):
        """Sets one property on a subscription dict; returns a SetError or None."""
        bad = lambda d: set_error("invalidProperties", d, [p])  # noqa: E731
        if p == "expires":
            if v is None:
                sub["expires"] = time.time() + EXPIRES_MAX
                return None
            ts = parse_utc_date(v)
            if ts is None:
                return bad("expires must be a UTCDate")
            now = time.time()
            sub["expires"] = min(ts, now + EXPIRES_MAX) if ts > now else ts
            return None
        if p == "types":
            if v is None:
                sub["types"] = None
                return None
            if not isinstance(v, list) or not all(t in DATA_TYPES for t in v):
                return bad("types must be a list of data type names")
            sub["types"] = list(v)
            return None
        if p == "keys":
            if v is None:
                return None
            return bad("keys (RFC 8291 encryption) are not supported by this test server")
        if p == "verificationCode" and not creating:
            if v is None:
                sub["verified"] = False
                return None
            if isinstance(v, str) and secrets.compare_digest(v, sub["code"]):
                sub["verified"] = True
                return None
            return bad("Verification code does not match.")
        if p == "id" and creating is False and v == sub["id"]:
            return None
        return bad("Field could not be set.")

    # -- statistics ---------------------------------------------------------

    def stats(self):
        with self.lock:
            es = {}
            for l in self.listeners:
                es[l.account.id] = es.get(l.account.id, 0) + 1
            push = {}
            for sid, st in self.push_stats.items():
                d = dict(st)
                acc = self.accounts[st["account"]]
                sub = acc.subscriptions.get(sid)
                d["verified"] = bool(sub and sub["verified"])
                d["exists"] = sub is not None
                push[sid] = d
            return {
                "tcpConnections": len(self.conns),
                "eventSource": es,
                "inFlight": {k: v for k, v in self.in_flight.items() if v},
                "requests": dict(self.requests),
                "subscriptions": {a.id: len(a.subscriptions) for a in self.accounts.values()},
                "push": push,
                "verifications": {k: dict(v) for k, v in self.verify_stats.items()},
                "bannedIps": sorted(self.banned),
                "accounts": {a.login: a.id for a in self.accounts.values()},
            }

    # -- mail methods -------------------------------------------------------

    def _email(self, acc, eid, obj):
        now = time.time()
        subject = obj.get("subject")
        return {"id": eid, "blobId": "b" + eid, "threadId": "t" + eid,
                "mailboxIds": dict(obj["mailboxIds"]),
                "keywords": dict(obj.get("keywords") or {}),
                "size": 200 + len(subject or ""),
                "receivedAt": obj.get("receivedAt") or utc_date(now),
                "sentAt": obj.get("sentAt") or utc_date(now),
                "subject": subject, "from": obj.get("from"), "to": obj.get("to"),
                "cc": obj.get("cc"), "bcc": None, "replyTo": None,
                "messageId": [f"{eid}@test"], "inReplyTo": None, "references": None,
                "preview": f"Body of {subject or '(no subject)'}",
                "hasAttachment": False}

    def account_for(self, acc, args):
        aid = args.get("accountId")
        if aid != acc.id:
            raise MethodError("accountNotFound")
        return acc

    def m_echo(self, acc, args):
        return args

    def m_quota_get(self, acc, args):
        """RFC 9425 Quota/get as Stalwart answers it: the account's one
        quota, "q0", its mail in octets (the sum of the emails' sizes),
        types by their JMAP names, no warn or soft limit."""
        a = self.account_for(acc, args)
        used = sum(e.get("size", 0) for e in a.emails.values())
        q = {"id": "q0", "resourceType": "octets", "used": used,
             "hardLimit": QUOTA_OCTETS, "warnLimit": None,
             "softLimit": None, "scope": "account", "name": a.login,
             "types": ["Email", "SieveScript"], "description": None}
        ids = args.get("ids")
        if ids is not None and not isinstance(ids, list):
            raise MethodError("invalidArguments", "ids must be a list or null")
        return {"accountId": a.id, "state": a.state("Email"),
                "list": [q] if ids is None or "q0" in ids else [],
                "notFound": [i for i in (ids or []) if i != "q0"]}

    def m_mailbox_get(self, acc, args):
        a = self.account_for(acc, args)
        ids = args.get("ids")
        if ids is not None and len(ids) > LIMITS["maxObjectsInGet"]:
            raise MethodError("requestTooLarge")
        ids = list(a.mailboxes) if ids is None else ids
        props = args.get("properties")
        lst, nf = [], []
        for i in ids:
            if i not in a.mailboxes:
                nf.append(i)
                continue
            m = a.mailbox_view(i)
            if props is not None:
                m = {k: m.get(k) for k in set(props) | {"id"}}
            lst.append(m)
        return {"accountId": a.id, "state": a.state("Mailbox"), "list": lst, "notFound": nf}

    def m_changes(self, type_):
        def method(acc, args):
            a = self.account_for(acc, args)
            r = a.changes(type_, args.get("sinceState"), args.get("maxChanges"))
            r["accountId"] = a.id
            if type_ == "Mailbox":
                r["updatedProperties"] = None
            return r
        return method

    def m_email_get(self, acc, args):
        a = self.account_for(acc, args)
        ids = args.get("ids")
        if ids is not None and len(ids) > LIMITS["maxObjectsInGet"]:
            raise MethodError("requestTooLarge")
        if ids is None:
            ids = list(a.emails)[:LIMITS["maxObjectsInGet"]]
        props = args.get("properties")
        lst, nf = [], []
        for i in ids:
            e = a.emails.get(i)
            if e is None:
                nf.append(i)
                continue
            lst.append(dict(e) if props is None else {k: e.get(k) for k in set(props) | {"id"}})
        return {"accountId": a.id, "state": a.state("Email"), "list": lst, "notFound": nf}

    def m_thread_get(self, acc, args):
        a = self.account_for(acc, args)
        threads = {e["threadId"]: e["id"] for e in a.emails.values()}
        lst, nf = [], []
        for i in args.get("ids") or []:
            if i in threads:
                lst.append({"id": i, "emailIds": [threads[i]]})
            else:
                nf.append(i)
        return {"accountId": a.id, "state": a.state("Thread"), "list": lst, "notFound": nf}

    def m_email_query(self, acc, args):
        a = self.account_for(acc, args)
        flt = args.get("filter") or {}
        if not isinstance(flt, dict) or set(flt) - {"inMailbox", "text", "subject"}:
            raise MethodError("unsupportedFilter")
        res = list(a.emails.values())
        if "inMailbox" in flt:
            res = [e for e in res if flt["inMailbox"] in e["mailboxIds"]]
        for key in ("text", "subject"):
            if key in flt:
                res = [e for e in res if str(flt[key]).lower() in (e["subject"] or "").lower()]
        res.sort(key=lambda e: (e["receivedAt"], e["id"]), reverse=True)
        for s in args.get("sort") or []:
            if s.get("property") == "receivedAt" and s.get("isAscending", True):
                res.reverse()
        pos = max(0, int(args.get("position") or 0))
        limit = args.get("limit")
        ids = [e["id"] for e in res][pos:pos + limit if limit else None]
        out = {"accountId": a.id, "queryState": a.state("Email"),
               "canCalculateChanges": False, "position": pos, "ids": ids}
        if args.get("calculateTotal"):
            out["total"] = len(res)
        return out

    def m_email_set(self, acc, args):
        a = self.account_for(acc, args)
        if "ifInState" in args and args["ifInState"] not in (None, a.state("Email")):
            raise MethodError("stateMismatch")
        create = args.get("create") or {}
        update = args.get("update") or {}
        destroy = args.get("destroy") or []
        if len(create) + len(update) + len(destroy) > LIMITS["maxObjectsInSet"]:
            raise MethodError("requestTooLarge")
        old = a.state("Email")
        created, updated, destroyed = {}, {}, []
        nc, nu, nd = {}, {}, {}
        touched_mb = set()
        for cid, obj in create.items():
            mids = obj.get("mailboxIds") if isinstance(obj, dict) else None
            if not mids or not all(m in a.mailboxes for m in mids):
                nc[cid] = set_error("invalidProperties", "mailboxIds", ["mailboxIds"])
                continue
            eid = a.new_id("e")
            a.emails[eid] = self._email(a, eid, obj)
            touched_mb |= set(mids)
            e = a.emails[eid]
            created[cid] = {k: e[k] for k in ("id", "blobId", "threadId", "size")}
        for eid, patch in update.items():
            e = a.emails.get(eid)
            if e is None:
                nu[eid] = set_error("notFound")
                continue
            new = {"keywords": dict(e["keywords"]), "mailboxIds": dict(e["mailboxIds"])}
            err = None
            for path, v in patch.items():
                head, _, tail = path.partition("/")
                if head not in new:
                    err = set_error("invalidProperties", "Field could not be set.", [head])
                    break
                if tail:
                    if v in (None, False):
                        new[head].pop(tail, None)
                    else:
                        new[head][tail] = True
                else:
                    new[head] = dict(v or {})
            if err is None and (not new["mailboxIds"]
                                or not all(m in a.mailboxes for m in new["mailboxIds"])):
                err = set_error("invalidProperties", "mailboxIds", ["mailboxIds"])
            if err:
                nu[eid] = err
                continue
            touched_mb |= set(e["mailboxIds"]) | set(new["mailboxIds"])
            e.update(new)
            updated[eid] = None
        for eid in destroy:
            e = a.emails.pop(eid, None)
            if e is None:
                nd[eid] = set_error("notFound")
                continue
            touched_mb |= set(e["mailboxIds"])
            destroyed.append(eid)
        if created or updated or destroyed:
            changes = {"Email": ([c["id"] for c in created.values()], list(updated), destroyed)}
            if touched_mb:
                changes["Mailbox"] = ([], sorted(touched_mb), [])
            if created or destroyed:
                changes["Thread"] = ([c["threadId"] for c in created.values()], [],
                                     ["t" + d for d in destroyed])
            self.changed(a, a.commit(changes))
        return {"accountId": a.id, "oldState": old, "newState": a.state("Email"),
                "created": created or None, "updated": updated or None,
                "destroyed": destroyed or None, "notCreated": nc or None,
                "notUpdated": nu or None, "notDestroyed": nd or None}

    def methods(self):
        return {
            "Core/echo": (CORE, self.m_echo),
            "Mailbox/get": (MAIL, self.m_mailbox_get),
            "Mailbox/changes": (MAIL, self.m_changes("Mailbox")),
            "Email/get": (MAIL, self.m_email_get),
            "Email/query": (MAIL, self.m_email_query),
            "Email/set": (MAIL, self.m_email_set),
            "Email/changes": (MAIL, self.m_changes("Email")),
            "Thread/get": (MAIL, self.m_thread_get),
            "Thread/changes": (MAIL, self.m_changes("Thread")),
            "Quota/get": (QUOTA, self.m_quota_get),
            "PushSubscription/get": (CORE, self.push_get),
            "PushSubscription/set": (CORE, self.push_set),
        }

    def api(self, acc, body):
        try:
            req = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise Problem(400, "Not JSON", "The request is not valid JSON.",
                          "urn:ietf:params:jmap:error:notJSON") from None
        if (not isinstance(req, dict) or not isinstance(req.get("using"), list)
                or not isinstance(req.get("methodCalls"), list)):
            raise Problem(400, "Not Request", "The request is not a valid JMAP request.",
                          "urn:ietf:params:jmap:error:notRequest")
        for cap in req["using"]:
            if cap not in CAPABILITIES:
                raise Problem(400, "Unknown Capability",
                              f"The capability '{cap}' is not supported by this server.",
                              "urn:ietf:params:jmap:error:unknownCapability")
        if len(req["methodCalls"]) > LIMITS["maxCallsInRequest"]:
            raise limit_problem("maxCallsInRequest",
                                "You have exceeded the maximum number of calls in a request.")
        table = self.methods()
        responses = []
        for call in req["methodCalls"]:
            if not (isinstance(call, list) and len(call) == 3 and isinstance(call[0], str)
                    and isinstance(call[1], dict) and isinstance(call[2], str)):
                raise Problem(400, "Not Request", "Invalid method call.",
                              "urn:ietf:params:jmap:error:notRequest")
            name, args, tag = call
            try:
                args = resolve_refs(args, responses)
                entry = table.get(name)
                if entry is None:
                    raise MethodError("unknownMethod")
                if entry[0] not in req["using"]:
                    raise MethodError("unknownMethod", f"{entry[0]} not in using")
                with self.lock:
                    result = entry[1](acc, args)
                responses.append([name, result, tag])
            except MethodError as exc:
                responses.append(["error", exc.body, tag])
        with self.lock:
            sess = self.session(acc)["state"]
        return {"methodResponses": responses, "sessionState": sess}


def resolve_refs(args, responses):
    out = {}
    for k, v in args.items():
        if not k.startswith("#"):
            out[k] = v
            continue
        if not isinstance(v, dict) or not all(x in v for x in ("resultOf", "name", "path")):
            raise MethodError("invalidResultReference")
        src = next((r for r in responses if r[2] == v["resultOf"]), None)
        if src is None or src[0] != v["name"]:
            raise MethodError("invalidResultReference")
        try:
            out[k[1:]] = json_pointer(src[1], v["path"])
        except (KeyError, IndexError, TypeError, ValueError):
            raise MethodError("invalidResultReference") from None
    return out


def json_pointer(doc, path):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]

    def walk(node, parts):
        if not parts:
            return node
        head, rest = parts[0], parts[1:]
        if head == "*" and isinstance(node, list):
            res = []
            for item in node:
                got = walk(item, rest)
                res.extend(got if isinstance(got, list) else [got])
            return res
        if isinstance(node, list):
            return walk(node[int(head)], rest)
        return walk(node[head], rest)
    return walk(doc, parts)


# ---------------------------------------------------------------------------
# HTTP

def make_handler(srv):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "Stalwart-test"

        def version_string(self):
            return self.server_version

        def log_message(self, fmt, *args):
            pass

        # -- helpers --
        def send_json(self, status, obj, ctype="application/json", headers=None):
            data = dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def send_problem(self, p):
            self.send_json(p.status, p.body, "application/problem+json", p.headers)

        def ip(self):
            return self.client_address[0]

        def auth(self):
            return srv.authenticate(self.ip(), self.headers.get("Authorization"))

        def dispatch(self, method):
            path, _, query = self.path.partition("?")
            self.body, self.body_len = b"", 0
            try:
                self.body_len = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self.body_len = -1
            if self.body_len < 0 or self.headers.get("Transfer-Encoding"):
                self.close_connection = True
                return self.send_problem(Problem(400, "Bad Request",
                                                 "Invalid or chunked request body."))
            if self.body_len > LIMITS["maxSizeUpload"]:
                self.close_connection = True  # not read: the connection ends
            else:
                self.body = self.rfile.read(self.body_len)
            try:
                if path.startswith("/_control/"):
                    return self.control(method, path[len("/_control/"):])
                if path == "/.well-known/jmap" and method == "GET":
                    srv.anonymous(self.ip())
                    self.send_response(307)
                    self.send_header("Location", "/jmap/session")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if path == "/jmap/session" and method == "GET":
                    acc = self.auth()
                    return self.guarded(acc, lambda: self.send_json(200, srv.session(acc)))
                if path == "/jmap/" and method == "POST":
                    acc = self.auth()
                    return self.guarded(acc, lambda: self.api(acc))
                if path == "/jmap/eventsource/" and method == "GET":
                    acc = self.auth()
                    return self.eventsource(acc, query)
                if path.startswith("/jmap/upload/") and method == "POST":
                    acc = self.auth()
                    return self.guarded(acc, lambda: self.upload(acc, path))
                if path.startswith("/jmap/download/") and method == "GET":
                    acc = self.auth()
                    return self.guarded(acc, lambda: self.download(acc, path, query))
                srv.anonymous(self.ip())
                raise Problem(404, "Not Found", "The requested resource does not exist.")
            except Problem as p:
                self.send_problem(p)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def guarded(self, acc, fn):
            srv.enter(acc)
            try:
                fn()
            finally:
                srv.leave(acc)

        def do_GET(self):
            self.dispatch("GET")

        def do_POST(self):
            self.dispatch("POST")

        def do_PUT(self):
            self.dispatch("PUT")

        def do_DELETE(self):
            self.dispatch("DELETE")

        # -- JMAP API --
        def api(self, acc):
            if self.body_len > LIMITS["maxSizeRequest"]:
                raise limit_problem("maxSizeRequest",
                                    "The request is larger than maxSizeRequest.")
            body = self.body
            delay = srv.cfg["apiDelay"]
            if delay:
                time.sleep(delay)
            self.send_json(200, srv.api(acc, body))

        def upload(self, acc, path):
            aid = path[len("/jmap/upload/"):].strip("/")
            if aid != acc.id:
                raise Problem(403, "Forbidden", "You do not have access to this account.")
            if self.body_len > LIMITS["maxSizeUpload"]:
                raise limit_problem("maxSizeUpload",
                                    "The upload is larger than maxSizeUpload.")
            data = self.body
            blob = "B" + hashlib.sha256(data).hexdigest()[:24]
            ctype = self.headers.get("Content-Type") or "application/octet-stream"
            with srv.lock:
                acc.blobs[blob] = data
            self.send_json(200, {"accountId": acc.id, "blobId": blob, "type": ctype,
                                 "size": len(data)})

        def download(self, acc, path, query):
            parts = path[len("/jmap/download/"):].split("/")
            if len(parts) < 2 or parts[0] != acc.id:
                raise Problem(404, "Not Found", "The requested blob does not exist.")
            blob = urllib.parse.unquote(parts[1])
            with srv.lock:
                data = acc.blobs.get(blob)
                if data is None and blob.startswith("b") and blob[1:] in acc.emails:
                    data = acc.message_bytes(acc.emails[blob[1:]])
            if data is None:
                raise Problem(404, "Not Found", "The requested blob does not exist.")
            q = urllib.parse.parse_qs(query)
            ctype = (q.get("accept") or ["application/octet-stream"])[0]
            status, headers, body = 200, {}, data
            rng = self.headers.get("Range", "")
            if rng.startswith("bytes=") and "," not in rng:
                a, _, b = rng[6:].partition("-")
                try:
                    if a == "":
                        start, end = max(0, len(data) - int(b)), len(data) - 1
                    else:
                        start = int(a)
                        end = min(int(b), len(data) - 1) if b else len(data) - 1
                    if start <= end and start < len(data):
                        status, body = 206, data[start:end + 1]
                        headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
                except ValueError:
                    pass
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            name = urllib.parse.unquote(parts[2]) if len(parts) > 2 else "blob"
            self.send_header("Content-Disposition",
                             "attachment; filename*=UTF-8''" + urllib.parse.quote(name))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        # -- EventSource --
        def eventsource(self, acc, query):
            refuse = srv.cfg["eventSourceStatus"]
            if refuse:
                raise Problem(refuse, "Refused", "the eventSourceStatus switch refuses streams")
            q = urllib.parse.parse_qs(query, keep_blank_values=True)
            bad = lambda d: Problem(400, "Invalid Parameter", d)  # noqa: E731
            types_s = (q.get("types") or ["*"])[-1]
            if types_s == "*":
                types = None
            else:
                types = set(t.strip() for t in types_s.split(","))
                if not types or not all(t in DATA_TYPES for t in types):
                    raise bad(f"Invalid types value '{types_s}'")
            closeafter = (q.get("closeafter") or ["no"])[-1]
            if closeafter not in ("state", "no"):
                raise bad(f"Invalid closeafter value '{closeafter}'")
            ping_s = (q.get("ping") or ["0"])[-1]
            if not ping_s.isdigit() or len(ping_s) > 9:
                raise bad(f"Invalid ping value '{ping_s}'")
            ping = int(ping_s)
            interval = max(float(ping), srv.cfg["minPing"]) if ping else None
            listener = Listener(acc, types)
            with srv.lock:
                srv.listeners.add(listener)
            self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.flush()
                self.stream(listener, interval, closeafter == "state")
                try:
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass
            except OSError:
                pass
            finally:
                with srv.lock:
                    srv.listeners.discard(listener)

        def chunk(self, text):
            data = text.encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def peer_closed(self):
            try:
                r, _, _ = select.select([self.connection], [], [], 0)
                if r:
                    return self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True
            return False

        def stream(self, l, interval, close_after_state):
            throttle = srv.cfg["coalesce"]
            next_ping = time.monotonic() + interval if interval else None
            last_sent = time.monotonic() - throttle
            while True:
                with l.cond:
                    now = time.monotonic()
                    due = [now + 0.5]
                    if next_ping:
                        due.append(next_ping)
                    if l.pending:
                        due.append(last_sent + throttle)
                    wait = min(due) - now
                    if wait > 0 and not l.closed:
                        l.cond.wait(wait)
                    if l.closed:
                        return
                    now = time.monotonic()
                    send_state = None
                    if l.pending and now >= last_sent + throttle:
                        send_state, l.pending = l.pending, {}
                        last_sent = now
                if send_state:
                    self.chunk("event: state\ndata: " + dumps(
                        {"@type": "StateChange", "changed": {l.account.id: send_state}})
                        + "\n\n")
                    if close_after_state:
                        return
                    if next_ping:  # as Stalwart: a ping only after an idle interval
                        next_ping = max(next_ping, now + interval)
                if next_ping and now >= next_ping:
                    self.chunk('event: ping\ndata: {"interval": %d}\n\n' % round(interval * 1000))
                    next_ping += interval
                    if next_ping < now:
                        next_ping = now + interval
                if self.peer_closed():
                    return

        # -- control --
        def control(self, method, name):
            if method == "GET" and name == "stats":
                return self.send_json(200, self.stats())
            if method == "GET" and name == "push-log":
                with srv.lock:
                    return self.send_json(200, list(srv.push_log))
            if method != "POST":
                return self.send_json(404, {"error": "not_found"})
            try:
                body = json.loads(self.body or b"{}")
            except ValueError:
                return self.send_json(400, {"error": "bad_json"})
            if name == "reset":
                srv.reset()
                return self.send_json(200, {"ok": True})
            if name == "drop-streams":
                srv.drop_streams()
                return self.send_json(200, {"ok": True})
            if name == "deliver":
                try:
                    r = srv.deliver(body.get("account", ""),
                                    body.get("subject", "Test message"),
                                    body.get("from", "carol@example.test"),
                                    body.get("mailbox", "inbox"))
                except KeyError as exc:
                    return self.send_json(404, {"error": f"unknown {exc}"})
                return self.send_json(200, r)
            if name == "password":
                # A password changed on the server: event streams already
                # open stay open (authentication was at their start).
                with srv.lock:
                    acc = srv.by_login.get(body.get("account", ""))
                    if acc is None or not isinstance(body.get("password"), str):
                        return self.send_json(404, {"error": "unknown account"})
                    acc.password = body["password"]
                return self.send_json(200, {"ok": True})
            if name == "config":
                with srv.lock:
                    for k, v in body.items():
                        if k not in srv.cfg:
                            return self.send_json(400, {"error": f"unknown knob {k}"})
                        srv.cfg[k] = type(srv.defaults[k])(v)
                    return self.send_json(200, dict(srv.cfg))
            return self.send_json(404, {"error": "not_found"})

        def stats(self):
            return srv.stats()

    return Handler


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--public-origin", default="https://mail.example.test")
    ap.add_argument("--users", default=DEFAULT_USERS)
    ap.add_argument("--verify-delay", type=float, default=60.0)
    ap.add_argument("--verify-interval", type=float, default=None,
                    help="minimum time between verifications per account "
                         "(default: the verify delay)")
    ap.add_argument("--coalesce", type=float, default=1.0)
    ap.add_argument("--retry-delay", type=float, default=60.0)
    ap.add_argument("--retries", type=int, default=3)
    ap.add_argument("--min-ping", type=float, default=30.0)
    ap.add_argument("--allow-loopback-push", action="store_true")
    ap.add_argument("--push-route", action="append", default=[],
                    metavar="PUBLIC=LOOPBACK")
    ap.add_argument("--push-cafile")
    ap.add_argument("--account-rate", type=int, default=1000)
    ap.add_argument("--anon-rate", type=int, default=100)
    ap.add_argument("--fail-ban", type=int, default=100)
    a = ap.parse_args(argv)
    routes = {}
    for r in a.push_route:
        pub, sep, local = r.partition("=")
        if not sep:
            ap.error(f"--push-route needs PUBLIC=LOOPBACK: {r}")
        routes[pub] = local
    srv = StalwartServer(a.port, a.public_origin, a.users, a.verify_delay,
                         a.verify_interval, a.coalesce, a.retry_delay, a.retries,
                         a.min_ping, a.allow_loopback_push, routes, a.push_cafile,
                         a.account_rate, a.anon_rate, a.fail_ban)
    try:
        srv.start()
    except OSError as exc:
        print(f"stalwart-test: cannot listen on 127.0.0.1:{a.port}: {exc}", file=sys.stderr)
        return 1
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    print(dumps({"port": srv.port, "control": f"http://127.0.0.1:{srv.port}/_control/",
                 "session": f"http://127.0.0.1:{srv.port}/jmap/session",
                 "accounts": {acc.login: acc.id for acc in srv.accounts.values()}}),
          flush=True)
    done.wait()
    srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
