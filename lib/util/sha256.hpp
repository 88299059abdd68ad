// SHA-256 (FIPS 180-4), used to verify dataset files and to fingerprint run configurations.
// Computed by OpenSSL's libcrypto (its EVP digest interface).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace dkp::util {

/// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Finishes the hash and returns it as 64 lowercase hex characters (once: update and
  /// hex_digest throw dkp::Error afterwards).
  std::string hex_digest();

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
  bool finished_ = false;
};

/// Hex SHA-256 of a string.
std::string sha256_hex(std::string_view data);

/// Hex SHA-256 of a file, streamed; throws dkp::DataError if it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace dkp::util
