#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::util {

namespace {

// The SHA-256 implementation, fetched once (an implicit fetch on every EVP_DigestInit_ex costs
// more than hashing a run configuration). Never freed: it lives as long as the process.
const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    const EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (!m) throw Error("OpenSSL: SHA-256 is not available");
    return m;
  }();
  return md;
}

}  // namespace

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const {
  EVP_MD_CTX_free(ctx);
}

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), sha256_md(), nullptr) != 1) {
    throw Error("OpenSSL: cannot start a SHA-256 digest");
  }
}

void Sha256::update(const void* data, size_t size) {
  if (finished_) throw Error("Sha256::update after hex_digest");
  if (size > 0 && EVP_DigestUpdate(ctx_.get(), data, size) != 1) {
    throw Error("OpenSSL: SHA-256 update failed");
  }
}

std::string Sha256::hex_digest() {
  if (finished_) throw Error("Sha256::hex_digest called twice");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), digest, &size) != 1 || size != 32) {
    throw Error("OpenSSL: SHA-256 final failed");
  }
  finished_ = true;
  std::string out;
  out.reserve(64);
  for (unsigned int i = 0; i < size; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("cannot open '{}'", path.string()));
  Sha256 h;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    h.update(buf.data(), size_t(in.gcount()));
  }
  if (in.bad()) throw DataError(fmt::format("error reading '{}'", path.string()));
  return h.hex_digest();
}

}  // namespace dkp::util
