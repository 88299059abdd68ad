#!/usr/bin/env bash
# Fetches Rectangle-Images (Larochelle et al. 2007; the DSVI report's binary task, its Table 2)
# into DEST/rectangles: rectangles_images.zip from the LISA lab's page the report cites, unzipped
# to rectangles_im_train.amat (12000 images) and rectangles_im_test.amat (50000), or copies the
# two files from a local mirror with --from DIR (a data root holding rectangles/).
# No checksum is pinned for these files (SHA256SUMS covers the shared mirror only, and this set
# is not in it): the script prints the files' sha256 for you to record, and `dkp run` writes
# them into every run's manifest (data_sha256).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
parse_args "$@"
url="http://www.iro.umontreal.ca/~lisa/icml2007data/rectangles_images.zip"
files=(rectangles_im_train.amat rectangles_im_test.amat)
dir="$DEST/rectangles"
mkdir -p "$dir"
if [ -n "$FROM" ]; then
  for f in "${files[@]}"; do
    [ -f "$dir/$f" ] && continue
    [ -f "$FROM/rectangles/$f" ] || die "mirror has no $FROM/rectangles/$f"
    cp "$FROM/rectangles/$f" "$dir/$f.part.$$" && mv "$dir/$f.part.$$" "$dir/$f"
  done
elif [ ! -f "$dir/${files[0]}" ] || [ ! -f "$dir/${files[1]}" ]; then
  command -v unzip >/dev/null || die "unzip is not installed (apt-get install unzip)"
  zip="$dir/rectangles_images.zip"
  [ -f "$zip" ] || download "$url" "$zip" || die "could not download $url"
  tmp="$dir/unzip.$$"
  mkdir -p "$tmp"
  unzip -q -o "$zip" -d "$tmp" || { rm -rf "$tmp"; die "could not unzip $zip"; }
  for f in "${files[@]}"; do
    found=$(find "$tmp" -name "$f" -type f | head -1)
    [ -n "$found" ] || { rm -rf "$tmp"; die "$zip has no $f"; }
    mv "$found" "$dir/$f"
  done
  rm -rf "$tmp" "$zip"
fi
(cd "$dir" && sha256sum "${files[@]}")
echo "$(basename "$0"): Rectangle-Images in $dir (no pinned checksum: record the sums above)"
