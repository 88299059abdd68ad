// Integrity of the data files dkp reads: sha256 against the list kept in
// data-scripts/SHA256SUMS (embedded into the binary at build time).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace dkp::data {

/// The embedded checksum list ("<sha256>  <relative path>" per line).
const char* embedded_sha256sums();

struct ChecksumEntry {
  std::string sha256;
  std::string path;  ///< relative to the data root
};

/// Parses a sha256sum-style list; throws dkp::DataError on a malformed line.
std::vector<ChecksumEntry> parse_checksums(const std::string& text);

struct VerifyReport {
  size_t ok = 0;
  std::vector<std::string> missing;
  std::vector<std::string> mismatched;
  bool passed() const { return missing.empty() && mismatched.empty(); }
};

/// Verifies entries under `root`. `filter` keeps only paths starting with it (empty: all).
VerifyReport verify_checksums(const std::filesystem::path& root,
                              const std::vector<ChecksumEntry>& entries,
                              const std::string& filter = "");

}  // namespace dkp::data
