#include "data/uci.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "data/datasets.hpp"
#include "data/mnist.hpp"
#include "data/toy.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"

namespace dkp::data {

namespace fs = std::filesystem;

const std::vector<UciInfo>& uci_catalogue() {
  static const std::vector<UciInfo> catalogue = [] {
    std::vector<UciInfo> c;
    for (const auto& d : builtin_datasets())
      if (d.kind == DatasetKind::Uci) c.push_back({d.name, d.folder});
    return c;
  }();
  return catalogue;
}

const UciInfo& uci_info(const std::string& name) {
  for (const auto& info : uci_catalogue()) {
    if (info.name == name || info.folder == name) return info;
  }
  dataset_info(name);  // ConfigError listing the known names
  throw ConfigError(fmt::format("'{}' is not a UCI dataset", name));
}

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Splits a line on runs of whitespace.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    size_t j = i;
    while (j < line.size() && !is_space(line[j])) ++j;
    if (j > i) fields.push_back(line.substr(i, j - i));
    i = j;
  }
  return fields;
}

double parse_double(std::string_view token, const fs::path& path, size_t line_no, size_t field) {
  if (token.empty()) {
    throw DataError(fmt::format("{}:{}: field {} is empty", path.string(), line_no, field + 1));
  }
  const auto parsed = util::parse_double(token);
  if (!parsed) {
    throw DataError(fmt::format("{}:{}: field {} is '{}', expected a number", path.string(),
                                line_no, field + 1, token));
  }
  const double v = *parsed;
  if (!std::isfinite(v)) {
    throw DataError(fmt::format("{}:{}: field {} is '{}', expected a finite number", path.string(),
                                line_no, field + 1, token));
  }
  return v;
}

// Splits a line on commas, trimming whitespace around each field; a blank line has no fields, and
// an empty field is kept (as an empty view) for the caller to reject.
std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  auto trim = [](std::string_view f) {
    while (!f.empty() && is_space(f.front())) f.remove_prefix(1);
    while (!f.empty() && is_space(f.back())) f.remove_suffix(1);
    return f;
  };
  if (trim(line).empty()) return fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(
        trim(line.substr(start, comma == std::string_view::npos ? line.npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

using Splitter = std::vector<std::string_view> (*)(std::string_view);

// Calls fn(line_no, fields) for every non-blank line of `text`, split by `split`.
template <class Fn>
void for_each_line(const std::string& text, Fn&& fn, Splitter split) {
  size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    ++line_no;
    const auto fields = split(std::string_view(text).substr(pos, end - pos));
    if (!fields.empty()) fn(line_no, fields);
    pos = end + 1;
  }
}

std::string read_data_file(const fs::path& path) {
  if (!fs::exists(path)) {
    throw DataError(fmt::format("missing data file '{}'", path.string()));
  }
  return util::read_file(path);
}

// Rows of numbers, all of the same length (the first row's); `header`: a first row whose first
// field is not a number is skipped.
arma::mat read_numbers(const fs::path& path, const std::string& text, Splitter split, bool header) {
  std::vector<double> values;
  size_t cols = 0, rows = 0, first_line = 0;
  bool first = true;
  for_each_line(
      text,
      [&](size_t line_no, const std::vector<std::string_view>& fields) {
        if (first) {
          first = false;
          if (header) {
            std::string tmp(fields[0]);
            char* end = nullptr;
            std::strtod(tmp.c_str(), &end);
            if (tmp.empty() || end != tmp.c_str() + tmp.size()) return;  // column names
          }
        }
        if (rows == 0) {
          cols = fields.size();
          first_line = line_no;
        } else if (fields.size() != cols) {
          throw DataError(fmt::format("{}:{}: row has {} fields, expected {} (as on line {})",
                                      path.string(), line_no, fields.size(), cols, first_line));
        }
        for (size_t f = 0; f < fields.size(); ++f)
          values.push_back(parse_double(fields[f], path, line_no, f));
        ++rows;
      },
      split);
  if (rows == 0) throw DataError(fmt::format("{}: no data rows", path.string()));
  // values are row-major; Armadillo is column-major.
  arma::mat m(values.data(), cols, rows);
  return m.t();
}

}  // namespace

arma::mat read_table(const fs::path& path) {
  return read_numbers(path, read_data_file(path), split_fields, false);
}

arma::mat read_points(const fs::path& path) {
  const std::string text = read_data_file(path);
  const bool commas = text.find(',') != std::string::npos;
  return read_numbers(path, text, commas ? split_commas : split_fields, true);
}

std::vector<long long> read_index_file(const fs::path& path) {
  std::vector<long long> out;
  const std::string text = read_data_file(path);
  for_each_line(
      text,
      [&](size_t line_no, const std::vector<std::string_view>& fields) {
        if (fields.size() != 1) {
          throw DataError(fmt::format("{}:{}: expected one integer, found {} fields", path.string(),
                                      line_no, fields.size()));
        }
        const auto v = util::parse_integer(fields[0]);
        if (!v || *v < 0) {
          throw DataError(fmt::format("{}:{}: '{}' is not a non-negative integer", path.string(),
                                      line_no, fields[0]));
        }
        out.push_back(*v);
      },
      split_fields);
  return out;
}

namespace {

arma::uvec checked_indices(const fs::path& path, size_t n_rows) {
  const auto raw = read_index_file(path);
  if (raw.empty()) throw DataError(fmt::format("{}: no indices", path.string()));
  std::vector<char> seen(n_rows, 0);
  arma::uvec idx(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] >= static_cast<long long>(n_rows)) {
      throw DataError(fmt::format("{}: index {} (entry {}) out of range: the data has {} rows",
                                  path.string(), raw[i], i + 1, n_rows));
    }
    if (seen[raw[i]]) {
      throw DataError(
          fmt::format("{}: duplicate index {} (entry {})", path.string(), raw[i], i + 1));
    }
    seen[raw[i]] = 1;
    idx[i] = static_cast<arma::uword>(raw[i]);
  }
  return idx;
}

}  // namespace

