#!/usr/bin/env bash
# Test (CTest `grid_kill_resume`, run from the repository root): `dkp grid run` killed with
# SIGKILL leaves no partial cell in the store (no result.json but whole ones, no temporary
# files; the interrupted cells show as interrupted: neither done nor running, since nothing holds
# their run.lock), the rerun completes them from their checkpoints, and the store then holds the
# same results, traces and tables as an uninterrupted run's, to the last digit.
#   scripts/kill-resume-test.sh DKP
set -euo pipefail
dkp=$(realpath "${1:?usage: scripts/kill-resume-test.sh DKP}")
fail() { echo "kill-resume-test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'pkill -KILL -f -- "$work/" 2>/dev/null || true; rm -rf "$work"' EXIT
# Two SGP cells of a few seconds each (yacht, 6000 steps, 100 inducing points).
cat >"$work/kill.yaml" <<'YAML'
name: killtest
family: generic
reference: agw
description: two SGP cells long enough to be killed mid-run
protocol:
  steps: 6000
  lr_schedule: [[0, 1.0e-2]]
  kl_anneal: 0
  train_samples: 1
  test_samples: 10
  inducing: 100
  batch: 256
  kernel: se
  width: input
  seed: 0
axes:
  datasets: [yacht]
  splits: [0, 1]
  depths: [1]
  models:
    - {model: sgp}
YAML
results_of() {  # every cell's results and final parameters (not timings or counters), and trace
  for r in $(find "$1" -name result.json | sort); do
    echo "== ${r#"$1"}"
    grep -E '"(config_hash|elbo[a-z_]*|test_[a-z0-9_]*|n_train|n_test|layer[^"]*|likelihood[^"]*)"' "$r"
    cat "$(dirname "$r")/trace.csv"
  done
}

"$dkp" grid run "$work/kill.yaml" --results "$work/a" --quiet >"$work/a.log" 2>&1 ||
  fail "uninterrupted grid run: $(tail -3 "$work/a.log")"
"$dkp" tables "$work/kill.yaml" --results "$work/a" --out "$work/ta" --quiet >/dev/null ||
  fail "tables of the uninterrupted run"

"$dkp" grid run "$work/kill.yaml" --results "$work/b" --quiet >"$work/b.log" 2>&1 &
runner=$!
# Kill the runner once the first cell has trained for a while (its manifest is written before
# training starts).
for _ in $(seq 100); do
  [ -n "$(find "$work/b" -name manifest.json 2>/dev/null)" ] && break
  sleep 0.1
done
sleep 1
kill -KILL "$runner"
wait "$runner" 2>/dev/null || true
# The runner's children get SIGTERM when it dies; they checkpoint and exit.
for _ in $(seq 100); do
  pgrep -f -- "$work/b/" >/dev/null || break
  sleep 0.1
done
pgrep -f -- "$work/b/" >/dev/null && fail "cells still running 10 s after the runner was killed"
[ -z "$(find "$work/b" -name '*.tmp.*')" ] || fail "temporary files left: $(find "$work/b" -name '*.tmp.*')"
for r in $(find "$work/b" -name result.json); do
  hash=$(basename "$(dirname "$r")")
  grep -q "\"config_hash\":\"$hash\"\|\"config_hash\": \"$hash\"" "$r" || fail "$r is not a whole result"
done
done_cells=$(find "$work/b" -name result.json | wc -l)
[ "$done_cells" -lt 2 ] || fail "the runner was killed too late: both cells were done"
"$dkp" grid status "$work/kill.yaml" --results "$work/b" >"$work/status" ||
  fail "grid status after the kill"
grep -Eq "done $done_cells, running 0, interrupted [12], missing [01], failed 0, damaged 0, stale 0" \
  "$work/status" ||
  fail "grid status after the kill: $(cat "$work/status")"
ls "$work"/b/killtest/yacht/split*/*/checkpoint.bin >/dev/null 2>&1 ||
  fail "the interrupted cell left no checkpoint"

"$dkp" grid run "$work/kill.yaml" --results "$work/b" --quiet >"$work/b2.log" 2>&1 ||
  fail "the rerun: $(tail -3 "$work/b2.log")"
grep -q '"resumed_from_step": [1-9]' $(find "$work/b" -name result.json) ||
  fail "no cell resumed from its checkpoint"
"$dkp" tables "$work/kill.yaml" --results "$work/b" --out "$work/tb" --quiet >/dev/null ||
  fail "tables of the interrupted run"
[ "$(results_of "$work/a" | grep -c '"test_ll"')" = 2 ] || fail "the uninterrupted run has not 2 results"
diff <(results_of "$work/a") <(results_of "$work/b") >"$work/diff" ||
  fail "results differ from the uninterrupted run's: $(head -20 "$work/diff")"
diff -r "$work/ta" "$work/tb" >"$work/tdiff" || fail "tables differ: $(head -20 "$work/tdiff")"
echo "kill-resume-test: OK (killed with $done_cells of 2 cells done; resumed, identical results)"
