#!/usr/bin/env python3
"""Resident memory of postern-jmap while the CardDAV relay moves a large
vCard (a card with a photo of MIB MiB, 5 by default) up and down, against
the same card PUT and read straight at Cyrus. Loopback only. Builds
(without sanitizers) into build/bench unless POSTERN_BUILDDIR names a build:
    python3 bench/dav.py [MiB]"""
import base64
import os
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("POSTERN_SRCDIR", SRC)
if "POSTERN_BUILDDIR" not in os.environ:
    os.environ["POSTERN_BUILDDIR"] = os.path.join(SRC, "build", "bench")
    subprocess.run([os.path.join(SRC, "scripts", "build"), os.environ["POSTERN_BUILDDIR"]],
                   check=True)
sys.path.insert(0, os.path.join(SRC, "tests/harness"))
sys.path.insert(0, os.path.join(SRC, "bench"))
from stack import Stack  # noqa: E402
from client import Client  # noqa: E402
from blob import mem, responder_pids  # noqa: E402

ALICE, PW = "alice@example.test", "alice-demo-pass"


def card(mib):
    """A vCard 3.0 of about mib MiB: a person and a photo (base64, folded
    at 75 octets as RFC 6350 says)."""
    photo = base64.b64encode(os.urandom(mib * (1 << 20) * 3 // 4)).decode()
    folded = "\r\n ".join(photo[i:i + 74] for i in range(0, len(photo), 74))
    return ("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:bench-big\r\nFN:Big Photo\r\n"
            "N:Photo;Big;;;\r\nEMAIL:big@example.test\r\nPHOTO;ENCODING=b;TYPE=JPEG:" + folded + "\r\nEND:VCARD\r\n").encode()


def curl(args):
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total} %{size_download}"] + args,
                       capture_output=True, text=True, check=True)
    code, t, down = r.stdout.split()
    return int(code), float(t), int(down)


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    root = tempfile.mkdtemp(prefix="postern-perf-dav-")
    body = card(mib)
    path = os.path.join(root, "big.vcf")
    with open(path, "wb") as f:
        f.write(body)
    s = Stack(root, seed=False, conf_extra={"api_budget": "0"})
    s.start()
    try:
        c = Client(s.url)
        assert c.login(ALICE, PW).status == 200
        hdr = ["-H", f"Cookie: postern_session={c.cookie}", "-H", "X-Postern-CSRF: 1"]
        book = f"/api/dav/addressbooks/user/{ALICE}/Default/"
        # Every process once through the relay (lighttpd may use any).
        for _ in range(6):
            curl(hdr + ["-X", "PROPFIND", "-H", "Depth: 0", s.url + book])
        pids = responder_pids(s.lighttpd.pid, b"/postern-jmap")
        before = {p: mem(p) for p in pids}
        t0 = time.monotonic()
        code, t_up, _ = curl(hdr + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary", "@" + path,
                                    s.url + book + "big.vcf"])
        assert code in (201, 204), f"PUT through postern: {code}"
        code, t_down, size = curl(hdr + [s.url + book + "big.vcf"])
        assert code == 200, f"GET through postern: {code}"
        after = {p: mem(p) for p in pids}
        auth = ["-H", "Authorization: Basic " + base64.b64encode(f"{ALICE}:{PW}".encode()).decode()]
        direct = f"{s.cyrus.base_url}/dav/addressbooks/user/{ALICE}/Default/big2.vcf"
        _, c_up, _ = curl(auth + ["-X", "PUT", "-H", "Content-Type: text/vcard", "--data-binary", "@" + path, direct])
        _, c_down, _ = curl(auth + [direct])
        print(f"vCard of {len(body):,} bytes (read back {size:,}), postern-jmap processes: {len(pids)}")
        for p in pids:
            print(f"  pid {p}: VmRSS {before[p]['VmRSS']:,} -> {after[p]['VmRSS']:,} kB, "
                  f"VmHWM {before[p]['VmHWM']:,} -> {after[p]['VmHWM']:,} kB "
                  f"(peak growth {after[p]['VmHWM'] - before[p]['VmHWM']:,} kB)")
        growth = max(after[p]["VmHWM"] - before[p]["VmHWM"] for p in pids)
        print(f"largest peak growth: {growth:,} kB = {growth * 1024 / len(body):.3f} of the card's size")
        print(f"PUT through postern {t_up:.3f} s, straight to Cyrus {c_up:.3f} s (ratio {t_up / c_up:.2f}); "
              f"GET through postern {t_down:.3f} s, straight {c_down:.3f} s (ratio {t_down / c_down:.2f}); "
              f"total {time.monotonic() - t0:.1f} s")
    finally:
        s.stop()


if __name__ == "__main__":
    main()
