#!/usr/bin/env python3
"""A small SMTP sink for tests: Cyrus's JMAP EmailSubmission talks to it.

It answers EHLO with ENHANCEDSTATUSCODES (without it Cyrus maps rejections to
the wrong JMAP error), accepts MAIL/RCPT/DATA, stores every message in a spool
directory (NNNNNN.eml plus NNNNNN.json with the envelope) and hands recipients
in the local domain back to Cyrus over LMTP, so alice -> bob mail really
arrives in bob's INBOX.

Behaviour tests can rely on:
- a local-domain recipient that is not a known user (when a user check is
  given) is refused at RCPT with 550 5.1.1;
- any recipient in a `.invalid` domain is refused with 550 5.1.2;
- lines over MAX_LINE bytes get 500 5.5.2; a message over max_message_bytes
  gets 552 5.3.4 (SIZE is advertised);
- local hand-off is asynchronous (a queue and one worker), like a real MTA:
  Cyrus may still hold the sender's locks while it waits for our DATA reply,
  so delivering to the sender's own mailbox synchronously would deadlock.
  wait_idle() waits for the queue to drain.

Library: SmtpSink(port, spool_dir, ...).start() / .stop().
CLI: python3 smtpsink.py --port N --spool DIR [--lmtp-socket PATH]
     [--local-domain example.test] [--sasldb PATH] [--max-size BYTES]
Standard library only (the old smtpd module is gone from recent Pythons).
"""

import argparse
import datetime
import email.utils
import json
import os
import queue
import re
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time

MAX_LINE = 1000             # RFC 5321 4.5.3.1.6: text line incl. CRLF
MAX_MESSAGE = 25 * 1024 * 1024
MAX_CONNECTIONS = 64
MAX_RECIPIENTS = 100
IDLE_TIMEOUT = 120          # seconds a client may stay silent
HOSTNAME = "sink.postern.test"
ADDR_RE = re.compile(r"^\s*<([^<>]*)>(.*)$")


class LineTooLong(Exception):
    pass


