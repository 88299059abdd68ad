# A synthetic stand-in for Rectangle-Images in its .amat format, to try the binary pipeline
# without the real set (the smoke test uses it): n 28 x 28 images, each the outline of a
# rectangle of random height and width (never equal) at a random place on faint uniform noise,
# labelled 1 when the height is the larger, as the real task. Pixels in [0, 1], 4 decimals.
#   awk -v n=400 -v seed=1 -f scripts/synthetic-rectangles.awk > rectangles_im_train.amat
BEGIN {
  srand(seed);
  for (k = 0; k < n; k++) {
    do { h = 4 + int(rand() * 20); w = 4 + int(rand() * 20) } while (h == w);
    r0 = int(rand() * (28 - h + 1)); c0 = int(rand() * (28 - w + 1));
    line = "";
    for (r = 0; r < 28; r++) for (c = 0; c < 28; c++) {
      v = rand() * 0.2;
      inr = r >= r0 && r < r0 + h; inc = c >= c0 && c < c0 + w;
      if (inr && inc && (r == r0 || r == r0 + h - 1 || c == c0 || c == c0 + w - 1)) v = 1;
      line = line sprintf("%.4f ", v);
    }
    print line (h > w ? 1 : 0);
  }
}
