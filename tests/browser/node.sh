#!/bin/sh
# Runs a browser test with node, or skips it (TAP) where node is missing.
command -v node >/dev/null 2>&1 || { echo "1..0 # SKIP node is not installed"; exit 0; }
exec node "$@"
