#!/usr/bin/env bash
# Times one training step and one prediction of every model of the papers with each given dkp
# binary, one and two threads, depths 2 and 5 (the SGP: depth 1), back to back, so that binaries
# are compared on the same machine state. Prints one line per model, depth, threads and binary.
#
#   scripts/bench-compare.sh [--dataset D] [--reps R] BIN [BIN ...]
#   e.g. scripts/bench-compare.sh /tmp/dkp-before build/dkp
set -euo pipefail
dataset=boston
reps=10
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --dataset) dataset=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    *) echo "bench-compare: unknown option $1" >&2; exit 2 ;;
  esac
done
if [[ $# -lt 1 ]]; then
  echo "usage: scripts/bench-compare.sh [--dataset D] [--reps R] BIN [BIN ...]" >&2
  exit 2
fi
for bin in "$@"; do
  [[ -x $bin ]] || { echo "bench-compare: $bin is not an executable" >&2; exit 2; }
done
models=(
  "--model sgp --depth 1"
  "--model dgp --inference global-inducing --depth 2 5"
  "--model dgp --inference dsvi --depth 2 5"
  "--model dgp --inference global-inducing --kernel relu --depth 2 5"
  "--model nngp --kernel relu --depth 2 5"
  "--model nngp --kernel se --depth 2 5"
  "--model diwp --kernel relu --depth 2 5"
  "--model diwp --kernel se --depth 2 5"
  "--model dwp --posterior gw --depth 2 5"
  "--model dwp --posterior agw --depth 2 5"
  "--model dwp --posterior abgw --depth 2 5"
)
printf '%-28s %5s %7s %3s %11s %11s %13s  %s\n' model depth batch T "step ms" "fwd ms" "predict ms" binary
for m in "${models[@]}"; do
  for t in 1 2; do
    for bin in "$@"; do
      # shellcheck disable=SC2086
      "$bin" bench model --dataset "$dataset" $m --reps "$reps" --threads "$t" --quiet |
        awk -v t="$t" -v bin="$bin" 'NF >= 6 && $(NF) ~ /^[0-9.]+$/ && $1 != "model" {
          label = $1; for (i = 2; i <= NF - 5; ++i) label = label " " $i;
          printf "%-28s %5s %7s %3s %11s %11s %13s  %s\n", label, $(NF-4), $(NF-3), t, $(NF-2), $(NF-1), $NF, bin }'
    done
  done
done