def sasldb_has_user(sasldb_path, login):
    """True if `login` (user@realm) is in the sasldb: sasldblistusers2 prints
    one `user@realm: userPassword` line per secret."""
    try:
        out = subprocess.run(["/usr/sbin/sasldblistusers2", "-f", sasldb_path],
                             capture_output=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    wanted = login.lower().encode()
    return any(line.split(b":", 1)[0].strip().lower() == wanted
               for line in out.splitlines())


def parse_path(arg, keyword):
    """'FROM:<a@b> SIZE=10' -> ('a@b', {'SIZE': '10'}) or None if malformed."""
    if not arg.upper().startswith(keyword + ":"):
        return None
    m = ADDR_RE.match(arg[len(keyword) + 1:])
    if not m:
        return None
    params = {}
    for p in m.group(2).split():
        k, _, v = p.partition("=")
        params[k.upper()] = v
    return m.group(1).strip(), params


class Session:
    """One SMTP conversation over a socket (runs in its own thread)."""

    def __init__(self, sink, conn, peer):
        self.sink = sink
        self.conn = conn
        self.peer = peer
        self.rfile = conn.makefile("rb")
        self.helo = None
        self.reset()

    def reset(self):
        self.mail_from = None
        self.rcpts = []

    def reply(self, text):
        self.conn.sendall(text.encode() + b"\r\n")

    def readline(self):
        line = self.rfile.readline(MAX_LINE + 1)
        if not line:
            raise EOFError
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            self._discard_rest_of_line()
            raise LineTooLong
        return line

    def _discard_rest_of_line(self):
        while True:
            chunk = self.rfile.readline(MAX_LINE)
            if not chunk or chunk.endswith(b"\n"):
                return

    def run(self):
        try:
            self.reply(f"220 {HOSTNAME} ESMTP postern test sink")
            while True:
                try:
                    line = self.readline()
                except LineTooLong:
                    self.reply("500 5.5.2 Line too long")
                    continue
                if not self.handle(line.decode("utf-8", "replace").rstrip("\r\n")):
                    return
        except (EOFError, OSError):
            pass
        finally:
            self.conn.close()

    def handle(self, line):
        """Dispatch one command; False ends the session."""
        verb, _, arg = line.partition(" ")
        verb = verb.upper()
        handler = {
            "EHLO": self.do_ehlo, "HELO": self.do_helo, "MAIL": self.do_mail,
            "RCPT": self.do_rcpt, "DATA": self.do_data, "RSET": self.do_rset,
            "NOOP": self.do_noop, "VRFY": self.do_vrfy,
        }.get(verb)
        if verb == "QUIT":
            self.reply("221 2.0.0 Bye")
            return False
        if handler is None:
            self.reply("502 5.5.1 Command not implemented")
        else:
            handler(arg.strip())
        return True

    def do_ehlo(self, arg):
        if not arg:
            return self.reply("501 5.5.4 EHLO needs a domain")
        self.helo = arg
        self.reset()
        self.reply(f"250-{HOSTNAME} greets {arg}")
        self.reply("250-8BITMIME")
        self.reply(f"250-SIZE {self.sink.max_message_bytes}")
        self.reply("250 ENHANCEDSTATUSCODES")

    def do_helo(self, arg):
        if not arg:
            return self.reply("501 5.5.4 HELO needs a domain")
        self.helo = arg
        self.reset()
        self.reply(f"250 {HOSTNAME}")

    def do_mail(self, arg):
        if self.mail_from is not None:
            return self.reply("503 5.5.1 Nested MAIL command")
        parsed = parse_path(arg, "FROM")
        if parsed is None:
            return self.reply("501 5.5.4 Syntax: MAIL FROM:<address>")
        addr, params = parsed
        size = params.get("SIZE", "0")
        if size.isdigit() and int(size) > self.sink.max_message_bytes:
            return self.reply("552 5.3.4 Message size exceeds fixed limit")
        self.mail_from = addr
        self.reply("250 2.1.0 Sender OK")

    def do_rcpt(self, arg):
        if self.mail_from is None:
            return self.reply("503 5.5.1 Need MAIL before RCPT")
        parsed = parse_path(arg, "TO")
        if parsed is None or "@" not in parsed[0]:
            return self.reply("501 5.1.3 Syntax: RCPT TO:<user@domain>")
        if len(self.rcpts) >= MAX_RECIPIENTS:
            return self.reply("452 4.5.3 Too many recipients")
        code = self.sink.check_recipient(parsed[0])
        if code:
            return self.reply(code)
        self.rcpts.append(parsed[0])
        self.reply("250 2.1.5 Recipient OK")

    def do_data(self, arg):
        if self.mail_from is None or not self.rcpts:
            return self.reply("503 5.5.1 Need MAIL and RCPT before DATA")
        self.reply("354 End data with <CR><LF>.<CR><LF>")
        data, error = self.read_data()
        if error:
            self.reply(error)
        else:
            self.sink.accept(self.helo, self.peer, self.mail_from, self.rcpts, data)
            self.reply("250 2.0.0 Message accepted")
        self.reset()

    def read_data(self):
        """Read until the lone dot, undoing dot-stuffing; keep reading past a
        limit so the client's next command is not taken for message text."""
        lines, size, error = [], 0, None
        while True:
            try:
                line = self.readline()
            except LineTooLong:
                error = error or "500 5.5.2 Line too long"
                continue
            if line in (b".\r\n", b".\n"):
                return b"".join(lines), error
            if line.startswith(b"."):
                line = line[1:]
            size += len(line)
            if size > self.sink.max_message_bytes:
                error = "552 5.3.4 Message size exceeds fixed limit"
                lines = []
            elif not error:
                lines.append(line)

    def do_rset(self, arg):
        self.reset()
        self.reply("250 2.0.0 OK")

    def do_noop(self, arg):
        self.reply("250 2.0.0 OK")

    def do_vrfy(self, arg):
        self.reply("252 2.5.0 Cannot VRFY user, but will accept message")


class SmtpSink:
    """The server: an accept thread, one thread per connection, and one
    worker that hands local recipients to Cyrus over LMTP."""

    def __init__(self, port, spool_dir, host="127.0.0.1", local_domain="example.test",
                 lmtp_socket=None, is_local_user=None, max_message_bytes=MAX_MESSAGE):
        self.host = host
        self.port = int(port)
        self.spool_dir = os.path.abspath(spool_dir)
        self.local_domain = local_domain.lower()
        self.lmtp_socket = lmtp_socket
        self.is_local_user = is_local_user
        self.max_message_bytes = max_message_bytes
        self._listener = None
        self._threads = []
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._lock = threading.Lock()
        self._counter = 0
        self._queue = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition(self._lock)

    # -- life cycle -----------------------------------------------------------

    def start(self):
        os.makedirs(self.spool_dir, exist_ok=True)
        self._counter = len([n for n in os.listdir(self.spool_dir) if n.endswith(".eml")])
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((self.host, self.port))
        self._listener.listen(16)
        self.port = self._listener.getsockname()[1]  # port 0 picks one
        for target in (self._accept_loop, self._delivery_loop):
            t = threading.Thread(target=target, daemon=True, name=f"smtpsink-{target.__name__}")
            t.start()
            self._threads.append(t)
        return self

    def stop(self, timeout=10):
        """Stop accepting, finish queued local deliveries, return."""
        if self._listener is None:
            return
        self.wait_idle(timeout)
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        self._listener = None
        self._queue.put(None)
        for t in self._threads:
            t.join(timeout)
        self._threads = []

    def wait_idle(self, timeout=10):
        """Wait until every accepted message has been handed to LMTP."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def _accept_loop(self):
        while True:
            try:
                conn, peer = self._listener.accept()
            except OSError:
                return  # listener closed by stop()
            if not self._slots.acquire(blocking=False):
                conn.sendall(b"421 4.3.2 Too many connections\r\n")
                conn.close()
                continue
            conn.settimeout(IDLE_TIMEOUT)
            threading.Thread(target=self._serve, args=(conn, peer), daemon=True).start()

    def _serve(self, conn, peer):
        try:
            Session(self, conn, peer).run()
        finally:
            self._slots.release()

    # -- policy ---------------------------------------------------------------

    def is_local(self, addr):
        return addr.rpartition("@")[2].lower() == self.local_domain

    def check_recipient(self, addr):
        """None to accept, else the SMTP reply refusing the recipient."""
        domain = addr.rpartition("@")[2].lower()
        if domain.endswith(".invalid"):
            return "550 5.1.2 Bad destination system address"
        if self.is_local(addr) and self.is_local_user and not self.is_local_user(addr):
            return "550 5.1.1 No such user here"
        return None

    # -- storage and hand-off -----------------------------------------------------

    def accept(self, helo, peer, mail_from, rcpts, data):
        """Store the message (with a Received trace header) and queue the
        local recipients for LMTP."""
        received = (f"Received: from {helo or 'unknown'} ([{peer[0]}])\r\n"
                    f"\tby {HOSTNAME} (postern test sink); {email.utils.format_datetime(datetime.datetime.now(datetime.timezone.utc))}\r\n")
        data = received.encode() + data
        with self._lock:
            self._counter += 1
            base = os.path.join(self.spool_dir, f"{self._counter:06d}")
            local = [r for r in rcpts if self.is_local(r) and self.lmtp_socket]
            self._pending += len(local)
        with open(base + ".eml", "wb") as f:
            f.write(data)
        record = {"from": mail_from, "to": list(rcpts), "helo": helo,
                  "received": time.time(), "lmtp": {}}
        self._write_record(base, record)
        for rcpt in local:
            self._queue.put((base, record, mail_from, rcpt, data))

    def _write_record(self, base, record):
        with self._lock:
            with open(base + ".json.tmp", "w") as f:
                json.dump(record, f, indent=1)
            os.replace(base + ".json.tmp", base + ".json")

    def _delivery_loop(self):
        while True:
            item = self._queue.get()
            if item is None:
                return
            base, record, mail_from, rcpt, data = item
            record["lmtp"][rcpt] = self._lmtp_deliver(mail_from, rcpt, data)
            self._write_record(base, record)
            with self._idle:
                self._pending -= 1
                self._idle.notify_all()

    def _lmtp_deliver(self, mail_from, rcpt, data, attempts=5):
        """One recipient per LMTP transaction; retried briefly because lmtpd
        may be momentarily busy. Returns 'ok' or the last error."""
        error = "not tried"
        for attempt in range(attempts):
            try:
                with smtplib.LMTP(self.lmtp_socket, timeout=30) as lmtp:
                    refused = lmtp.sendmail(mail_from, [rcpt], data)
                if not refused:
                    return "ok"
                error = repr(refused)
            except (smtplib.SMTPException, OSError) as e:
                error = repr(e)
            time.sleep(0.2 * (attempt + 1))
        print(f"smtpsink: LMTP delivery to {rcpt} failed: {error}", file=sys.stderr, flush=True)
        return error

    # -- inspection ---------------------------------------------------------------

    def messages(self):
        """Every stored message: dicts with from, to, lmtp, path, data."""
        out = []
        for name in sorted(os.listdir(self.spool_dir)):
            if not name.endswith(".json"):
                continue
            base = os.path.join(self.spool_dir, name[:-5])
            with open(base + ".json") as f:
                record = json.load(f)
            with open(base + ".eml", "rb") as f:
                record["data"] = f.read()
            record["path"] = base + ".eml"
            out.append(record)
        return out


def main(argv=None):
    p = argparse.ArgumentParser(description="SMTP sink for the postern tests")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--spool", required=True, help="directory for received messages")
    p.add_argument("--local-domain", default="example.test")
    p.add_argument("--lmtp-socket", help="Cyrus lmtpd unix socket for local recipients")
    p.add_argument("--sasldb", help="refuse local recipients missing from this sasldb")
    p.add_argument("--max-size", type=int, default=MAX_MESSAGE)
    args = p.parse_args(argv)
    check = (lambda addr: sasldb_has_user(args.sasldb, addr)) if args.sasldb else None
    sink = SmtpSink(args.port, args.spool, args.host, args.local_domain,
                    args.lmtp_socket, check, args.max_size)
    sink.start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"smtpsink: listening on {args.host}:{sink.port}, spool {sink.spool_dir}", flush=True)
    stop.wait()
    sink.stop()
    print("smtpsink: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
