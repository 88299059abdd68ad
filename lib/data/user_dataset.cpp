#include "data/user_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "random/stream.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"
#include "util/sha256.hpp"

namespace dkp::data {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// The fields of one CSV line: comma-separated (trimmed), or whitespace-separated.
std::vector<std::string> fields_of(const std::string& line, bool commas) {
  std::vector<std::string> out;
  if (commas) {
    size_t start = 0;
    while (true) {
      const size_t c = line.find(',', start);
      out.push_back(
          trim(line.substr(start, c == std::string::npos ? std::string::npos : c - start)));
      if (c == std::string::npos) break;
      start = c + 1;
    }
  } else {
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
      if (j > i) out.push_back(line.substr(i, j - i));
      i = j;
    }
  }
  return out;
}

std::string where_of(const fs::path& file, const YAML::Node& n) {
  return n.Mark().line >= 0 ? fmt::format("{}:{}", file.string(), n.Mark().line + 1)
                            : file.string();
}

// {k} in a pattern -> k.
std::string with_split(const std::string& pattern, int k) {
  std::string out = pattern;
  const size_t at = out.find("{k}");
  if (at != std::string::npos) out.replace(at, 3, std::to_string(k));
  return out;
}

}  // namespace

std::string SplitRule::canonical() const {
  if (kind == "random") return fmt::format("random:{}:{}:{}", count, test_fraction, seed);
  if (kind == "kfold") return fmt::format("kfold:{}:{}", count, seed);
  return fmt::format("index:{}:{}:{}", count, train_pattern, test_pattern);
}

UserDatasetSpec read_user_dataset_spec(const fs::path& yaml_file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(yaml_file.string());
  } catch (const YAML::BadFile&) {
    throw DataError(fmt::format("cannot read dataset declaration {}", yaml_file.string()));
  } catch (const YAML::ParserException& e) {
    throw DataError(
        fmt::format("{}:{}: invalid YAML: {}", yaml_file.string(), e.mark.line + 1, e.msg));
  }
  const auto fail = [&](const YAML::Node& n, const std::string& msg) {
    throw DataError(fmt::format("{}: {}", where_of(yaml_file, n), msg));
  };
  if (!root.IsMap()) fail(root, "a dataset declaration is a mapping (file, task, target, splits)");
  const std::set<std::string> allowed = {"file",     "task",   "target",
                                         "features", "splits", "description"};
  for (const auto& kv : root) {
    const std::string k = kv.first.Scalar();
    if (!allowed.count(k)) {
      fail(kv.first, fmt::format("unknown key '{}' (keys: file, task, target, features, splits, "
                                 "description)",
                                 k));
    }
  }
  const auto scalar = [&](const char* key) {
    const YAML::Node n = root[key];
    if (!n) fail(root, fmt::format("missing key '{}'", key));
    if (!n.IsScalar() || n.Scalar().empty()) fail(n, fmt::format("'{}' needs a value", key));
    return n.Scalar();
  };
  UserDatasetSpec s;
  s.name = yaml_file.stem().string();
  s.declaration = yaml_file;
  const fs::path file = scalar("file");
  s.csv = file.is_absolute() ? file : yaml_file.parent_path() / file;
  if (!fs::is_regular_file(s.csv)) {
    fail(root["file"], fmt::format("no such file {}", s.csv.string()));
  }
  s.task = root["task"] ? scalar("task") : "regression";
  if (s.task != "regression" && s.task != "classification") {
    fail(root["task"], fmt::format("task must be regression or classification (got '{}')", s.task));
  }
  s.target = scalar("target");
  if (const YAML::Node f = root["features"]) {
    if (!f.IsSequence() || f.size() == 0) fail(f, "features: a non-empty list of column names");
    for (const auto& c : f) {
      if (!c.IsScalar()) fail(c, "features: a list of column names");
      if (c.Scalar() == s.target) fail(c, fmt::format("'{}' is the target column", c.Scalar()));
      s.features.push_back(c.Scalar());
    }
  }
  const YAML::Node sp = root["splits"];
  if (!sp)
    fail(root, "missing key 'splits' ({kind: random, count: 5, test_fraction: 0.1, seed: 0})");
  if (!sp.IsMap() || !sp["kind"]) fail(sp, "splits: a mapping with kind random, kfold or index");
  SplitRule& r = s.splits;
  r.kind = sp["kind"].Scalar();
  const std::map<std::string, std::set<std::string>> keys = {
      {"random", {"kind", "count", "test_fraction", "seed"}},
      {"kfold", {"kind", "count", "seed"}},
      {"index", {"kind", "count", "train", "test"}}};
  if (!keys.count(r.kind)) {
    fail(sp["kind"], fmt::format("splits.kind must be random, kfold or index (got '{}')", r.kind));
  }
  for (const auto& kv : sp) {
    if (!keys.at(r.kind).count(kv.first.Scalar())) {
      fail(kv.first,
           fmt::format("splits: unknown key '{}' for kind {}", kv.first.Scalar(), r.kind));
    }
  }
  if (!sp["count"]) fail(sp, "splits: missing key 'count'");
  const auto count = util::parse_integer(sp["count"].Scalar());
  if (!count || *count < 1 || *count > 1000) fail(sp["count"], "splits.count must be in 1..1000");
  r.count = int(*count);
  if (r.kind == "kfold" && r.count < 2) fail(sp["count"], "kfold needs count >= 2");
  if (const YAML::Node seed = sp["seed"]) {
    const auto v = util::parse_integer(seed.Scalar());
    if (!v || *v < 0) fail(seed, "splits.seed must be a non-negative integer");
    r.seed = static_cast<unsigned long long>(*v);
  }
  if (r.kind == "random") {
    if (!sp["test_fraction"]) fail(sp, "splits: missing key 'test_fraction'");
    const auto v = util::parse_double(sp["test_fraction"].Scalar());
    if (!v || !(*v > 0.0 && *v < 1.0)) fail(sp["test_fraction"], "test_fraction must be in (0, 1)");
    r.test_fraction = *v;
  }
  if (r.kind == "index") {
    for (const char* k : {"train", "test"}) {
      if (!sp[k] || !sp[k].IsScalar() || sp[k].Scalar().find("{k}") == std::string::npos) {
        fail(sp[k] ? sp[k] : sp, fmt::format("splits.{}: a file name with {{k}} for the split", k));
      }
    }
    r.train_pattern = sp["train"].Scalar();
    r.test_pattern = sp["test"].Scalar();
  }
  return s;
}

