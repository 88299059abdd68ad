#!/usr/bin/env bash
# Stages the finished cells of the result store for a commit: for every run directory
# <store>/<grid>/<dataset>/split<k>/<hash>/ whose result.json carries that hash, its result.json,
# manifest.json, trace.csv and verified.json (the record of `dkp grid verify --record`, when there
# is one), and the grids' snapshot-<profile>.yaml and index.tsv files (dkp run records the cells
# it writes in index.tsv; `dkp grid index` records others: run it first). Cells still running,
# interrupted or failed (no result.json of their hash) are left out, so no partial cell enters
# git. A trace of more than 1000 rows (a cell computed before `dkp run --trace-every auto`) is
# first thinned in place to every k-th row and its last, the rows --trace-every auto would keep.
# A failed cell is a result too when it fails the same way on every rerun (a non-finite ELBO on
# one split): --failed HASH stages that cell's error.json, manifest.json and trace.csv, provided
# its error.json carries the hash and says the run exited with an error (not that a signal ended
# it), and it has no result. Tables then count it as a failed split, and `dkp grid run` retries it.
#   scripts/store-add.sh [--failed HASH]... [STORE]   (default results/runs; run from the root)
set -euo pipefail
. "$(dirname "$0")/failed-cell.sh"
failed=()
while [ "${1:-}" = --failed ]; do
  [ -n "${2:-}" ] || { echo "store-add: --failed needs a cell hash" >&2; exit 2; }
  failed+=("$2")
  shift 2
done
store=${1:-results/runs}
[ -d "$store" ] || { echo "store-add: no store at $store" >&2; exit 2; }
max_rows=1000
staged=0
while IFS= read -r result; do
  dir=$(dirname "$result")
  hash=$(basename "$dir")
  grep -q "\"config_hash\": \"$hash\"" "$result" || {
    echo "store-add: $result does not carry the hash $hash; left out" >&2
    continue
  }
  files=("$result")
  [ -f "$dir/manifest.json" ] && files+=("$dir/manifest.json")
  if [ -f "$dir/trace.csv" ]; then
    rows=$(($(wc -l <"$dir/trace.csv") - 1))
    if [ "$rows" -gt "$max_rows" ]; then
      k=$(((rows + max_rows - 1) / max_rows))
      awk -v k="$k" -v n="$rows" 'NR == 1 || (NR - 1) % k == 0 || NR - 1 == n' \
        "$dir/trace.csv" >"$dir/trace.csv.thin" && mv "$dir/trace.csv.thin" "$dir/trace.csv"
    fi
    files+=("$dir/trace.csv")
  fi
  [ -f "$dir/verified.json" ] && files+=("$dir/verified.json")
  git add -- "${files[@]}"
  staged=$((staged + 1))
done < <(find "$store" -mindepth 5 -maxdepth 5 -name result.json | sort)
# A failed cell committed before and finished since: its error.json (removed by the rerun) goes.
git ls-files -- "$store" | { grep '/error\.json$' || true; } | while IFS= read -r err; do
  [ -f "$err" ] || [ ! -f "$(dirname "$err")/result.json" ] || git rm -q --cached -- "$err"
done
for hash in "${failed[@]}"; do
  dirs=$(find "$store" -mindepth 4 -maxdepth 4 -type d -name "$hash")
  [ "$(echo "$dirs" | grep -c .)" = 1 ] ||
    { echo "store-add: --failed $hash: no single run directory of that hash in $store" >&2; exit 2; }
  err=$dirs/error.json
  if ! kept_failed_cell "$dirs"; then
    echo "store-add: --failed $hash: $dirs is not a failed cell (an error.json of its hash, no" \
      "signal, no result.json)" >&2
    exit 2
  fi
  files=("$err")
  for f in manifest.json trace.csv; do [ -f "$dirs/$f" ] && files+=("$dirs/$f"); done
  git add -f -- "${files[@]}" # -f: error.json is ignored (.gitignore) unless named here
  echo "store-add: failed cell $dirs staged"
done
find "$store" -mindepth 2 -maxdepth 2 \( -name 'snapshot-*.yaml' -o -name index.tsv \) -print0 |
  xargs -0 -r git add --
echo "store-add: $staged finished cells staged from $store"
