"""A small TAP producer for the integration tests (automake's tap-driver
reads it): numbered checks, diagnostics on failure, a plan at the end."""

import sys
import traceback


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, name, diag=""):
        self.n += 1
        if cond:
            print(f"ok {self.n} - {name}", flush=True)
        else:
            self.failed += 1
            print(f"not ok {self.n} - {name}", flush=True)
            for line in str(diag).splitlines():
                print(f"# {line}", flush=True)
        return cond

    def eq(self, got, want, name):
        return self.ok(got == want, name, f"got {got!r}, want {want!r}")

    def run(self, name, fn, *args):
        """Runs a group of checks; an exception is one failed check."""
        try:
            fn(*args)
        except Exception:
            self.ok(False, f"{name} raised", traceback.format_exc())

    def bail(self, why):
        print(f"Bail out! {why}", flush=True)
        sys.exit(1)

    def labelled(self, label):
        """This Tap with each check's name prefixed by label (one suite
        run against several web servers)."""
        return Labelled(self, label)

    def done(self):
        print(f"1..{self.n}", flush=True)
        return 1 if self.failed else 0


class Labelled:
    """A Tap whose checks are named "label: name"."""

    def __init__(self, t, label):
        self.t, self.label = t, label

    def ok(self, cond, name, diag=""):
        return self.t.ok(cond, f"{self.label}: {name}", diag)

    def eq(self, got, want, name):
        return self.t.eq(got, want, f"{self.label}: {name}")

    def run(self, name, fn, *args):
        return self.t.run(f"{self.label}: {name}", fn, *args)

    def __getattr__(self, name):
        return getattr(self.t, name)