UserDataset load_user_dataset(const UserDatasetSpec& spec) {
  std::ifstream in(spec.csv);
  if (!in) throw DataError(fmt::format("cannot open {}", spec.csv.string()));
  const std::string file = spec.csv.string();
  std::string line;
  size_t line_no = 0;
  // The header: the first non-blank line.
  std::vector<std::string> header;
  bool commas = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    commas = line.find(',') != std::string::npos;
    header = fields_of(line, commas);
    break;
  }
  if (header.empty()) throw DataError(fmt::format("{}: empty file (expected a header row)", file));
  std::map<std::string, size_t> column;
  for (size_t j = 0; j < header.size(); ++j) {
    if (header[j].empty()) {
      throw DataError(fmt::format("{}:{}: column {} has no name", file, line_no, j + 1));
    }
    if (!column.emplace(header[j], j).second) {
      throw DataError(fmt::format("{}:{}: column '{}' appears twice", file, line_no, header[j]));
    }
  }
  const auto index_of = [&](const std::string& name) {
    const auto it = column.find(name);
    if (it == column.end()) {
      std::string names;
      for (const auto& h : header) names += (names.empty() ? "" : ", ") + h;
      throw DataError(fmt::format("{}:{}: no column '{}' (declared in {}; columns: {})", file,
                                  line_no, name, spec.declaration.string(), names));
    }
    return it->second;
  };
  const size_t target = index_of(spec.target);
  std::vector<size_t> feats;
  UserDataset ds;
  ds.spec = spec;
  if (spec.features.empty()) {
    for (size_t j = 0; j < header.size(); ++j)
      if (j != target) feats.push_back(j);
  } else {
    for (const auto& f : spec.features) feats.push_back(index_of(f));
  }
  if (feats.empty())
    throw DataError(fmt::format("{}: no feature columns besides the target", file));
  for (size_t j : feats) ds.feature_names.push_back(header[j]);
  const bool classify = spec.task == "classification";
  std::vector<std::vector<double>> rows;
  std::vector<std::string> raw_labels;
  std::vector<double> targets;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const auto f = fields_of(line, commas);
    if (f.size() != header.size()) {
      throw DataError(fmt::format("{}:{}: {} fields, the header has {}", file, line_no, f.size(),
                                  header.size()));
    }
    std::vector<double> row;
    for (size_t j : feats) {
      const auto v = util::parse_double(f[j]);
      if (!v || !std::isfinite(*v)) {
        throw DataError(fmt::format("{}:{}: column '{}': '{}' is not a finite number", file,
                                    line_no, header[j], f[j]));
      }
      row.push_back(*v);
    }
    rows.push_back(std::move(row));
    if (classify) {
      if (f[target].empty()) {
        throw DataError(fmt::format("{}:{}: column '{}': empty label", file, line_no, spec.target));
      }
      raw_labels.push_back(f[target]);
    } else {
      const auto v = util::parse_double(f[target]);
      if (!v || !std::isfinite(*v)) {
        throw DataError(fmt::format("{}:{}: column '{}': '{}' is not a finite number", file,
                                    line_no, spec.target, f[target]));
      }
      targets.push_back(*v);
    }
  }
  if (rows.size() < 4) {
    throw DataError(fmt::format("{}: {} data rows; at least 4 are needed", file, rows.size()));
  }
  ds.X.set_size(rows.size(), feats.size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < feats.size(); ++j) ds.X(i, j) = rows[i][j];
  if (classify) {
    // Labels in sorted order: numerically when every label is a number, else as text.
    std::set<std::string> distinct(raw_labels.begin(), raw_labels.end());
    ds.labels.assign(distinct.begin(), distinct.end());
    const bool numeric = std::all_of(ds.labels.begin(), ds.labels.end(), [](const std::string& l) {
      return util::parse_double(l).has_value();
    });
    if (numeric) {
      std::sort(ds.labels.begin(), ds.labels.end(), [](const std::string& a, const std::string& b) {
        return *util::parse_double(a) < *util::parse_double(b);
      });
    }
    if (ds.labels.size() < 2) {
      throw DataError(
          fmt::format("{}: column '{}' has one class ('{}'); classification needs two "
                      "or more",
                      file, spec.target, ds.labels.front()));
    }
    std::map<std::string, double> index;
    for (size_t c = 0; c < ds.labels.size(); ++c) index[ds.labels[c]] = double(c);
    ds.y.set_size(raw_labels.size());
    for (size_t i = 0; i < raw_labels.size(); ++i) ds.y(i) = index.at(raw_labels[i]);
  } else {
    ds.y = arma::vec(targets);
  }
  ds.csv_sha256 = util::sha256_file(spec.csv);
  // Every split must be usable: checked now, before any training.
  for (int k = 0; k < spec.splits.count; ++k) ds.split(k);
  return ds;
}

