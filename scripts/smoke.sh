#!/usr/bin/env bash
# Smoke test of the command-line tool: runs the end-to-end commands that exist so far.
# Grows with each issue (the pipeline issue turns it into a tiny grid over every model).
set -euo pipefail
dkp=${1:-build/dkp}
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }
start=$(date +%s)
"$dkp" --version >/dev/null || fail "dkp --version"
"$dkp" data list --quiet >/dev/null || fail "dkp data list"
"$dkp" data verify --only uci/yacht >/dev/null || fail "dkp data verify"
set +e
"$dkp" nonsense >/dev/null 2>&1; rc=$?
set -e
[ "$rc" = 2 ] || fail "dkp nonsense exited $rc, expected 2"
echo "smoke: OK ($(( $(date +%s) - start )) s)"
