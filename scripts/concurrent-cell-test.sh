#!/usr/bin/env bash
# Test (CTest `concurrent_cell`, run from the repository root): what the many-machines path needs
# from a shared store. Two processes computing the same cell into one store at the same time, and
# a SIGKILL of one of them, leave one valid finished cell: `dkp grid status` says done (it parses
# result.json and checks its config_hash), result.json is whole JSON, one run directory, no
# temporary file left. Variants:
#   1. two `dkp run` of a smoke cell (its `dkp grid plan` line) started together;
#   2. two `dkp grid run --cell HASH` of that cell started together;
#   3. two `dkp run` of a longer cell started together: one runs, the other exits 75 (busy); the
#      runner is stopped (SIGSTOP) outside any file write and killed (SIGKILL): the cell is then
#      interrupted (a checkpoint, no result, no lock held, nothing partial); two more started
#      together finish it (one resumes, the other exits 75 or finds it done), with the results of
#      an uninterrupted run to the last digit.
# Then the stores of their own brought together: 4. `dkp grid merge` of two stores holding the
# same cell (one copy, one duplicate), then of a third whose copy has other numbers (a conflict:
# reported, exit 1, the destination's result kept); 5. `dkp grid plan --estimate --cell` of the
# merged cell (estimated without its own timing, beside it).
#   scripts/concurrent-cell-test.sh [DKP]   (default build/dkp)
set -euo pipefail
dkp=$(realpath "${1:-build/dkp}")
here=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "concurrent-cell-test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d)
pids=()
cleanup() {
  # Only the processes this script started, by their ids.
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

smoke=$here/experiments/smoke.yaml
# A longer version of the smoke grid (same cells but 2000 steps), for the kill.
sed -e 's/^name: smoke$/name: concurrent/' -e 's/^  steps: 20$/  steps: 2000/' "$smoke" >"$work/long.yaml"
grep -q '^  steps: 2000$' "$work/long.yaml" || fail "could not derive the long grid from $smoke"

# The hash and `dkp run` command line of a grid's cell whose label matches $3.
cell_hash() {  # GRID RESULTS LABEL
  "$dkp" grid status "$1" --results "$2" --verbose --quiet | awk -v l="$3" 'index($0, l) { print $2; exit }'
}
cell_command() {  # GRID RESULTS HASH
  "$dkp" grid plan "$1" --results "$2" --dkp "$dkp" --quiet | grep -F -- "/$3 " || true
}

# One valid finished cell HASH of GRID in STORE, and nothing else of it.
check_cell() {  # GRID STORE HASH WHAT
  local grid=$1 store=$2 hash=$3 what=$4
  local status dirs dir
  status=$("$dkp" grid status "$grid" --results "$store" --verbose --quiet) ||
    fail "$what: dkp grid status failed"
  echo "$status" | grep -Eq "^done +$hash " ||
    fail "$what: cell $hash is not done: $(echo "$status" | grep -F "$hash")"
  echo "$status" | grep -q 'damaged 0, stale 0' || fail "$what: damaged cells: $status"
  dirs=$(find "$store" -type d -name "$hash")
  [ "$(echo "$dirs" | wc -l)" = 1 ] || fail "$what: not one run directory of $hash: $dirs"
  dir=$dirs
  for f in manifest.json result.json checkpoint.bin trace.csv; do
    [ -s "$dir/$f" ] || fail "$what: $dir/$f missing or empty"
  done
  grep -Eq "\"config_hash\": ?\"$hash\"" "$dir/result.json" || fail "$what: result.json names another cell"
  tail -c 2 "$dir/result.json" | grep -q '}' || fail "$what: result.json is cut short"
  if command -v python3 >/dev/null; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dir/result.json" ||
      fail "$what: result.json is not valid JSON"
  fi
  local tmp
  tmp=$(find "$store" -name '*.tmp.*' -o -name '.*.merge.*')
  [ -z "$tmp" ] || fail "$what: temporary files left: $tmp"
}

# Starts "$@" in the background; its pid in $started.
start() {
  "$@" &
  started=$!
  pids+=("$started")
}
# Waits for a pid; its exit status in $rc.
wait_rc() {
  set +e
  wait "$1" 2>/dev/null
  rc=$?
  set -e
}

# --- 1. two `dkp run` of one smoke cell at once -------------------------------------------------
hash=$(cell_hash "$smoke" "$work/empty" "yacht/split0 diwp d2")
[ -n "$hash" ] || fail "no yacht diwp cell in $smoke"
for round in 1 2 3; do
  store=$work/run$round
  cmd=$(cell_command "$smoke" "$store" "$hash")
  [ -n "$cmd" ] || fail "dkp grid plan has no line for $hash"
  eval "start $cmd" >"$work/r1.log" 2>&1
  a=$started
  eval "start $cmd" >"$work/r2.log" 2>&1
  b=$started
  wait_rc "$a"; rca=$rc
  wait_rc "$b"; rcb=$rc
  for r in "$rca" "$rcb"; do
    [ "$r" = 0 ] || [ "$r" = 75 ] || fail "variant 1: dkp run exited $r: $(cat "$work/r1.log" "$work/r2.log")"
  done
  [ "$rca" = 0 ] || [ "$rcb" = 0 ] || fail "variant 1: neither run succeeded"
  check_cell "$smoke" "$store" "$hash" "variant 1 (round $round, exits $rca and $rcb)"
  echo "variant 1, round $round: two dkp run at once exited $rca and $rcb; one valid cell"
done

# --- 2. two `dkp grid run --cell HASH` at once ---------------------------------------------------
store=$work/grid
start "$dkp" grid run "$smoke" --results "$store" --cell "$hash" --quiet >"$work/g1.log" 2>&1
a=$started
start "$dkp" grid run "$smoke" --results "$store" --cell "$hash" --quiet >"$work/g2.log" 2>&1
b=$started
wait_rc "$a"; rca=$rc
wait_rc "$b"; rcb=$rc
if [ "$rca" != 0 ] || [ "$rcb" != 0 ]; then
  fail "variant 2: dkp grid run --cell exited $rca and $rcb: $(cat "$work/g1.log" "$work/g2.log")"
fi
check_cell "$smoke" "$store" "$hash" "variant 2"
how=$(cat "$work/g1.log" "$work/g2.log" | grep -Eo 'running elsewhere [0-9]+|reused [1-9]' | head -1 || true)
echo "variant 2: two dkp grid run --cell at once both exited 0 (the other: ${how:-computed it too?}); one valid cell"

# --- 3. SIGKILL of the process computing the cell ------------------------------------------------
long=$work/long.yaml
lhash=$(cell_hash "$long" "$work/empty" "yacht/split0 diwp d2")
[ -n "$lhash" ] || fail "no yacht diwp cell in $long"
# The uninterrupted reference.
"$dkp" grid run "$long" --results "$work/ref" --cell "$lhash" --quiet >"$work/ref.log" 2>&1 ||
  fail "the uninterrupted run: $(tail -3 "$work/ref.log")"
store=$work/kill
cmd="$(cell_command "$long" "$store" "$lhash") --checkpoint-every 100"
eval "start $cmd" >"$work/k1.log" 2>&1
a=$started
eval "start $cmd" >"$work/k2.log" 2>&1
b=$started
dir=$(dirname "$(find "$work/ref" -name result.json)")
dir=$store/${dir#"$work/ref/"}
# Wait for a checkpoint, so that the kill comes mid-training.
for _ in $(seq 300); do
  [ -e "$dir/checkpoint.bin" ] && break
  sleep 0.05
done
[ -e "$dir/checkpoint.bin" ] || fail "variant 3: no checkpoint after 15 s"
sleep 0.3  # the kill then loses the steps since the last checkpoint
holder=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$dir/run.lock")
if [ "$holder" = "$a" ]; then other=$b; elif [ "$holder" = "$b" ]; then other=$a; else
  fail "variant 3: run.lock names pid '$holder', neither of the two runs ($a, $b): $(cat "$dir/run.lock")"
fi
wait_rc "$other"
[ "$rc" = 75 ] || fail "variant 3: the second run exited $rc, not 75 (busy): $(cat "$work/k1.log" "$work/k2.log")"
# Stop the runner outside any atomic write (its temporary files carry its pid), then kill it.
for _ in $(seq 100); do
  kill -STOP "$holder"
  [ -z "$(find "$dir" -name "*.tmp.$holder.*")" ] && break
  kill -CONT "$holder"
  sleep 0.01
done
[ -f "$dir/result.json" ] && fail "variant 3: the run finished before it was killed (make the long cell longer)"
{ kill -KILL "$holder"; wait_rc "$holder"; } 2>/dev/null  # (not bash's "Killed" notice)
[ "$rc" = 137 ] || fail "variant 3: the killed run exited $rc"
status=$("$dkp" grid status "$long" --results "$store" --verbose --quiet)
echo "$status" | grep -Eq "^interrupted +$lhash " ||
  fail "variant 3: after the kill the cell is not interrupted: $(echo "$status" | grep -F "$lhash")"
[ -e "$dir/result.json" ] && fail "variant 3: a result.json after the kill"
[ -z "$(find "$store" -name '*.tmp.*')" ] || fail "variant 3: temporary files after the kill"
step=$(echo "$status" | grep -F "$lhash" | sed -n 's/.*step \([0-9]*\) of.*/\1/p')
# Two more at once finish it.
eval "start $cmd" >"$work/k3.log" 2>&1
a=$started
eval "start $cmd" >"$work/k4.log" 2>&1
b=$started
wait_rc "$a"; rca=$rc
wait_rc "$b"; rcb=$rc
for r in "$rca" "$rcb"; do
  [ "$r" = 0 ] || [ "$r" = 75 ] || fail "variant 3: a rerun exited $r: $(cat "$work/k3.log" "$work/k4.log")"
done
check_cell "$long" "$store" "$lhash" "variant 3"
grep -Eq '"resumed_from_step": [1-9]' "$dir/result.json" || fail "variant 3: the rerun did not resume"
keys='"(config_hash|elbo[a-z_]*|test_[a-z0-9_]*|n_train|n_test|layer[^"]*|likelihood[^"]*)"'
diff <(grep -E "$keys" "$work/ref/concurrent/yacht/split0/$lhash/result.json") \
  <(grep -E "$keys" "$dir/result.json") >"$work/diff" ||
  fail "variant 3: results differ from the uninterrupted run's: $(head -10 "$work/diff")"
cmp -s "$work/ref/concurrent/yacht/split0/$lhash/trace.csv" "$dir/trace.csv" ||
  fail "variant 3: trace.csv differs from the uninterrupted run's"
echo "variant 3: killed at step ${step:-?} while a second run was refused (exit 75); two reruns" \
  "exited $rca and $rcb: one valid cell, resumed, identical to an uninterrupted run"
# --- 4. stores of their own, merged (dkp grid merge) -------------------------------------------
# run1 and grid each computed the smoke cell on their own (the same numbers: same machine): one
# copy, one duplicate; a third store whose copy has other numbers is a conflict, reported, exit 1,
# and the destination's result kept.
"$dkp" grid merge "$work/run1" "$work/grid" --into "$work/merged" >"$work/m1.log" 2>&1 ||
  fail "variant 4: dkp grid merge: $(cat "$work/m1.log")"
grep -q 'copied 1, replaced 0, duplicates 1, conflicts 0' "$work/m1.log" ||
  fail "variant 4: dkp grid merge: $(cat "$work/m1.log")"
check_cell "$smoke" "$work/merged" "$hash" "variant 4"
cp -r "$work/run2" "$work/other"
other_result=$(find "$work/other" -name result.json)
sed -i 's/"test_ll": *\(-\{0,1\}\)[0-9]/"test_ll": \19/' "$other_result"
before=$(cat "$(find "$work/merged" -name result.json)")
set +e
"$dkp" grid merge "$work/other" --into "$work/merged" >"$work/m2.log" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "variant 4: a conflicting merge exited $rc: $(cat "$work/m2.log")"
grep -q "^conflict: cell $hash: .*test_ll" "$work/m2.log" ||
  fail "variant 4: the conflict is not named: $(cat "$work/m2.log")"
[ "$(cat "$(find "$work/merged" -name result.json)")" = "$before" ] ||
  fail "variant 4: the conflicting merge changed the destination's result"
check_cell "$smoke" "$work/merged" "$hash" "variant 4 (after the conflict)"
echo "variant 4: two stores merged (copied 1, duplicate 1); a conflicting third reported, exit 1, destination kept"

# --- 5. the estimate of a stored cell without its own timing -------------------------------------
"$dkp" grid plan "$smoke" --results "$work/merged" --estimate --cell "$hash" --quiet >"$work/e.log" 2>&1 ||
  fail "dkp grid plan --estimate --cell: $(cat "$work/e.log")"
if ! grep -q "^cell $hash .*calibrated on this machine" "$work/e.log" ||
  ! grep -q 'estimated / measured training time: [0-9]' "$work/e.log"; then
  fail "dkp grid plan --estimate --cell: $(cat "$work/e.log")"
fi
echo "variant 5: $(grep -o 'estimated / measured training time: [0-9.]*' "$work/e.log") (a 20-step cell)"
echo "concurrent-cell-test: OK"
