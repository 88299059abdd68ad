#!/usr/bin/env bash
# Fetches the four original MNIST IDX .gz files into DEST/mnist from a public mirror of the
# original distribution, or copies them from a local mirror with --from DIR (a data root holding
# mnist/), then verifies sha256 checksums (data-scripts/SHA256SUMS).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
parse_args "$@"
mirrors=("https://ossci-datasets.s3.amazonaws.com/mnist" "https://storage.googleapis.com/cvdf-datasets/mnist")
for name in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  f="mnist/$name"
  [ -f "$DEST/$f" ] && continue
  if [ -n "$FROM" ]; then
    [ -f "$FROM/$f" ] || die "mirror has no $FROM/$f"
    mkdir -p "$DEST/mnist"
    cp "$FROM/$f" "$DEST/$f"
  else
    ok=""
    for m in "${mirrors[@]}"; do
      if download "$m/$name" "$DEST/$f"; then ok=1; break; fi
    done
    [ -n "$ok" ] || die "could not download $name from any mirror"
  fi
done
verify "$DEST" mnist/