SplitIndices UciDataset::split(size_t k) const {
  if (k >= n_splits) {
    throw ConfigError(fmt::format("dataset '{}' has {} splits (0..{}); split {} requested",
                                  info.name, n_splits, n_splits - 1, k));
  }
  SplitIndices s;
  const fs::path train_path = dir / fmt::format("index_train_{}.txt", k);
  const fs::path test_path = dir / fmt::format("index_test_{}.txt", k);
  s.train = checked_indices(train_path, X.n_rows);
  s.test = checked_indices(test_path, X.n_rows);
  std::vector<char> in_train(X.n_rows, 0);
  for (auto i : s.train) in_train[i] = 1;
  for (auto i : s.test) {
    if (in_train[i]) {
      throw DataError(
          fmt::format("{}: row {} is in both the training split '{}' and the test split",
                      test_path.string(), i, train_path.filename().string()));
    }
  }
  return s;
}

UciDataset load_uci(const fs::path& root, const std::string& name) {
  UciDataset ds;
  ds.info = uci_info(name);
  ds.dir = root / "uci" / ds.info.folder / "data";
  if (!fs::is_directory(ds.dir)) {
    throw DataError(fmt::format(
        "dataset '{}' not found: no directory '{}' (fetch it with data-scripts/fetch_uci.sh or "
        "point --data / $DKP_DATA at a data root)",
        ds.info.name, ds.dir.string()));
  }
  const arma::mat table = read_table(ds.dir / "data.txt");
  const auto features = read_index_file(ds.dir / "index_features.txt");
  const auto target = read_index_file(ds.dir / "index_target.txt");
  if (target.size() != 1) {
    throw DataError(fmt::format("{}: expected exactly one target column, found {}",
                                (ds.dir / "index_target.txt").string(), target.size()));
  }
  if (features.empty()) {
    throw DataError(
        fmt::format("{}: no feature columns", (ds.dir / "index_features.txt").string()));
  }
  auto check_col = [&](long long c, const char* file) {
    if (c >= static_cast<long long>(table.n_cols)) {
      throw DataError(fmt::format("{}: column {} out of range: data.txt has {} columns",
                                  (ds.dir / file).string(), c, table.n_cols));
    }
  };
  arma::uvec fcols(features.size());
  for (size_t i = 0; i < features.size(); ++i) {
    check_col(features[i], "index_features.txt");
    if (features[i] == target[0]) {
      throw DataError(fmt::format("{}: the target column {} is also listed as a feature",
                                  (ds.dir / "index_features.txt").string(), target[0]));
    }
    fcols[i] = static_cast<arma::uword>(features[i]);
  }
  check_col(target[0], "index_target.txt");
  ds.X = table.cols(fcols);
  ds.y = table.col(static_cast<arma::uword>(target[0]));
  const auto n = read_index_file(ds.dir / "n_splits.txt");
  if (n.size() != 1 || n[0] < 1) {
    throw DataError(
        fmt::format("{}: expected one positive integer", (ds.dir / "n_splits.txt").string()));
  }
  ds.n_splits = static_cast<size_t>(n[0]);
  return ds;
}

}  // namespace dkp::data
