#!/bin/sh
# Runs one of the app's unit tests (node's own test runner, no browser)
# and prints TAP; skips where node is missing. Node 18.15 and later take
# --test-reporter; before it, TAP was node --test's only output.
command -v node >/dev/null 2>&1 || { echo "1..0 # SKIP node is not installed"; exit 0; }
if node --test-reporter=tap -e "" >/dev/null 2>&1; then
  exec node --test --test-reporter=tap "$@"
fi
exec node --test "$@"
