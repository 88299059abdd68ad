// Exact text serialisation of doubles and named matrices, shared by the Adam state and parameter
// checkpoints. Doubles are written as hexadecimal floating point (std::to_chars with
// chars_format::hex, e.g. "1.999999999999ap-4"), which round-trips every double bit for bit
// (including -0, subnormals, inf; NaN keeps its sign but not its payload) and does not depend on
// the locale.
//
// A named-matrix block is one line:  <tag> <name> <rows> <cols> <v_0> <v_1> ... (column-major).
// Names must be non-empty and contain no whitespace.
#pragma once

#include <armadillo>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <string_view>

namespace dkp::training {

/// Exact hexadecimal text of a double (no "0x" prefix; "-" for negatives; "inf", "nan").
std::string format_exact(double x);

/// Parses format_exact's output. Throws dkp::DataError naming `where` on malformed text.
double parse_exact(std::string_view text, std::string_view where);

/// Throws dkp::ConfigError unless `name` is non-empty and free of whitespace.
void check_name(const std::string& name, std::string_view where);

/// Writes "<tag> <name> <rows> <cols> <values...>\n".
void write_named_matrix(std::ostream& os, std::string_view tag, const std::string& name,
                        const arma::mat& m);

/// A matrix block read back by read_named_matrix.
struct NamedMatrix {
  std::string name;
  arma::mat value;
};

/// Reads a block written by write_named_matrix whose tag must equal `tag`. Throws
/// dkp::DataError naming `where` on a wrong tag, a bad size or a malformed/missing value.
NamedMatrix read_named_matrix(std::istream& is, std::string_view tag, std::string_view where);

/// Reads the next whitespace-separated token and throws dkp::DataError naming `where` unless it
/// equals `expected`.
void expect_token(std::istream& is, std::string_view expected, std::string_view where);

/// Reads the next token as an unsigned integer (dkp::DataError naming `where` otherwise).
uint64_t read_u64(std::istream& is, std::string_view what, std::string_view where);

/// Throws dkp::DataError naming `where` unless only whitespace is left in `is`.
void expect_end_of_input(std::istream& is, std::string_view where);

}  // namespace dkp::training
