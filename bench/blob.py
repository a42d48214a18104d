#!/usr/bin/env python3
"""Resident memory of postern-blob while it moves 200 MiB each way, and
download throughput against lighttpd serving the same file statically.
Loopback only. Builds (without sanitizers) into build/bench unless
POSTERN_BUILDDIR names a build:
    python3 bench/blob.py [MiB [rounds]]
measure() returns the figures (bench/suite/blobs.py keeps them)."""
import base64, hashlib, json, os, re, shutil, subprocess, sys, tempfile, time
SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("POSTERN_SRCDIR", SRC)
if "POSTERN_BUILDDIR" not in os.environ:
    os.environ["POSTERN_BUILDDIR"] = os.path.join(SRC, "build", "bench")
    subprocess.run([os.path.join(SRC, "scripts", "build"), os.environ["POSTERN_BUILDDIR"]],
                   check=True)
sys.path.insert(0, os.path.join(SRC, "tests/harness"))
from stack import Stack
from client import Client

MIB = 1 << 20
SIZE = 200 * MIB
ALICE, PW = "alice@example.test", "alice-demo-pass"


class PerfStack(Stack):
    """The test stack with a www folder of its own and room for 200 MiB."""
    def __init__(self, root, www, **kw):
        super().__init__(root, **kw)
        self.www = www

    def lighttpd_values(self):
        values = super().lighttpd_values()
        www = '"' + self.www + '"'
        values.update({"var.postern_www": www, "server.document-root": www,
                       "server.max-request-size": "262144"})
        return values


def blob_pids(parent):
    """The postern-blob processes this stack's lighttpd runs (not those of
    other stacks on the machine)."""
    return responder_pids(parent, b"/postern-blob")


