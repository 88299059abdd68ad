// SHA-256 (FIPS 180-4), used to verify dataset files and to fingerprint run configurations.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace dkp::util {

/// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Finishes the hash and returns it as 64 lowercase hex characters.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

/// Hex SHA-256 of a string.
std::string sha256_hex(std::string_view data);

/// Hex SHA-256 of a file, streamed; throws dkp::DataError if it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace dkp::util
