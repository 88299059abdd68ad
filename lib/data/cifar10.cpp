#include "data/cifar10.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/sha256.hpp"

namespace dkp::data {

namespace fs = std::filesystem;

namespace {

constexpr size_t kPixels = kCifarRecordBytes - 1;

// The number of records of a batch file, from its size; throws DataError naming the file when it
// is missing, empty or not a whole number of records.
size_t record_count(const fs::path& path) {
  if (!fs::exists(path)) {
    throw DataError(
        fmt::format("missing data file '{}' (data-scripts/fetch_cifar10.sh)", path.string()));
  }
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) throw DataError(fmt::format("cannot read '{}': {}", path.string(), ec.message()));
  if (size == 0 || size % kCifarRecordBytes != 0) {
    throw DataError(fmt::format(
        "{}: {} bytes is not a whole number of {}-byte CIFAR-10 records (truncated, or not a "
        "CIFAR-10 batch file)",
        path.string(), size, kCifarRecordBytes));
  }
  return size / kCifarRecordBytes;
}

// Reads the batch files in order into one set: every file is sized first, so X is allocated
// once (CIFAR-10's training images are 1.2 GB as doubles).
ImageSet read_batches(const std::vector<fs::path>& paths) {
  std::vector<size_t> counts;
  size_t n = 0;
  for (const auto& p : paths) n += counts.emplace_back(record_count(p));
  ImageSet set;
  set.rows = set.cols = 32;
  set.channels = 3;
  set.X.set_size(n, kPixels);
  set.labels.set_size(n);
  size_t at = 0;  // the first row of the current file
  std::vector<unsigned char> b;
  for (size_t f = 0; f < paths.size(); ++f) {
    const fs::path& path = paths[f];
    b.resize(counts[f] * kCifarRecordBytes);
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(b.data()), std::streamsize(b.size()));
    if (!in || size_t(in.gcount()) != b.size()) {
      throw DataError(
          fmt::format("{}: could read {} of its {} bytes", path.string(), in.gcount(), b.size()));
    }
    for (size_t i = 0; i < counts[f]; ++i) {
      const unsigned label = b[i * kCifarRecordBytes];
      if (label > 9) {
        throw DataError(fmt::format("{}: record {} (byte offset {}) has label {} (need 0..9)",
                                    path.string(), i + 1, i * kCifarRecordBytes, label));
      }
      set.labels[at + i] = label;
    }
    // X is images x pixels, column-major: filled a block of records at a time, so that both the
    // reads (along a record) and the writes (down a column) stay within a few cache lines.
    constexpr size_t kBlock = 64;
    for (size_t i0 = 0; i0 < counts[f]; i0 += kBlock) {
      const size_t i1 = std::min(counts[f], i0 + kBlock);
      for (size_t p = 0; p < kPixels; ++p) {
        double* col = set.X.colptr(p) + at;
        for (size_t i = i0; i < i1; ++i) col[i] = b[i * kCifarRecordBytes + 1 + p] / 255.0;
      }
    }
    at += counts[f];
  }
  return set;
}

}  // namespace

const std::array<const char*, 6>& cifar10_files() {
  static const std::array<const char*, 6> files = {
      "cifar-10-batches-bin/data_batch_1.bin", "cifar-10-batches-bin/data_batch_2.bin",
      "cifar-10-batches-bin/data_batch_3.bin", "cifar-10-batches-bin/data_batch_4.bin",
      "cifar-10-batches-bin/data_batch_5.bin", "cifar-10-batches-bin/test_batch.bin"};
  return files;
}

ImageSet read_cifar_batch(const fs::path& path) {
  return read_batches({path});
}

Mnist load_cifar10(const fs::path& root) {
  const fs::path dir = root / "cifar10";
  const auto& files = cifar10_files();
  std::vector<fs::path> train;
  for (size_t k = 0; k + 1 < files.size(); ++k) train.push_back(dir / files[k]);
  Mnist m;
  m.train = read_batches(train);
  m.test = read_batches({dir / files.back()});
  return m;
}

std::string cifar10_sha256(const fs::path& root) {
  util::Sha256 h;
  for (const char* f : cifar10_files()) h.update(util::sha256_file(root / "cifar10" / f));
  return h.hex_digest();
}

}  // namespace dkp::data
