// CIFAR-10 (Krizhevsky 2009) in its official binary format, under
// <root>/cifar10/cifar-10-batches-bin/: data_batch_1.bin .. data_batch_5.bin (the 50000 training
// images, 10000 a file) and test_batch.bin (the 10000 test images). Every record is 3073 bytes: the
// label (0..9), then the 32 x 32 red plane, the green plane and the blue plane, each row-major.
// Not in the shared data: data-scripts/fetch_cifar10.sh installs it (optional, as
// Rectangle-Images).
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <string>

#include "data/mnist.hpp"

namespace dkp::data {

/// Bytes of one record: the label and 3 x 32 x 32 pixels.
constexpr size_t kCifarRecordBytes = 1 + 3 * 32 * 32;

/// The six files, relative to <root>/cifar10: the five training batches, then the test batch.
const std::array<const char*, 6>& cifar10_files();

/// Reads one batch file: every record as a row of 3072 pixels in [0, 1] (byte / 255) in the
/// file's order, the R plane, the G plane, then the B plane (feature 1024 c + 32 row + column),
/// and its label. Throws DataError naming the file when it is missing or empty, when its size is
/// not a whole number of records (a truncated file), or when a record's label is not 0..9 (naming
/// the record).
ImageSet read_cifar_batch(const std::filesystem::path& path);

/// Loads CIFAR-10 from <root>/cifar10: train the five training batches in order (50000 images in
/// the original), test the test batch (10000); any counts are accepted. channels is 3.
Mnist load_cifar10(const std::filesystem::path& root);

/// The six files' SHA-256 combined (a run manifest's data_sha256).
std::string cifar10_sha256(const std::filesystem::path& root);

}  // namespace dkp::data