SplitIndices UserDataset::split(int k) const {
  const SplitRule& r = spec.splits;
  if (k < 0 || k >= r.count) {
    throw ConfigError(
        fmt::format("split {} does not exist for {} (splits 0..{})", k, spec.name, r.count - 1));
  }
  const arma::uword n = X.n_rows;
  SplitIndices s;
  if (r.kind == "index") {
    const fs::path dir = spec.declaration.parent_path();
    const auto read = [&](const std::string& pattern) {
      const fs::path p = dir / with_split(pattern, k);
      const auto idx = read_index_file(p);
      arma::uvec u(idx.size());
      std::set<long long> seen;
      for (size_t i = 0; i < idx.size(); ++i) {
        if (idx[i] >= (long long)n || !seen.insert(idx[i]).second) {
          throw DataError(fmt::format("{}: row {} is out of range (0..{}) or repeated", p.string(),
                                      idx[i], n - 1));
        }
        u(i) = arma::uword(idx[i]);
      }
      return u;
    };
    s.train = read(r.train_pattern);
    s.test = read(r.test_pattern);
    const arma::uvec both = arma::intersect(s.train, s.test);
    if (!both.is_empty()) {
      throw DataError(fmt::format("{}: split {}: row {} is in both train and test",
                                  spec.declaration.string(), k, both(0)));
    }
  } else {
    // One permutation of the rows from the rule's seed: random splits take a fresh one per split,
    // k-fold one for all folds.
    random::Stream root(r.seed);
    random::Stream st = root.child("user-split", r.kind == "random" ? uint64_t(k) : 0);
    const arma::uvec perm = random::permutation(st, n);
    arma::uword lo, hi;
    if (r.kind == "random") {
      const arma::uword n_test =
          std::max<arma::uword>(1, arma::uword(std::round(r.test_fraction * double(n))));
      lo = 0;
      hi = std::min<arma::uword>(n_test, n);
    } else {
      lo = arma::uword(k) * n / arma::uword(r.count);
      hi = arma::uword(k + 1) * n / arma::uword(r.count);
    }
    if (hi <= lo || hi - lo >= n) {
      throw DataError(
          fmt::format("{}: split {} has {} training and {} test rows (at least 2 and 1)",
                      spec.declaration.string(), k, n - (hi - lo), hi - lo));
    }
    s.test = arma::sort(perm.subvec(lo, hi - 1));
    arma::uvec train(n - (hi - lo));
    arma::uword t = 0;
    for (arma::uword i = 0; i < n; ++i)
      if (i < lo || i >= hi) train(t++) = perm(i);
    s.train = arma::sort(train);
  }
  if (s.train.n_elem < 2 || s.test.n_elem < 1) {
    throw DataError(fmt::format("{}: split {} has {} training and {} test rows (at least 2 and 1)",
                                spec.declaration.string(), k, s.train.n_elem, s.test.n_elem));
  }
  return s;
}

