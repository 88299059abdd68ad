// Whole-string number parsing shared by the text readers (data files, grids, result stores,
// reference tables, training traces).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dkp::util {

/// The whole of `s` as a double (std::strtod: decimal or hexadecimal, "inf", "nan"; nothing may
/// be left over; a value too large for a double is no value, a value too small is the nearest
/// subnormal or zero), or nothing. Not necessarily finite:
/// callers that need a finite number check it.
std::optional<double> parse_double(std::string_view s);

/// The whole of `s` as a base-10 integer (std::strtoll; nothing may be left over, a value out of
/// range is no value), or nothing.
std::optional<long long> parse_integer(std::string_view s);

/// The log level a command line asks for, read before its options are parsed (so that what is
/// logged before the command's own parser runs obeys it): "warn" for `--quiet` or `-q`, which win
/// as they do in the parser, else the value of `--log-level X` or `--log-level=X`, else nothing.
/// The value is not checked here; the command's parser rejects a bad one.
std::optional<std::string> log_level_request(const std::vector<std::string>& args);

}  // namespace dkp::util
