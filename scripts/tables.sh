#!/usr/bin/env bash
# `make tables`: the papers' tables, results/README.md (scoreboard, disagreements, figures) and
# results/claims.md (the papers' claims of results/reference/claims.yaml tested on the cells) from
# the committed result store, without training. In a git checkout the store is read as committed
# (its tracked files: cells still running or not yet staged with scripts/store-add.sh do not
# count), so the output depends on the commit alone; elsewhere the store as it is.
#   scripts/tables.sh DKP [OUT]   writes OUT/tables/*.{tex,csv,md}, OUT/README.md, OUT/claims.md,
#                                 OUT/figures/, OUT/scoreboard.md (the overall line with the claim
#                                 counts; with OUT = results also put in the top-level README
#                                 after its <!-- scoreboard --> line)
#                                 (default OUT: results; run from the repository root)
set -euo pipefail
dkp=${1:?usage: scripts/tables.sh DKP [OUT]}
out=${2:-results}
store=results/runs
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mkdir -p "$work/runs"
  git ls-files -z -- "$store" | (cd "$(git rev-parse --show-toplevel)" &&
    xargs -0 -r cp --parents -t "$work/runs") 
  view=$work/runs/$store
else
  view=$store
fi
mkdir -p "$out"
"$dkp" tables experiments --results "$view" --out "$out/tables" --summary "$out/README.md" \
  --quiet >"$work/log"
# The overall scoreboard line, for the top-level README (the line after its <!-- scoreboard -->).
line=$(grep -m1 '^\*\*Overall: ' "$out/README.md")
echo "${line} See [results/README.md](results/README.md)." >"$out/scoreboard.md"
if [ "$out" = results ] && grep -q '^<!-- scoreboard -->$' README.md; then
  awk -v line="$(cat "$out/scoreboard.md")" '
    skip { skip = 0; if ($0 ~ /^\*\*Overall: /) next }
    { print }
    /^<!-- scoreboard -->$/ { print line; skip = 1 }' README.md >"$work/README.md"
  cat "$work/README.md" >README.md
fi
echo "tables: $out/tables/, $out/README.md: $(sed 's/^\*\*Overall: \(.*\)\*\*.*/\1/' "$out/scoreboard.md")"
