// Small file-system helpers: atomic writes and whole-file reads.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace dkp::util {

/// Writes `content` to `path` atomically: a temporary file in the same directory is written,
/// flushed and renamed over `path`, so readers never see a half-written file.
/// Creates parent directories. Throws dkp::Error on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

/// The writer's process id when `file` is one of write_file_atomic's temporary files
/// ("<name>.tmp.<pid>.<n>"), else nullopt.
std::optional<long> temp_file_writer(const std::filesystem::path& file);

/// Reads a whole file; throws dkp::DataError naming the file when it cannot be read.
std::string read_file(const std::filesystem::path& path);

}  // namespace dkp::util
