#include "training/exact_io.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::training {

std::string format_exact(double x) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::hex);
  return std::string(buf, res.ptr);
}

double parse_exact(std::string_view text, std::string_view where) {
  double x = 0.0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto res = std::from_chars(first, last, x, std::chars_format::hex);
  if (text.empty() || res.ec != std::errc() || res.ptr != last) {
    throw DataError(fmt::format("{}: malformed number '{}' (expected hexadecimal floating point)",
                                where, text.substr(0, 40)));
  }
  return x;
}

void check_name(const std::string& name, std::string_view where) {
  if (name.empty()) throw ConfigError(fmt::format("{}: empty parameter name", where));
  for (unsigned char c : name) {
    if (std::isspace(c) || !std::isprint(c)) {
      throw ConfigError(fmt::format(
          "{}: parameter name '{}' contains whitespace or a control character", where, name));
    }
  }
}

void write_named_matrix(std::ostream& os, std::string_view tag, const std::string& name,
                        const arma::mat& m) {
  os << tag << ' ' << name << ' ' << m.n_rows << ' ' << m.n_cols;
  for (arma::uword i = 0; i < m.n_elem; ++i) os << ' ' << format_exact(m[i]);
  os << '\n';
}

void expect_token(std::istream& is, std::string_view expected, std::string_view where) {
  std::string tok;
  if (!(is >> tok) || tok != expected) {
    throw DataError(fmt::format("{}: expected '{}' but found '{}'", where, expected,
                                is ? tok : std::string("end of input")));
  }
}

uint64_t read_u64(std::istream& is, std::string_view what, std::string_view where) {
  std::string tok;
  if (!(is >> tok)) {
    throw DataError(fmt::format("{}: expected {} but found end of input", where, what));
  }
  uint64_t v = 0;
  const auto res = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (res.ec != std::errc() || res.ptr != tok.data() + tok.size()) {
    throw DataError(fmt::format("{}: expected {} but found '{}'", where, what, tok));
  }
  return v;
}

NamedMatrix read_named_matrix(std::istream& is, std::string_view tag, std::string_view where) {
  expect_token(is, tag, where);
  NamedMatrix out;
  if (!(is >> out.name)) {
    throw DataError(fmt::format("{}: missing name after '{}'", where, tag));
  }
  const std::string ctx = fmt::format("{} ('{}' of '{}')", where, tag, out.name);
  const uint64_t rows = read_u64(is, "a row count", ctx);
  const uint64_t cols = read_u64(is, "a column count", ctx);
  constexpr uint64_t kMaxElems = uint64_t(1) << 40;
  if (rows > kMaxElems || cols > kMaxElems || (rows > 0 && cols > kMaxElems / rows)) {
    throw DataError(fmt::format("{}: implausible size {}x{}", ctx, rows, cols));
  }
  // The values are read before the matrix is sized, so that memory follows what the input holds:
  // a damaged or hostile file that claims a huge size is refused as truncated, not allocated
  // (found by the adam-state fuzz target: "m a 2 666666662 ..." asked for 10 GiB).
  const uint64_t n = rows * cols;
  std::vector<double> values;
  values.reserve(size_t(std::min<uint64_t>(n, uint64_t(1) << 16)));
  std::string tok;
  for (uint64_t i = 0; i < n; ++i) {
    if (!(is >> tok)) {
      throw DataError(fmt::format("{}: truncated after {} of {} values", ctx, i, n));
    }
    values.push_back(parse_exact(tok, ctx));
  }
  out.value.set_size(rows, cols);
  std::copy(values.begin(), values.end(), out.value.begin());
  return out;
}

void expect_end_of_input(std::istream& is, std::string_view where) {
  std::string tok;
  if (is >> tok) {
    throw DataError(fmt::format("{}: unexpected trailing content '{}'", where, tok));
  }
}

}  // namespace dkp::training
