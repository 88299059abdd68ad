#include "util/json.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::util {

Json& Json::set(const std::string& key, Json value) {
  if (!v_.is_object()) throw Error("Json::set on a non-object");
  v_[key] = std::move(value.v_);
  return *this;
}

Json& Json::push(Json value) {
  if (!v_.is_array()) throw Error("Json::push on a non-array");
  v_.push_back(std::move(value.v_));
  return *this;
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF), 0 when there is none.
size_t utf8_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

void write(const JsonValue& v, std::string& out, int indent, int level) {
  const std::string nl = indent > 0 ? "\n" : "";
  auto pad = [&](int l) { return std::string(indent > 0 ? size_t(indent * l) : 0, ' '); };
  switch (v.type()) {
    case JsonValue::value_t::null:
      out += "null";
      return;
    case JsonValue::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return;
    case JsonValue::value_t::number_integer:
      out += std::to_string(v.get<int64_t>());
      return;
    case JsonValue::value_t::number_unsigned:
      out += std::to_string(v.get<uint64_t>());
      return;
    case JsonValue::value_t::number_float: {
      const double d = v.get<double>();
      out += std::isfinite(d) ? fmt::format("{:.17g}", d) : "null";
      return;
    }
    case JsonValue::value_t::string:
      out += json_quote(v.get_ref<const std::string&>());
      return;
    case JsonValue::value_t::array: {
      if (v.empty()) {
        out += "[]";
        return;
      }
      out += "[" + nl;
      size_t k = 0;
      for (const auto& e : v) {
        out += pad(level + 1);
        write(e, out, indent, level + 1);
        out += (++k < v.size() ? "," : "") + nl;
      }
      out += pad(level) + "]";
      return;
    }
    case JsonValue::value_t::object: {
      if (v.empty()) {
        out += "{}";
        return;
      }
      out += "{" + nl;
      size_t k = 0;
      for (const auto& [key, e] : v.items()) {
        out += pad(level + 1) + json_quote(key) + (indent > 0 ? ": " : ":");
        write(e, out, indent, level + 1);
        out += (++k < v.size() ? "," : "") + nl;
      }
      out += pad(level) + "}";
      return;
    }
    case JsonValue::value_t::binary:
    case JsonValue::value_t::discarded:
      break;
  }
  throw Error(fmt::format("Json::dump: a {} value has no JSON text", v.type_name()));
}

}  // namespace

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", c);
        } else if (c < 0x80) {
          out += static_cast<char>(c);
        } else if (const size_t n = utf8_length(s, i)) {
          out.append(s, i, n);
          i += n - 1;
        } else {
          out += "\xEF\xBF\xBD";  // U+FFFD for a byte that starts no UTF-8 character
        }
    }
  }
  return out + "\"";
}

std::string Json::dump(int indent) const {
  std::string out;
  write(v_, out, indent, 0);
  if (indent > 0) out += "\n";
  return out;
}

JsonValue parse_json(std::string_view text, const std::string& source) {
  try {
    return JsonValue::parse(text);
  } catch (const JsonValue::parse_error& e) {
    // e.byte counts from 1 the byte the parser stopped at (text.size() + 1 at the end).
    const size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text.size());
    const std::string_view before = text.substr(0, at);
    const size_t line = 1 + size_t(std::count(before.begin(), before.end(), '\n'));
    const size_t line_start = before.rfind('\n');
    const size_t column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    // nlohmann's message is "[json.exception.parse_error.N] parse error at line L, column C:
    // <error>"; its own column counts from 0 after a newline, so the error alone is kept.
    std::string what = e.what();
    const size_t tag = what.find("] ");
    const size_t colon = what.find(": ", tag == std::string::npos ? 0 : tag);
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw DataError(fmt::format("{}:{}:{}: not valid JSON: {}", source, line, column, what));
  } catch (const JsonValue::exception& e) {
    // E.g. a number too large for a double: no position is known.
    std::string what = e.what();
    const size_t tag = what.find("] ");
    if (tag != std::string::npos) what = what.substr(tag + 2);
    throw DataError(fmt::format("{}: not valid JSON: {}", source, what));
  }
}

JsonValue read_json_object(const std::filesystem::path& file) {
  JsonValue v = parse_json(read_file(file), file.string());
  if (!v.is_object()) throw DataError(fmt::format("{}: not a JSON object", file.string()));
  return v;
}

namespace {

// "a string", "a number", ... for messages.
std::string a_type(const JsonValue& v) {
  const std::string name = v.is_number() ? "number" : v.type_name();
  return (name == "array" || name == "object" ? "an " : "a ") + name;
}

}  // namespace

std::string json_string(const JsonValue& object, const std::string& key,
                        const std::string& source) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (!it->is_string()) {
    throw DataError(fmt::format("{}: {} is {}, not a string", source, key, a_type(*it)));
  }
  return it->get<std::string>();
}

int64_t json_integer(const JsonValue& object, const std::string& key, const std::string& source,
                     int64_t fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (it->is_number_integer() &&
      (!it->is_number_unsigned() || it->get<uint64_t>() <= uint64_t(INT64_MAX))) {
    return it->get<int64_t>();
  }
  if (it->is_number_integer()) {
    throw DataError(fmt::format("{}: {} is out of range ({})", source, key, it->get<uint64_t>()));
  }
  throw DataError(fmt::format("{}: {} is {}, not an integer", source, key, a_type(*it)));
}

}  // namespace dkp::util
