#include "util/json.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::util {

Json& Json::set(const std::string& key, Json value) {
  auto* obj = std::get_if<Object>(&v_);
  if (!obj) throw Error("Json::set on a non-object");
  for (auto& kv : *obj) {
    if (kv.first == key) {
      kv.second = std::move(value);
      return *this;
    }
  }
  obj->emplace_back(key, std::move(value));
  return *this;
}

Json& Json::push(Json value) {
  auto* arr = std::get_if<Array>(&v_);
  if (!arr) throw Error("Json::push on a non-array");
  arr->push_back(std::move(value));
  return *this;
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
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
        if (c < 0x20)
          out += fmt::format("\\u{:04x}", c);
        else
          out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void Json::write(std::string& out, int indent, int level) const {
  const std::string nl = indent > 0 ? "\n" : "";
  auto pad = [&](int l) { return std::string(indent > 0 ? size_t(indent * l) : 0, ' '); };
  if (std::holds_alternative<std::nullptr_t>(v_)) {
    out += "null";
  } else if (auto* b = std::get_if<bool>(&v_)) {
    out += *b ? "true" : "false";
  } else if (auto* i = std::get_if<int64_t>(&v_)) {
    out += std::to_string(*i);
  } else if (auto* d = std::get_if<double>(&v_)) {
    out += std::isfinite(*d) ? fmt::format("{:.17g}", *d) : "null";
  } else if (auto* s = std::get_if<std::string>(&v_)) {
    out += json_quote(*s);
  } else if (auto* a = std::get_if<Array>(&v_)) {
    if (a->empty()) {
      out += "[]";
      return;
    }
    out += "[" + nl;
    for (size_t k = 0; k < a->size(); ++k) {
      out += pad(level + 1);
      (*a)[k].write(out, indent, level + 1);
      out += (k + 1 < a->size() ? "," : "") + nl;
    }
    out += pad(level) + "]";
  } else if (auto* o = std::get_if<Object>(&v_)) {
    if (o->empty()) {
      out += "{}";
      return;
    }
    out += "{" + nl;
    for (size_t k = 0; k < o->size(); ++k) {
      out += pad(level + 1) + json_quote((*o)[k].first) + (indent > 0 ? ": " : ":");
      (*o)[k].second.write(out, indent, level + 1);
      out += (k + 1 < o->size() ? "," : "") + nl;
    }
    out += pad(level) + "}";
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  if (indent > 0) out += "\n";
  return out;
}

}  // namespace dkp::util