def responder_pids(parent, name):
    """The processes of one responder (name: the end of its path) that
    lighttpd (pid parent) runs."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")[0]
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        if cmd.endswith(name) and ppid == parent:
            out.append(int(pid))
    return sorted(out)


def mem(pid):
    d = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM"):
            d[k] = int(v.split()[0])
    return d


def curl(args):
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w",
                        "%{http_code} %{time_total} %{size_download} %{size_upload}"] + args,
                       capture_output=True, text=True, check=True)
    code, t, down, up = r.stdout.split()
    return int(code), float(t), int(down), int(up)


def median(ts):
    return sorted(ts)[len(ts) // 2]


def measure(mib=200, rounds=5):
    """Moves a blob of mib MiB up and down through postern; returns the
    resident memory of the postern-blob processes before and after, and
    median times (s) of rounds downloads through postern, from lighttpd
    as a static file and straight from Cyrus, interleaved."""
    size = mib * MIB
    out = {"mib": mib, "rounds": rounds}
    root = tempfile.mkdtemp(prefix="postern-perf-blob-")
    www = os.path.join(root, "www")
    os.makedirs(www)
    shutil.copy(os.path.join(SRC, "www/index.html"), www)
    big = os.path.join(www, "big.bin")
    with open(big, "wb") as f:
        for _ in range(size // MIB):
            f.write(os.urandom(MIB))
    s = PerfStack(root, www, seed=False, conf_extra={"upload_max": "250M", "api_budget": "0"})
    s.start()
    try:
        c = Client(s.url)
        assert c.login(ALICE, PW).status == 200
        cookie = f"postern_session={c.cookie}"
        hdr = ["-H", f"Cookie: {cookie}", "-H", "X-Postern-CSRF: 1"]
        # warm up both processes (lighttpd may use either) on every path
        small = os.path.join(root, "small.bin")
        with open(small, "wb") as f:
            f.write(os.urandom(256 * 1024))
        for _ in range(6):
            r = subprocess.run(["curl", "-s", "-H", f"Cookie: {cookie}", "-H", "X-Postern-CSRF: 1",
                                "-H", "Content-Type: application/octet-stream",
                                "--data-binary", "@" + small, f"{s.url}/api/upload/{ALICE}"],
                               capture_output=True, text=True, check=True)
            b = json.loads(r.stdout)["blobId"]
            curl(hdr + [f"{s.url}/api/blob/{ALICE}/{b}/s.bin"])
        pids = blob_pids(s.lighttpd.pid)
        before = {p: mem(p) for p in pids}
        print("postern-blob processes:", pids)
        out["pids"] = len(pids)
        print("before:", before)
        # the blob up
        r = subprocess.run(["curl", "-s", "-w", "\\n%{time_total}", "-H", f"Cookie: {cookie}",
                            "-H", "X-Postern-CSRF: 1", "-H", "Content-Type: application/octet-stream",
                            "--data-binary", "@" + big, f"{s.url}/api/upload/{ALICE}"],
                           capture_output=True, text=True, check=True)
        body, t_up = r.stdout.rsplit("\n", 1)
        blob = json.loads(body)["blobId"]
        assert json.loads(body)["size"] == size, body
        mid = {p: mem(p) for p in pids}
        # and down, checked byte for byte once
        url = f"{s.url}/api/blob/{ALICE}/{blob}/big.bin"
        r = subprocess.run(f"curl -s -H 'Cookie: {cookie}' '{url}' | sha256sum", shell=True,
                           capture_output=True, text=True, check=True)
        want = hashlib.sha256(open(big, "rb").read()).hexdigest()
        assert r.stdout.split()[0] == want, "download differs"
        after = {p: mem(p) for p in pids}
        print("after upload:", mid)
        print("after download:", after)
        for p in pids:
            print(f"pid {p}: VmRSS {before[p]['VmRSS']} -> {after[p]['VmRSS']} kB "
                  f"(growth {after[p]['VmRSS'] - before[p]['VmRSS']} kB), "
                  f"VmHWM {before[p]['VmHWM']} -> {after[p]['VmHWM']} kB "
                  f"(growth {after[p]['VmHWM'] - before[p]['VmHWM']} kB)")
        out["before"], out["after_up"], out["after_down"] = (
            [before[p] for p in pids], [mid[p] for p in pids], [after[p] for p in pids])
        out["up_postern"] = float(t_up)
        print(f"upload {mib} MiB through postern: {float(t_up):.2f} s = {mib / float(t_up):.0f} MiB/s")
        # direct upload to Cyrus for reference
        auth = base64.b64encode(f"{ALICE}:{PW}".encode()).decode()
        code, t, _, _ = curl(["-H", f"Authorization: Basic {auth}", "-H", "Content-Type: application/octet-stream",
                              "--data-binary", "@" + big, f"{s.cyrus.base_url}/jmap/upload/{ALICE}/"])
        print(f"upload {mib} MiB straight to Cyrus: {t:.2f} s = {mib / t:.0f} MiB/s ({code})")
        out["up_cyrus"] = t
        # throughput: rounds each, interleaved
        res = {"postern": [], "static": [], "cyrus": []}
        cyrus_url = f"{s.cyrus.base_url}/jmap/download/{ALICE}/{blob}/big.bin?accept=application/octet-stream"
        for _ in range(rounds):
            code, t, n, _ = curl(["-H", f"Cookie: {cookie}", url])
            assert code == 200 and n == size
            res["postern"].append(t)
            code, t, n, _ = curl([f"{s.url}/big.bin"])
            assert code == 200 and n == size
            res["static"].append(t)
            code, t, n, _ = curl(["-H", f"Authorization: Basic {auth}", cyrus_url])
            assert code == 200 and n == size
            res["cyrus"].append(t)
        for k, ts in res.items():
            ts.sort()
            med = ts[len(ts) // 2]
            out["down_" + k] = med
            print(f"download {mib} MiB, {k:8}: median {med:.3f} s = {mib / med:.0f} MiB/s "
                  f"(best {mib / ts[0]:.0f} MiB/s)")
        final = {p: mem(p) for p in pids}
        out["final"] = [final[p] for p in pids]
        print(f"after {rounds} more downloads:", final)
    finally:
        s.stop()
        shutil.rmtree(root, ignore_errors=True)
    return out


def main():
    args = [int(x) for x in sys.argv[1:3]]
    print(json.dumps(measure(*args)))


if __name__ == "__main__":
    main()
