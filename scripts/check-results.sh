#!/usr/bin/env bash
# Test of the committed results (CTest `committed_results`, run from the repository root):
# 1. the committed store holds finished cells only: every run directory under results/runs has a
#    result.json carrying its directory's hash (or is a failed cell kept as a result: an
#    error.json carrying the hash, ended by no signal, and no result.json; scripts/store-add.sh
#    --failed), and stays under 150 KB;
# 2. the committed tables, results/README.md, results/claims.md and the figures are exactly what
#    `make tables` (scripts/tables.sh) makes from the committed store: stale tables fail.
# 3. each committed grid snapshot (results/runs/<grid>/snapshot-<profile>.yaml) is what
#    `dkp grid plan experiments/<grid>.yaml --profile <profile>` writes now, so that running the
#    main job on a clean checkout leaves it clean.
# Remedy for 1 and 2: stage finished cells with scripts/store-add.sh, then `make tables`; for 3,
# the `dkp grid plan` command the message names, then scripts/store-add.sh.
#   scripts/check-results.sh DKP
set -euo pipefail
. "$(dirname "$0")/failed-cell.sh"
dkp=${1:?usage: scripts/check-results.sh DKP}
store=results/runs
fail=0
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  dirs=$(git ls-files -- "$store" | awk -F/ 'NF >= 7 { print $1 "/" $2 "/" $3 "/" $4 "/" $5 "/" $6 }' | sort -u)
else
  dirs=$(find "$store" -mindepth 4 -maxdepth 4 -type d 2>/dev/null | sort)
fi
for dir in $dirs; do
  hash=$(basename "$dir")
  # (a missing file is reported below: the size of those present)
  kb=$( (cat "$dir"/result.json "$dir"/error.json "$dir"/manifest.json "$dir"/trace.csv 2>/dev/null || true) | wc -c)
  if [ "$kb" -gt 153600 ]; then
    echo "check-results: $dir holds $kb bytes (over 150 KB)" >&2
    fail=1
  fi
  if kept_failed_cell "$dir"; then
    continue # a failed cell kept as a result: no index line (dkp records finished cells only)
  fi
  if [ ! -f "$dir/result.json" ] || ! grep -q "\"config_hash\": \"$hash\"" "$dir/result.json"; then
    echo "check-results: $dir is not a finished cell (no result.json with hash $hash)" >&2
    fail=1
  fi
  # The grid's index (experiments/store_index.hpp): the cell as dkp wrote it, not edited since.
  grid=$(basename "$(dirname "$(dirname "$(dirname "$dir")")")")
  key=${dir#"$store/$grid/"}
  line=$(grep -F "$key"$'\t' "$store/$grid/index.tsv" 2>/dev/null || true)
  if [ -z "$line" ]; then
    echo "check-results: $dir is not in $store/$grid/index.tsv (run 'dkp grid index', then scripts/store-add.sh)" >&2
    fail=1
  elif [ -f "$dir/result.json" ] && [ -f "$dir/manifest.json" ] &&
    [ "$(printf '%s\t%s\t%s' "$key" "$(sha256sum <"$dir/result.json" | cut -c1-64)" \
      "$(sha256sum <"$dir/manifest.json" | cut -c1-64)")" != "$line" ]; then
    echo "check-results: $dir: result.json or manifest.json was modified after dkp wrote it ($store/$grid/index.tsv)" >&2
    fail=1
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/tables.sh "$dkp" "$work" >"$work/log" 2>&1 ||
  { cat "$work/log" >&2; echo "check-results: scripts/tables.sh failed" >&2; exit 1; }
if ! diff -r results/tables "$work/tables" >"$work/diff" 2>&1 ||
  ! diff results/README.md "$work/README.md" >>"$work/diff" 2>&1 ||
  ! diff results/claims.md "$work/claims.md" >>"$work/diff" 2>&1 ||
  ! diff -r results/figures "$work/figures" >>"$work/diff" 2>&1 ||
  ! diff results/scoreboard.md "$work/scoreboard.md" >>"$work/diff" 2>&1 ||
  ! grep -qxF "$(cat "$work/scoreboard.md")" README.md; then
  grep -qxF "$(cat "$work/scoreboard.md")" README.md ||
    echo "README.md lacks the scoreboard line: $(cat "$work/scoreboard.md")" >>"$work/diff"
  head -n 40 "$work/diff" >&2
  echo "check-results: the committed tables differ from what 'make tables' makes from the committed store" >&2
  fail=1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  snapshots=$(git ls-files -- "$store/*/snapshot-*.yaml")
else
  snapshots=$(find "$store" -mindepth 2 -maxdepth 2 -name 'snapshot-*.yaml' | sort)
fi
for f in $snapshots; do
  grid=$(basename "$(dirname "$f")")
  profile=$(basename "$f" .yaml)
  profile=${profile#snapshot-}
  plan="dkp grid plan experiments/$grid.yaml --profile $profile"
  if ! "$dkp" grid plan "experiments/$grid.yaml" --profile "$profile" --results "$work/snapshots" \
    >/dev/null 2>"$work/plan.log"; then
    echo "check-results: $f: '$plan' failed: $(tail -n 1 "$work/plan.log")" >&2
    fail=1
  elif ! cmp -s "$f" "$work/snapshots/$grid/snapshot-$profile.yaml"; then
    echo "check-results: $f is not experiments/$grid.yaml as it is now: run '$plan' and stage it (scripts/store-add.sh)" >&2
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "check-results: $(echo "$dirs" | grep -c . || true) committed cells, tables up to date"
exit "$fail"
