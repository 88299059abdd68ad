#include "util/error.hpp"

namespace dkp {

namespace {

// The length of the well-formed UTF-8 sequence of at least 2 bytes at s[i], or 0.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  unsigned min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  unsigned cp = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp >= 0x80 && cp < 0xA0) return 0;  // C1 controls
  return n;
}

}  // namespace

std::string printable_message(std::string_view message) {
  static const char* const hex = "0123456789abcdef";
  std::string out;
  out.reserve(message.size());
  for (size_t i = 0; i < message.size();) {
    const auto c = static_cast<unsigned char>(message[i]);
    if (c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)) {
      out += char(c);
      ++i;
    } else if (const size_t n = c >= 0x80 ? utf8_length(message, i) : 0; n > 0) {
      out.append(message.substr(i, n));
      i += n;
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
      ++i;
    }
  }
  return out;
}

}  // namespace dkp
