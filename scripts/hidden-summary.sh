#!/bin/sh
# hidden-summary.sh FILE: per hidden layer and column of a `dkp predict --hidden FILE` CSV,
#   signal = the variance over the points of the column's mean over the samples,
#   spread = the mean over the points of the column's variance over the samples (the posterior's
#            uncertainty at a point; both with denominator n),
#   share  = signal / (signal + spread): near 0 for a column the posterior leaves at a random
#            function of the inputs (every point's value varies from sample to sample about the
#            same mean), near 1 for a column that is the same function in every sample.
# Prints `layer column signal spread share`, one line per layer and column, in the file's order.
set -eu
[ $# -eq 1 ] && [ -r "$1" ] || {
  echo "usage: $0 HIDDEN.csv (from dkp predict --hidden)" >&2
  exit 2
}
awk -F, '
NR == 1 {
  if ($1 != "sample" || $2 != "layer" || $3 != "index" || NF < 4) {
    print "hidden-summary: " FILENAME " is not a dkp predict --hidden CSV" > "/dev/stderr"
    bad = 1
    exit 2
  }
  for (c = 4; c <= NF; ++c) name[c] = $c
  ncol = NF
  next
}
{
  l = $2; i = $3
  if (!(l in seen)) { seen[l] = 1; layers[++nl] = l }
  if (!((l, i) in npt)) { npt[l, i] = 0; points[l] = points[l] + 1; idx[l, points[l]] = i }
  npt[l, i]++
  for (c = 4; c <= NF; ++c) {
    if ($c == "") continue
    s1[l, i, c] += $c; s2[l, i, c] += $c * $c
    if (c > width[l]) width[l] = c
  }
}
END {
  if (bad) exit 2
  printf "%-6s %-8s %14s %14s %8s\n", "layer", "column", "signal", "spread", "share"
  for (k = 1; k <= nl; ++k) {
    l = layers[k]
    for (c = 4; c <= width[l]; ++c) {
      m1 = 0; m2 = 0; sp = 0
      for (j = 1; j <= points[l]; ++j) {
        i = idx[l, j]; n = npt[l, i]
        mu = s1[l, i, c] / n
        v = s2[l, i, c] / n - mu * mu
        if (v < 0) v = 0
        m1 += mu; m2 += mu * mu; sp += v
      }
      np = points[l]
      sig = m2 / np - (m1 / np) ^ 2
      if (sig < 0) sig = 0
      spread = sp / np
      share = (sig + spread > 0) ? sig / (sig + spread) : 0
      printf "%-6s %-8s %14.6g %14.6g %8.3f\n", l, name[c], sig, spread, share
    }
  }
}' "$1"
