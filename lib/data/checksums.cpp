#include "data/checksums.hpp"

#include <sstream>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/sha256.hpp"

namespace dkp::data {

std::vector<ChecksumEntry> parse_checksums(const std::string& text) {
  std::vector<ChecksumEntry> out;
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto sep = line.find("  ");
    if (sep != 64 || line.size() <= 66 ||
        line.substr(0, 64).find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw DataError(
          fmt::format("checksum list line {}: expected '<64 hex digits>  <path>'", line_no));
    }
    out.push_back({line.substr(0, 64), line.substr(66)});
  }
  return out;
}

VerifyReport verify_checksums(const std::filesystem::path& root,
                              const std::vector<ChecksumEntry>& entries,
                              const std::string& filter) {
  VerifyReport report;
  for (const auto& e : entries) {
    if (!filter.empty() && e.path.rfind(filter, 0) != 0) continue;
    const auto p = root / e.path;
    if (!std::filesystem::exists(p)) {
      report.missing.push_back(e.path);
    } else if (util::sha256_file(p) != e.sha256) {
      report.mismatched.push_back(e.path);
    } else {
      ++report.ok;
    }
  }
  return report;
}

}  // namespace dkp::data
