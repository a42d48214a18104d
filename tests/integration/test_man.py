#!/usr/bin/env python3
"""The man pages: mandoc finds nothing to warn about, make wrote every
installed path in, and postern.conf(5) and conf/postern.conf name exactly
the keys of shared/cfg.c's table, so that the pages cannot drift from the
code."""
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "harness"))

from stack import BUILDDIR, SRCDIR  # noqa: E402
from tap import Tap  # noqa: E402

PAGES = ["postern.conf.5", "postern.8", "postern-pushd.8", "postern-admin.8"]


def cfg_keys():
    """The names in cfg.c's cfg_keys[] table."""
    with open(os.path.join(SRCDIR, "shared", "cfg.c")) as f:
        text = f.read()
    table = text[text.index("cfg_keys[] = {"):]
    table = table[:table.index("};")]
    return re.findall(r'\{\s*"([a-z_]+)",\s*T_', table)


def main():
    t = Tap()
    mandoc = shutil.which("mandoc")
    for page in PAGES:
        path = os.path.join(BUILDDIR, "man", page)
        t.ok(os.path.exists(path), f"{page} is built")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()
        t.ok("@" not in re.sub(r"[\w.-]+@[\w.-]+", "", text),
             f"{page}: every @dir@ is written in")
        if mandoc:
            r = subprocess.run([mandoc, "-T", "lint", "-W", "warning", path],
                               capture_output=True, text=True)
            t.ok(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(),
                 f"{page}: mandoc -T lint finds no warning or error", r.stdout + r.stderr)
        else:
            print(f"ok {t.n + 1} # SKIP {page}: no mandoc")
            t.n += 1

    keys = cfg_keys()
    t.ok(len(keys) >= 30, "cfg.c's table is read", keys)
    with open(os.path.join(SRCDIR, "man", "postern.conf.5.in")) as f:
        man = f.read()
    documented = re.findall(r"^\.It Cm ([a-z_]+) Ns = Ns", man, re.M)
    missing = [k for k in keys if k not in documented]
    t.ok(not missing, "postern.conf(5) documents every key of cfg.c", missing)
    extra = [k for k in documented if k not in keys]
    t.ok(not extra, "postern.conf(5) documents no key cfg.c lacks", extra)
    with open(os.path.join(SRCDIR, "conf", "postern.conf")) as f:
        conf = f.read()
    shown = re.findall(r"^#([a-z_]+) =", conf, re.M)
    missing = [k for k in keys if k not in shown]
    t.ok(not missing, "conf/postern.conf shows every key of cfg.c", missing)
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
