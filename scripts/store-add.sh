#!/usr/bin/env bash
# Stages the finished cells of the result store for a commit: for every run directory
# <store>/<grid>/<dataset>/split<k>/<hash>/ whose result.json carries that hash, its result.json,
# manifest.json, trace.csv and verified.json (the record of `dkp grid verify --record`, when there
# is one), and the grids' snapshot-<profile>.yaml and index.tsv files (dkp run records the cells
# it writes in index.tsv; `dkp grid index` records others: run it first). Cells still running,
# interrupted or failed (no result.json of their hash) are left out, so no partial cell enters
# git. A trace of more than 1000 rows (a cell computed before `dkp run --trace-every auto`) is
# first thinned in place to every k-th row and its last, the rows --trace-every auto would keep.
#   scripts/store-add.sh [STORE]      (default results/runs; run from the repository root)
set -euo pipefail
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
find "$store" -mindepth 2 -maxdepth 2 \( -name 'snapshot-*.yaml' -o -name index.tsv \) -print0 |
  xargs -0 -r git add --
echo "store-add: $staged finished cells staged from $store"
