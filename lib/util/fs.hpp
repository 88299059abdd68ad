// Small file-system helpers: atomic writes and whole-file reads.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace dkp::util {

/// Writes `content` to `path` atomically: a temporary file in the same directory is written,
/// flushed and renamed over `path`, so readers never see a half-written file.
/// Creates parent directories. Throws dkp::Error on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// Reads a whole file; throws dkp::DataError naming the file when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace dkp::util
