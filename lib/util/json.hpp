// JSON for manifests, results, error records and the store, through nlohmann-json (Debian's
// nlohmann-json3-dev). Values are nlohmann's ordered_json (an object keeps its keys in the order
// they were set or read). Reading (parse_json, read_json_object) names the source, line and column
// of any error. Writing goes through Json::dump, which keeps dkp's format, unchanged since the
// first result store: two-space indentation, keys in insertion order, doubles with 17 significant
// digits ("{:.17g}": exact round trip, integral doubles without a decimal point), non-finite
// doubles as null, strings escaped as json_quote does. nlohmann's own dump() writes doubles in
// their shortest form ("0.1", "1.0") and so different bytes: nothing here calls it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace dkp::util {

/// A JSON value as read (parse_json) or built (Json::value).
using JsonValue = nlohmann::ordered_json;

/// A JSON value being built, and its one serialiser (dump, dkp's format).
class Json {
 public:
  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<int64_t>(i)) {}
  Json(long i) : v_(static_cast<int64_t>(i)) {}
  Json(long long i) : v_(static_cast<int64_t>(i)) {}
  Json(unsigned i) : v_(static_cast<uint64_t>(i)) {}
  Json(unsigned long i) : v_(static_cast<uint64_t>(i)) {}  // above INT64_MAX too (seeds)
  Json(unsigned long long i) : v_(static_cast<uint64_t>(i)) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  /// A value read with parse_json (e.g. to write it again).
  explicit Json(JsonValue v) : v_(std::move(v)) {}

  static Json object() { return Json(JsonValue::object()); }
  static Json array() { return Json(JsonValue::array()); }

  /// Sets (or replaces, in its place) a key of an object; throws dkp::Error on another value.
  Json& set(const std::string& key, Json value);
  /// Appends to an array; throws dkp::Error on another value.
  Json& push(Json value);

  /// Serialises in dkp's format (above); indent > 0 pretty-prints and ends with a newline.
  std::string dump(int indent = 2) const;

  const JsonValue& value() const { return v_; }

 private:
  JsonValue v_;
};

/// JSON string escaping (quotes included): ", \, \n, \r, \t by name, other control characters as
/// \u00XX, everything else as it is, except bytes that are not UTF-8, each written as U+FFFD (JSON
/// text is UTF-8: the parser would refuse them).
std::string json_quote(const std::string& s);

/// Parses JSON text. Throws dkp::DataError "<source>:<line>:<column>: not valid JSON: <error>"
/// (the line and column, counted from 1, column in bytes, of the byte where the parser stopped:
/// for a truncated text, just past its end).
JsonValue parse_json(std::string_view text, const std::string& source);

/// A file holding a JSON object, parsed. Throws dkp::DataError naming the file: unreadable (as
/// util::read_file), not JSON (as parse_json) or "<file>: not a JSON object".
JsonValue read_json_object(const std::filesystem::path& file);

/// A string member of a JSON object: "" when absent or null. Throws dkp::DataError "<source>:
/// <key> is a number, not a string" (or an object, ...) when it has another type.
std::string json_string(const JsonValue& object, const std::string& key, const std::string& source);

/// An integer member of a JSON object: `fallback` when absent or null. Throws dkp::DataError
/// "<source>: <key> is a string, not an integer" when it has another type or does not fit.
int64_t json_integer(const JsonValue& object, const std::string& key, const std::string& source,
                     int64_t fallback);

}  // namespace dkp::util
