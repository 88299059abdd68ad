#include "data/mnist.hpp"

#include "data/datasets.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "data/cifar10.hpp"
#include "data/uci.hpp"
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

namespace {

// The SHA-256 of the files' SHA-256s, in order (a run manifest's data_sha256).
template <size_t N>
std::string files_sha256(const fs::path& dir, const std::array<const char*, N>& files) {
  util::Sha256 h;
  for (const char* f : files) h.update(util::sha256_file(dir / f));
  return h.hex_digest();
}

}  // namespace

std::string mnist_sha256(const fs::path& root) {
  return files_sha256(root / "mnist", kMnistFiles);
}

ImageSet read_amat_images(const fs::path& path, size_t classes) {
  if (!fs::exists(path)) {
    throw DataError(
        fmt::format("missing data file '{}' (data-scripts/fetch_rectangles.sh)", path.string()));
  }
  const arma::mat t = read_table(path);  // finite numbers, the same field count on every line
  constexpr arma::uword kPixels = 28 * 28;
  if (t.n_rows == 0 || t.n_cols != kPixels + 1) {
    throw DataError(fmt::format("{}: {} lines of {} fields (need 784 pixels and a label)",
                                path.string(), t.n_rows, t.n_cols));
  }
  ImageSet s;
  s.rows = s.cols = 28;
  s.X = t.cols(0, kPixels - 1);
  s.labels.set_size(t.n_rows);
  for (arma::uword n = 0; n < t.n_rows; ++n) {
    const double y = t(n, kPixels);
    if (y != std::round(y) || y < 0.0 || y >= double(classes)) {
      throw DataError(fmt::format("{}: image {} has label {} (need 0..{})", path.string(), n + 1, y,
                                  classes - 1));
    }
    s.labels[n] = arma::uword(y);
    const arma::rowvec px = s.X.row(n);
    if (px.min() < 0.0 || px.max() > 1.0) {
      throw DataError(fmt::format("{}: image {} has pixels outside [0, 1]", path.string(), n + 1));
    }
  }
  return s;
}

namespace {
constexpr std::array<const char*, 2> kRectanglesFiles = {"rectangles_im_train.amat",
                                                         "rectangles_im_test.amat"};
}  // namespace

Mnist load_rectangles(const fs::path& root) {
  const fs::path dir = root / "rectangles";
  Mnist m;
  m.train = read_amat_images(dir / kRectanglesFiles[0], 2);
  m.test = read_amat_images(dir / kRectanglesFiles[1], 2);
  return m;
}

Mnist load_images(const fs::path& root, const std::string& name) {
  if (name == "mnist") return load_mnist(root);
  if (name == "rectangles") return load_rectangles(root);
  if (name == "cifar10") return load_cifar10(root);
  throw ConfigError(fmt::format("'{}' is not an image dataset ({})", name, image_dataset_names()));
}

std::string images_sha256(const fs::path& root, const std::string& name) {
  if (name == "mnist") return mnist_sha256(root);
  if (name == "cifar10") return cifar10_sha256(root);
  if (name != "rectangles") {
    throw ConfigError(
        fmt::format("'{}' is not an image dataset ({})", name, image_dataset_names()));
  }
  return files_sha256(root / "rectangles", kRectanglesFiles);
}

bool optional_dataset_missing(const fs::path& root, const std::string& dataset) {
  return (dataset == "rectangles" || dataset == "cifar10") && !fs::exists(root / dataset);
}

std::string not_installed_note(const std::string& dataset) {
  return fmt::format("not installed (optional: data-scripts/fetch_{}.sh)", dataset);
}

RegressionSplit image_split(Mnist m, bool standard, double scale) {
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw ConfigError(fmt::format("pixel scale must be positive and finite (got {})", scale));
  }
  const arma::uword n = m.train.X.n_rows, d = m.train.X.n_cols;
  const size_t channels = std::max<size_t>(m.train.channels, 1);
  if (d % channels != 0) {
    throw DataError(fmt::format("{} pixels are not {} equal channels", d, channels));
  }
  RegressionSplit s;
  s.dataset = "mnist";
  s.split = 0;
  s.y_train = arma::conv_to<arma::vec>::from(m.train.labels);
  s.y_test = arma::conv_to<arma::vec>::from(m.test.labels);
  s.x_stats.mean = arma::zeros<arma::rowvec>(d);
  s.x_stats.std = arma::ones<arma::rowvec>(d);
  if (standard) {
    // Per channel: the channel's features are consecutive columns, so contiguous in memory; the
    // statistics are taken over that block without copying it (one channel: all the pixels).
    const arma::uword per = d / channels;
    for (size_t c = 0; c < channels; ++c) {
      const arma::vec block(m.train.X.colptr(c * per), n * per, /*copy_aux_mem=*/false,
                            /*strict=*/true);
      s.x_stats.mean.cols(c * per, (c + 1) * per - 1).fill(arma::mean(block));
      s.x_stats.std.cols(c * per, (c + 1) * per - 1).fill(arma::stddev(block));
    }
    s.X_train = s.x_stats.transform(m.train.X);
    m.train.X.reset();
    s.X_test = s.x_stats.transform(m.test.X);
  } else {
    s.X_train = std::move(m.train.X);
    s.X_test = std::move(m.test.X);
  }
  if (scale != 1.0) {  // x_stats maps other points (dkp predict --input) the same way
    s.X_train *= scale;
    s.X_test *= scale;
    s.x_stats.std /= scale;
  }
  return s;
}

size_t dataset_classes(const std::string& dataset) {
  for (const auto& d : builtin_datasets())
    if (d.name == dataset && d.kind == DatasetKind::Images) return d.classes;
  return 0;
}

std::string image_dataset_names() {
  return "mnist, cifar10, rectangles";
}

}  // namespace dkp::data
