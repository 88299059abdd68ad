#include "data/mnist.hpp"

#include <zlib.h>

#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/sha256.hpp"

namespace dkp::data {

namespace fs = std::filesystem;

namespace {

std::vector<unsigned char> gunzip_file(const fs::path& path) {
  if (!fs::exists(path)) throw DataError(fmt::format("missing data file '{}'", path.string()));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) throw DataError(fmt::format("cannot open '{}'", path.string()));
  gzbuffer(f.get(), 1 << 17);
  std::vector<unsigned char> out;
  std::array<unsigned char, 1 << 16> buf;
  for (;;) {
    const int n = gzread(f.get(), buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int errnum = 0;
      const char* msg = gzerror(f.get(), &errnum);
      throw DataError(fmt::format("{}: corrupt gzip data ({})", path.string(), msg));
    }
    if (n == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + n);
  }
  return out;
}

uint32_t be32(const std::vector<unsigned char>& b, size_t off) {
  return (uint32_t(b[off]) << 24) | (uint32_t(b[off + 1]) << 16) | (uint32_t(b[off + 2]) << 8) |
         uint32_t(b[off + 3]);
}

}  // namespace

ImageSet read_idx_pair(const fs::path& images, const fs::path& labels) {
  const auto img = gunzip_file(images);
  if (img.size() < 16 || be32(img, 0) != 2051) {
    throw DataError(
        fmt::format("{}: not an IDX3 image file (magic 2051 expected)", images.string()));
  }
  const size_t n = be32(img, 4), rows = be32(img, 8), cols = be32(img, 12);
  if (img.size() != 16 + n * rows * cols) {
    throw DataError(fmt::format("{}: header says {} images of {}x{} ({} bytes) but the file has {}",
                                images.string(), n, rows, cols, 16 + n * rows * cols, img.size()));
  }
  const auto lab = gunzip_file(labels);
  if (lab.size() < 8 || be32(lab, 0) != 2049) {
    throw DataError(
        fmt::format("{}: not an IDX1 label file (magic 2049 expected)", labels.string()));
  }
  const size_t nl = be32(lab, 4);
  if (nl != n || lab.size() != 8 + nl) {
    throw DataError(fmt::format("{}: {} labels for {} images in '{}'", labels.string(), nl, n,
                                images.string()));
  }
  ImageSet set;
  set.rows = rows;
  set.cols = cols;
  const size_t p = rows * cols;
  arma::mat Xt(p, n);  // pixels x images, filled contiguously, transposed at the end
  for (size_t i = 0; i < n * p; ++i) Xt[i] = img[16 + i] / 255.0;
  set.X = Xt.t();
  set.labels.set_size(n);
  for (size_t i = 0; i < n; ++i) {
    if (lab[8 + i] > 9) {
      throw DataError(fmt::format("{}: label {} of entry {} is not a digit", labels.string(),
                                  int(lab[8 + i]), i));
    }
    set.labels[i] = lab[8 + i];
  }
  return set;
}

// The four files under <root>/mnist: training images and labels, then test images and labels.
constexpr std::array<const char*, 4> kMnistFiles = {
    "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz"};

Mnist load_mnist(const fs::path& root) {
  const fs::path dir = root / "mnist";
  Mnist m;
  m.train = read_idx_pair(dir / kMnistFiles[0], dir / kMnistFiles[1]);
  m.test = read_idx_pair(dir / kMnistFiles[2], dir / kMnistFiles[3]);
  return m;
}

std::string mnist_sha256(const fs::path& root) {
  util::Sha256 h;
  for (const char* f : kMnistFiles) h.update(util::sha256_file(root / "mnist" / f));
  return h.hex_digest();
}

RegressionSplit mnist_split(const Mnist& m, bool standard, double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ConfigError(fmt::format("MNIST pixel scale must be positive and finite (got {})", scale));
  }
  RegressionSplit s;
  s.dataset = "mnist";
  s.split = 0;
  s.X_train = m.train.X;
  s.X_test = m.test.X;
  s.y_train = arma::conv_to<arma::vec>::from(m.train.labels);
  s.y_test = arma::conv_to<arma::vec>::from(m.test.labels);
  s.x_stats.mean = arma::zeros<arma::rowvec>(m.train.X.n_cols);
  s.x_stats.std = arma::ones<arma::rowvec>(m.train.X.n_cols);
  if (standard) {
    const arma::vec all = arma::vectorise(m.train.X);
    s.x_stats.mean.fill(arma::mean(all));
    s.x_stats.std.fill(arma::stddev(all));
    s.X_train = s.x_stats.transform(s.X_train);
    s.X_test = s.x_stats.transform(s.X_test);
  }
  if (scale != 1.0) {  // x_stats maps other points (dkp predict --input) the same way
    s.X_train *= scale;
    s.X_test *= scale;
    s.x_stats.std /= scale;
  }
  return s;
}

size_t dataset_classes(const std::string& dataset) {
  return dataset == "mnist" ? 10 : 0;
}

}  // namespace dkp::data
