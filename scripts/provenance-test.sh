#!/usr/bin/env bash
# Test (CTest `provenance_cli`, run from the repository root): the provenance of the cells a dkp
# binary writes (docs/reproduction-notes.md, "Provenance").
#  1. `dkp grid run` and `dkp run` into a committed store (a git work tree's results/runs, here a
#     scratch `git init`) refuse when the binary was built from a modified work tree, naming
#     --allow-dirty, and write nothing; into a scratch store they run. DKP_TEST_MODIFIED_TREE=1
#     makes this binary one of a modified tree (util/version.hpp).
#  2. With --allow-dirty the cell is stored and its manifest.json and result.json record the tree
#     (git_sha ...-dirty, tree_modified true, tree_diff_sha256); `dkp grid status` counts it and
#     -v marks it; `dkp grid plan --allow-dirty` passes the option on.
#  3. `dkp grid verify --record` refuses from a modified tree. From a clean build (skipped, and
#     said, when this binary's tree is modified): it writes verified.json, which status counts
#     ("verified at a clean commit") and scripts/store-add.sh stages; a result that does not
#     reproduce is a MISMATCH with the command that recomputes it, recorded, counted, and
#     `grid run --force --cell` removes the record with the result.
#   scripts/provenance-test.sh DKP
set -euo pipefail
dkp=$(realpath "${1:?usage: scripts/provenance-test.sh DKP}")
src=$PWD
fail() { echo "provenance-test: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/repo
mkdir -p "$repo/results/runs"
git init -q "$repo"
store=$repo/results/runs
# One SGP cell of a second (yacht split 0, 50 steps).
cat >"$work/prov.yaml" <<'YAML'
name: provtest
family: generic
reference: agw
description: one SGP cell
protocol:
  steps: 50
  lr_schedule: [[0, 1.0e-2]]
  kl_anneal: 0
  train_samples: 1
  test_samples: 10
  inducing: 10
  batch: 64
  kernel: se
  width: input
  seed: 0
axes:
  datasets: [yacht]
  splits: [0]
  depths: [1]
  models:
    - {model: sgp}
YAML
grid=$work/prov.yaml
modified() { DKP_TEST_MODIFIED_TREE=1 "$dkp" "$@"; }
run_rc() {  # WANT_RC CMD...: output to $work/out
  local want=$1 rc=0
  shift
  "$@" >"$work/out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || fail "$* exited $rc, not $want: $(tail -5 "$work/out")"
}

# ---- 1. refused in the committed store, run in a scratch one ----
run_rc 1 modified grid run "$grid" --results "$store" --quiet
grep -q -- "--allow-dirty" "$work/out" || fail "the refusal does not name --allow-dirty: $(cat "$work/out")"
grep -q "committed result store" "$work/out" || fail "the refusal does not say why: $(cat "$work/out")"
[ -z "$(ls -A "$store")" ] || fail "a refused grid run wrote into the store: $(find "$store")"
run_rc 1 modified run --dataset yacht --split 0 --model sgp --steps 5 --quiet \
  --out "$store/adhoc/yacht/split0/x"
grep -q -- "--allow-dirty" "$work/out" || fail "dkp run: the refusal does not name --allow-dirty"
# The default --out (results/runs/adhoc/... of the working directory) from a checkout too.
(cd "$repo" && run_rc 1 modified run --dataset yacht --split 0 --model sgp --steps 5 --quiet)
[ -z "$(ls -A "$store")" ] || fail "a refused dkp run wrote into the store: $(find "$store")"
run_rc 0 modified grid run "$grid" --results "$work/scratch" --quiet
scratch_manifest=$(find "$work/scratch" -name manifest.json)
grep -q '"tree_modified": true' "$scratch_manifest" || fail "scratch cell: no tree_modified true"

# ---- 2. --allow-dirty: stored, and recorded ----
run_rc 0 modified grid run "$grid" --results "$store" --allow-dirty --quiet
manifest=$(find "$store" -name manifest.json)
[ -n "$manifest" ] || fail "grid run --allow-dirty stored no cell"
dir=$(dirname "$manifest")
hash=$(basename "$dir")
for f in "$manifest" "$dir/result.json"; do
  grep -Eq '"git_sha": "[0-9a-f]{12}-dirty"' "$f" || fail "$f: git_sha does not end in -dirty"
  grep -q '"tree_modified": true' "$f" || fail "$f: no tree_modified true"
  grep -Eq '"tree_diff_sha256": "[0-9a-f]{64}"' "$f" || fail "$f: no tree_diff_sha256"
done
run_rc 0 "$dkp" grid status "$grid" --results "$store"
grep -qx "provenance: 1 of 1 done cells ran from a modified work tree; 0 of them verified at a clean commit" \
  "$work/out" || fail "grid status does not count the modified cell: $(cat "$work/out")"
run_rc 0 "$dkp" grid status "$grid" --results "$store" -v
grep -q "^done .*$hash .*\[modified tree\]" "$work/out" || fail "grid status -v: no mark: $(cat "$work/out")"
rm -rf "$work/plan-store"
run_rc 0 modified grid plan "$grid" --results "$work/plan-store" --allow-dirty --quiet
grep -q -- "--allow-dirty" "$work/out" || fail "grid plan --allow-dirty: not in the commands: $(cat "$work/out")"
run_rc 2 "$dkp" grid verify "$grid" --results "$store" --allow-dirty --quiet

# ---- 3. verify --record ----
run_rc 1 modified grid verify "$grid" --results "$store" --record --quiet
grep -q "clean commit" "$work/out" || fail "verify --record from a modified tree: $(cat "$work/out")"
[ ! -e "$dir/verified.json" ] || fail "verify --record from a modified tree wrote verified.json"
if ! "$dkp" --version | grep -q "^Work tree: clean"; then
  echo "provenance-test: this dkp was built from a modified work tree: the --record checks that need a clean build are skipped"
  echo "provenance-test: OK"
  exit 0
fi
# A clean build computes into the committed store without --allow-dirty (here: reuses the cell).
run_rc 0 "$dkp" grid run "$grid" --results "$store" --quiet
run_rc 0 "$dkp" grid verify "$grid" --results "$store" --record --quiet
grep -q "^OK  bit-identical  $hash" "$work/out" || fail "verify: not bit-identical: $(cat "$work/out")"
grep -q "recorded $dir/verified.json" "$work/out" || fail "verify --record: not recorded: $(cat "$work/out")"
grep -q '"outcome": "bit-identical"' "$dir/verified.json" || fail "verified.json: $(cat "$dir/verified.json")"
grep -q '"tree": "clean"' "$dir/verified.json" || fail "verified.json: not a clean tree's"
run_rc 0 "$dkp" grid status "$grid" --results "$store" -v
grep -q "1 of 1 done cells ran from a modified work tree; 1 of them verified at a clean commit" \
  "$work/out" || fail "grid status does not count the verification: $(cat "$work/out")"
grep -q "\[modified tree; verified bit-identical at [0-9a-f]\{12\}\]" "$work/out" ||
  fail "grid status -v: no verified mark: $(cat "$work/out")"
# scripts/store-add.sh stages the record with the cell.
(cd "$repo" && bash "$src/scripts/store-add.sh" results/runs >/dev/null)
git -C "$repo" ls-files | grep -q "$hash/verified.json" || fail "store-add.sh did not stage verified.json"
# A stored result that does not reproduce: MISMATCH, the command that recomputes it, recorded.
sed -i 's/"test_ll": -\{0,1\}[0-9]/"test_ll": 7/' "$dir/result.json"
# (A hand edit is a modified cell, damaged by its grid's index.tsv; without its index line, as a
# cell of a dkp before the index, it is a stored result that verify finds not to reproduce.)
sed -i "/$hash/d" "$(dirname "$(dirname "$(dirname "$dir")")")/index.tsv"
run_rc 1 "$dkp" grid verify "$grid" --results "$store" --record --quiet
grep -q "^MISMATCH $hash" "$work/out" || fail "verify: no mismatch: $(cat "$work/out")"
grep -q "to recompute it: dkp grid run .* --force --cell $hash" "$work/out" ||
  fail "verify: the mismatch does not say how to recompute it: $(cat "$work/out")"
grep -q '"outcome": "mismatch"' "$dir/verified.json" || fail "verified.json after the mismatch: $(cat "$dir/verified.json")"
run_rc 0 "$dkp" grid status "$grid" --results "$store"
grep -q "1 did not reproduce at a clean commit (to be recomputed)" "$work/out" ||
  fail "grid status does not count the mismatch: $(cat "$work/out")"
run_rc 0 "$dkp" grid run "$grid" --results "$store" --force --cell "$hash" --quiet
[ ! -e "$dir/verified.json" ] || fail "grid run --force left the old result's verified.json"
grep -q '"tree_modified": false' "$dir/manifest.json" || fail "the recomputed cell does not record a clean tree"
echo "provenance-test: OK"
