// A minimal JSON writer for manifests, results and checkpoints' metadata. Doubles are written
// with 17 significant digits (exact round trip); non-finite doubles become null.
// (Reading JSON is done with yaml-cpp, which parses JSON.)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace dkp::util {

class Json {
 public:
  using Object = std::vector<std::pair<std::string, Json>>;  // keeps insertion order
  using Array = std::vector<Json>;

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<int64_t>(i)) {}
  Json(long i) : v_(static_cast<int64_t>(i)) {}
  Json(long long i) : v_(static_cast<int64_t>(i)) {}
  Json(unsigned i) : v_(static_cast<int64_t>(i)) {}
  Json(unsigned long i) : v_(static_cast<int64_t>(i)) {}
  Json(unsigned long long i) : v_(static_cast<int64_t>(i)) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}

  static Json object() { return Json(Object{}); }
  static Json array() { return Json(Array{}); }

  /// Sets (or replaces) a key of an object.
  Json& set(const std::string& key, Json value);
  /// Appends to an array.
  Json& push(Json value);

  /// Serialises; indent > 0 pretty-prints.
  std::string dump(int indent = 2) const;

 private:
  void write(std::string& out, int indent, int level) const;
  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

/// JSON string escaping (quotes included).
std::string json_quote(const std::string& s);

}  // namespace dkp::util
