// Whole-string number parsing shared by the text readers (data files, grids, result stores,
// reference tables, training traces).
#pragma once

#include <optional>
#include <string_view>

namespace dkp::util {

/// The whole of `s` as a double (std::strtod: decimal or hexadecimal, "inf", "nan"; nothing may
/// be left over; a value too large for a double is no value, a value too small is the nearest
/// subnormal or zero), or nothing. Not necessarily finite:
/// callers that need a finite number check it.
std::optional<double> parse_double(std::string_view s);

/// The whole of `s` as a base-10 integer (std::strtoll; nothing may be left over, a value out of
/// range is no value), or nothing.
std::optional<long long> parse_integer(std::string_view s);

}  // namespace dkp::util