std::string user_dataset_fingerprint(const UserDatasetSpec& spec) {
  return user_split_sha256(spec, -1).substr(0, 16);
}

std::string user_split_sha256(const UserDatasetSpec& spec, int k) {
  util::Sha256 h;
  h.update(util::sha256_file(spec.csv));
  std::string features;
  for (const auto& f : spec.features) features += f + ",";
  h.update(fmt::format("\ntask={}\ntarget={}\nfeatures={}\nsplits={}\n", spec.task, spec.target,
                       features, spec.splits.canonical()));
  if (spec.splits.kind == "index") {
    const fs::path dir = spec.declaration.parent_path();
    for (int j = 0; j < spec.splits.count; ++j) {
      if (k >= 0 && j != k) continue;
      for (const auto& p : {spec.splits.train_pattern, spec.splits.test_pattern}) {
        const fs::path f = dir / with_split(p, j);
        if (!fs::is_regular_file(f)) {
          throw DataError(fmt::format("{}: split {}: no index file {}", spec.declaration.string(),
                                      j, f.string()));
        }
        h.update(util::sha256_file(f));
      }
    }
  }
  if (k >= 0) h.update(fmt::format("split={}\n", k));
  return h.hex_digest();
}

RegressionSplit user_split(const UserDataset& ds, int k, Scaling scaling) {
  RegressionSplit out = standardised_split(ds.X, ds.y, ds.split(k), ds.labels.empty(), scaling);
  out.dataset = ds.spec.name;
  out.split = size_t(k);
  out.classes = ds.labels.size();
  return out;
}

std::vector<std::string> write_example_datasets(const fs::path& dest) {
  const fs::path dir = dest / "datasets";
  random::Stream root(0);
  {
    random::Stream s = root.child("example-friedman", 0);
    std::string csv = "x1,x2,x3,x4,x5,y\n";
    for (int i = 0; i < 400; ++i) {
      double x[5];
      for (double& v : x) v = random::uniform(s);
      const double y = 10.0 * std::sin(M_PI * x[0] * x[1]) + 20.0 * (x[2] - 0.5) * (x[2] - 0.5) +
                       10.0 * x[3] + 5.0 * x[4] + random::normal(s);
      csv += fmt::format("{:.6f},{:.6f},{:.6f},{:.6f},{:.6f},{:.6f}\n", x[0], x[1], x[2], x[3],
                         x[4], y);
    }
    util::write_file_atomic(dir / "friedman.csv", csv);
    util::write_file_atomic(
        dir / "friedman.yaml",
        "# Friedman's regression function #1 (Friedman 1991): y = 10 sin(pi x1 x2) + 20 (x3 - "
        "0.5)^2\n# + 10 x4 + 5 x5 + N(0, 1), inputs uniform on [0, 1]; written by `dkp data "
        "example`.\nfile: friedman.csv\ntask: regression\ntarget: y\nsplits: {kind: random, "
        "count: 5, test_fraction: 0.1, seed: 0}\n");
  }
  {
    random::Stream s = root.child("example-rings", 0);
    const char* names[] = {"inner", "middle", "outer"};
    std::string csv = "u,v,ring\n";
    for (int i = 0; i < 300; ++i) {
      const int c = i % 3;
      const double r = 1.0 + double(c) + 0.25 * random::normal(s);
      const double t = random::uniform(s, 0.0, 2.0 * M_PI);
      csv += fmt::format("{:.6f},{:.6f},{}\n", r * std::cos(t), r * std::sin(t), names[c]);
    }
    util::write_file_atomic(dir / "rings.csv", csv);
    util::write_file_atomic(
        dir / "rings.yaml",
        "# Three noisy concentric rings in 2-D (radii 1, 2, 3, noise sd 0.25), a 3-class "
        "problem;\n# written by `dkp data example`.\nfile: rings.csv\ntask: "
        "classification\ntarget: ring\nsplits: {kind: kfold, count: 5, seed: 0}\n");
  }
  return {"friedman", "rings"};
}

}  // namespace dkp::data
