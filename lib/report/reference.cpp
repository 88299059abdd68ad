#include "report/reference.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"

namespace dkp::report {

namespace fs = std::filesystem;

double RefRow::standard_error(int n_fallback) const {
  if (!error) return 0.0;
  if (error_kind == "se" || error_kind == "unspecified") return *error;
  if (error_kind == "sd") {
    const int n = n_splits > 0 ? n_splits : n_fallback;
    return n > 0 ? *error / std::sqrt(static_cast<double>(n)) : *error;
  }
  return 0.0;
}

namespace {

// u / sqrt(12) for the place value u of the last printed digit of `t` ("-0.01": 0.01; "4.23e-5":
// 1e-7); 0 when `t` holds no digit.
double printed_rounding_sd(const std::string& t) {
  const size_t e = t.find_first_of("eE");
  const std::string mantissa = t.substr(0, e);
  const size_t dot = mantissa.find('.');
  if (mantissa.find_first_of("0123456789") == std::string::npos) return 0.0;
  int place = dot == std::string::npos ? 0 : -static_cast<int>(mantissa.size() - dot - 1);
  if (e != std::string::npos) {
    try {
      place += std::stoi(t.substr(e + 1));
    } catch (const std::exception&) {
      return 0.0;
    }
  }
  return std::pow(10.0, place) / std::sqrt(12.0);
}

}  // namespace

double RefRow::rounding_sd() const {
  return printed_rounding_sd(mean_text);
}

double RefRow::error_rounding_sd() const {
  return printed_rounding_sd(error_text);
}

std::optional<double> RefRow::spread_sd() const {
  if (!error) return std::nullopt;
  // The printed error is known to its rounding only ("± 0.00" is below 0.005, not zero).
  const double known = std::hypot(*error, error_rounding_sd());
  if (error_kind == "sd") return known;
  if (n_splits < 2) return std::nullopt;
  const double root_n = std::sqrt(static_cast<double>(n_splits));
  if (error_kind == "se") return known * root_n;
  if (error_kind == "2se_paired") return known / 2.0 * root_n;
  return std::nullopt;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

double parse_double(const std::string& s, const std::string& where, const std::string& col) {
  const auto v = util::parse_double(s);
  if (!v || !std::isfinite(*v)) {
    throw DataError(fmt::format("{}: column '{}' is '{}', expected a number", where, col, s));
  }
  return *v;
}

int parse_int(const std::string& s, const std::string& where, const std::string& col) {
  if (s.empty()) return 0;
  const auto v = util::parse_integer(s);
  if (!v || *v < 0 || *v > 1000000) {
    throw DataError(fmt::format("{}: column '{}' is '{}', expected an integer", where, col, s));
  }
  return static_cast<int>(*v);
}

}  // namespace

std::vector<RefRow> load_reference_csv(const fs::path& file) {
  const std::string text = util::read_file(file);
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  std::map<std::string, size_t> col;
  std::vector<RefRow> rows;
  const std::vector<std::string> required = {"paper", "table",     "dataset", "depth",
                                             "model", "posterior", "metric",  "mean",
                                             "error", "error_kind"};
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    const auto f = split_csv_line(line);
    const std::string where = fmt::format("{}:{}", file.string(), line_no);
    if (col.empty()) {
      // A repeated name would leave fewer names than fields, and a row of that many fields would
      // then be indexed past its end (found by the reference-csv fuzz target).
      for (size_t i = 0; i < f.size(); ++i) {
        if (!col.emplace(f[i], i).second) {
          throw DataError(fmt::format("{}: header names column '{}' twice", where, f[i]));
        }
      }
      for (const auto& r : required) {
        if (!col.count(r)) throw DataError(fmt::format("{}: header lacks column '{}'", where, r));
      }
      continue;
    }
    if (f.size() != col.size()) {
      throw DataError(fmt::format("{}: {} fields, the header has {}", where, f.size(), col.size()));
    }
    auto get = [&](const std::string& name) -> std::string {
      const auto it = col.find(name);
      return it == col.end() ? std::string() : f[it->second];
    };
    RefRow r;
    r.paper = get("paper");
    r.table = get("table");
    r.dataset = get("dataset");
    r.depth = parse_int(get("depth"), where, "depth");
    r.model = get("model");
    r.posterior = get("posterior");
    r.metric = get("metric");
    r.mean = parse_double(get("mean"), where, "mean");
    r.mean_text = get("mean");
    if (!get("error").empty()) r.error = parse_double(get("error"), where, "error");
    r.error_text = get("error");
    r.error_kind = get("error_kind");
    static const std::vector<std::string> kinds = {"se", "sd", "2se_paired", "unspecified", "none"};
    if (std::find(kinds.begin(), kinds.end(), r.error_kind) == kinds.end()) {
      throw DataError(
          fmt::format("{}: error_kind '{}' is not one of se, sd, 2se_paired, "
                      "unspecified, none",
                      where, r.error_kind));
    }
    r.kernel = get("kernel");
    r.n_splits = parse_int(get("n_splits"), where, "n_splits");
    r.bold = get("bold") == "1";
    r.note = get("note");
    r.source = where;
    if (const std::string sp = get("splits"); !sp.empty()) {
      size_t start = 0;
      while (start <= sp.size()) {
        const size_t end = std::min(sp.find(';', start), sp.size());
        r.splits.push_back(parse_int(sp.substr(start, end - start), where, "splits"));
        start = end + 1;
      }
    }
    if (r.paper.empty() || r.table.empty() || r.metric.empty()) {
      throw DataError(fmt::format("{}: paper, table and metric must not be empty", where));
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<RefRow> load_reference_dir(const fs::path& dir) {
  std::vector<RefRow> rows;
  for (const char* origin : {"paper", "code"}) {
    const fs::path d = std::string(origin) == "paper" ? dir : dir / "code";
    std::error_code ec;
    if (!fs::is_directory(d, ec)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      if (e.path().extension() == ".csv") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      for (auto& r : load_reference_csv(f)) {
        r.origin = origin;
        rows.push_back(std::move(r));
      }
    }
  }
  return rows;
}

}  // namespace dkp::report
