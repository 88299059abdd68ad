#include "experiments/grid.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "data/datasets.hpp"
#include "data/mnist.hpp"
#include "data/uci.hpp"
#include "experiments/names.hpp"
#include "models/registry.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// YAML schema

namespace {

struct Where {
  std::string file;
  YAML::Mark mark;
  std::string key;
};

class Parser {
 public:
  Parser(std::string file, fs::path data_root)
      : file_(std::move(file)), data_root_(std::move(data_root)) {}

  /// A dataset of the dataset table, user datasets from the grid's data root (data/datasets.hpp).
  data::DatasetInfo dataset(const std::string& name) const {
    return data_root_.empty() ? data::dataset_info(name) : data::dataset_info(name, data_root_);
  }

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key,
                         const std::string& msg) const {
    const YAML::Mark m = node.Mark();
    fail_at(m, key, msg);
  }
  [[noreturn]] void fail_at(const YAML::Mark& m, const std::string& key,
                            const std::string& msg) const {
    if (m.line < 0) throw ConfigError(fmt::format("{}: key '{}': {}", file_, key, msg));
    throw ConfigError(
        fmt::format("{}:{}:{}: key '{}': {}", file_, m.line + 1, m.column + 1, key, msg));
  }
  Where where(const YAML::Node& node, const std::string& key) const {
    return {file_, node.Mark(), key};
  }
  [[noreturn]] void fail_where(const Where& w, const std::string& msg) const {
    fail_at(w.mark, w.key, msg);
  }

  static std::string kind(const YAML::Node& n) {
    if (n.IsMap()) return "a mapping";
    if (n.IsSequence()) return "a list";
    if (n.IsNull()) return "nothing (null)";
    return fmt::format("'{}'", n.Scalar());
  }

  void expect_map(const YAML::Node& n, const std::string& key) const {
    if (!n.IsMap()) fail(n, key, "expected a mapping, got " + kind(n));
  }

  /// Every key of `map` must be in `allowed`; returns nothing, fails at the first unknown key.
  void check_keys(const YAML::Node& map, const std::string& path,
                  const std::vector<std::string>& allowed) const {
    expect_map(map, path);
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;
      const std::string name = k.IsScalar() ? k.Scalar() : std::string("?");
      const std::string full = path.empty() ? name : path + "." + name;
      if (!k.IsScalar()) fail(k, full, "keys must be plain names");
      if (!seen.insert(name).second) fail(k, full, "duplicate key");
      if (!contains(allowed, name)) {
        std::string hint;
        size_t best = 3;
        for (const auto& a : allowed) {
          const size_t d = edit_distance(name, a);
          if (d < best) {
            best = d;
            hint = a;
          }
        }
        fail(k, full,
             fmt::format("unknown key{} (allowed here: {})",
                         hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint),
                         join(allowed)));
      }
    }
  }

  long get_int(const YAML::Node& n, const std::string& key, long min, long max) const {
    if (!n.IsScalar()) fail(n, key, "expected an integer, got " + kind(n));
    const std::string& s = n.Scalar();
    const auto parsed = util::parse_integer(s);
    if (!parsed) fail(n, key, fmt::format("expected an integer, got '{}'", s));
    const long v = long(*parsed);
    if (v < min || v > max) {
      fail(n, key,
           max == std::numeric_limits<long>::max()
               ? fmt::format("{} is impossible: must be at least {}", v, min)
               : fmt::format("{} is impossible: must be in {}..{}", v, min, max));
    }
    return v;
  }

  double get_positive_double(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a number, got " + kind(n));
    const std::string& s = n.Scalar();
    const auto parsed = util::parse_double(s);
    if (!parsed || !std::isfinite(*parsed)) {
      fail(n, key, fmt::format("expected a number, got '{}'", s));
    }
    const double v = *parsed;
    if (!(v > 0)) fail(n, key, fmt::format("{} is impossible: must be positive", s));
    return v;
  }

  std::string get_string(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string, got " + kind(n));
    return n.Scalar();
  }

  std::string get_choice(const YAML::Node& n, const std::string& key,
                         const std::vector<std::string>& choices) const {
    const std::string s = get_string(n, key);
    if (!contains(choices, s)) {
      fail(n, key, fmt::format("'{}' is not one of: {}", s, join(choices)));
    }
    return s;
  }

  /// A scalar or a list of scalars, each validated by `one`.
  template <class T, class Fn>
  std::vector<T> get_list(const YAML::Node& n, const std::string& key, Fn one,
                          bool allow_scalar) const {
    std::vector<T> out;
    if (n.IsSequence()) {
      if (n.size() == 0) fail(n, key, "the list is empty");
      for (size_t i = 0; i < n.size(); ++i) {
        out.push_back(one(n[i], fmt::format("{}[{}]", key, i)));
      }
    } else if (allow_scalar && n.IsScalar()) {
      out.push_back(one(n, key));
    } else {
      fail(n, key, "expected a list, got " + kind(n));
    }
    return out;
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  fs::path data_root_;
};

template <class T>
struct Field {
  std::optional<T> value;
  Where where;
  void set(T v, Where w) {
    value = std::move(v);
    where = std::move(w);
  }
  void overlay(const Field& other) {
    if (other.value) *this = other;
  }
};

// A partial protocol: the grid's, a profile's, a model entry's or an override's values.
struct ProtocolPatch {
  Field<long> steps, kl_anneal, train_samples, test_samples, inducing, batch;
  Field<uint64_t> seed;
  Field<std::vector<LrPoint>> lr_schedule;
  Field<std::string> kernel, width, pixels;
  Field<double> pixel_scale;

  void overlay(const ProtocolPatch& o) {
    pixels.overlay(o.pixels);
    pixel_scale.overlay(o.pixel_scale);
    steps.overlay(o.steps);
    kl_anneal.overlay(o.kl_anneal);
    train_samples.overlay(o.train_samples);
    test_samples.overlay(o.test_samples);
    inducing.overlay(o.inducing);
    batch.overlay(o.batch);
    seed.overlay(o.seed);
    lr_schedule.overlay(o.lr_schedule);
    kernel.overlay(o.kernel);
    width.overlay(o.width);
  }
};

const std::vector<std::string> kProtocolKeys = {
    "steps",  "lr_schedule", "kl_anneal", "train_samples", "test_samples", "inducing", "batch",
    "kernel", "width",       "seed",      "pixels",        "pixel_scale",  "options"};

// Model options (models/options.hpp) by name: the values of each, more than one a sweep.
struct OptionsPatch {
  std::map<std::string, Field<std::vector<std::string>>> values;
  void overlay(const OptionsPatch& o) {
    for (const auto& [name, f] : o.values) values[name] = f;
  }
};

// An `options:` mapping: option name -> a value or a list of values (a sweep), each checked
// against the option's declaration.
OptionsPatch parse_options(const Parser& P, const YAML::Node& v, const std::string& key) {
  OptionsPatch out;
  P.check_keys(v, key, models::option_names());
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string name = it->first.Scalar();
    const std::string k = key + "." + name;
    const auto& decl = models::option_decl(name);
    auto values = P.get_list<std::string>(
        it->second, k,
        [&](const YAML::Node& n, const std::string& kk) {
          const std::string text = P.get_string(n, kk);
          try {
            const std::string value = models::canonical_value(decl, text, kk);
            models::check_value(decl, value);
            return value;
          } catch (const ConfigError& e) {
            P.fail(n, kk, e.what());
          }
        },
        true);
    std::set<std::string> uniq(values.begin(), values.end());
    if (uniq.size() != values.size()) P.fail(it->second, k, "a value is listed twice");
    out.values[name].set(values, P.where(it->second, k));
  }
  return out;
}

// Parses the protocol keys present in `map` (other keys are the caller's business).
ProtocolPatch parse_protocol_keys(const Parser& P, const YAML::Node& map, const std::string& path,
                                  bool allow_kernel, bool allow_inducing) {
  ProtocolPatch p;
  constexpr long kMax = std::numeric_limits<long>::max();
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string k = it->first.Scalar();
    const std::string key = path.empty() ? k : path + "." + k;
    const YAML::Node v = it->second;
    const Where w = P.where(v, key);
    if (k == "steps") {
      p.steps.set(P.get_int(v, key, 1, 100000000), w);
    } else if (k == "kl_anneal") {
      p.kl_anneal.set(P.get_int(v, key, 0, 100000000), w);
    } else if (k == "train_samples") {
      p.train_samples.set(P.get_int(v, key, 1, 100000), w);
    } else if (k == "test_samples") {
      p.test_samples.set(P.get_int(v, key, 1, 1000000), w);
    } else if (k == "inducing" && allow_inducing) {
      p.inducing.set(P.get_int(v, key, 1, 100000), w);
    } else if (k == "batch") {
      p.batch.set(P.get_int(v, key, 1, kMax), w);
    } else if (k == "seed") {
      p.seed.set(static_cast<uint64_t>(P.get_int(v, key, 0, kMax)), w);
    } else if (k == "kernel" && allow_kernel) {
      p.kernel.set(P.get_choice(v, key, known_kernels()), w);
    } else if (k == "pixels") {
      p.pixels.set(P.get_choice(v, key, kPixelRules), w);
    } else if (k == "pixel_scale") {
      p.pixel_scale.set(P.get_positive_double(v, key), w);
    } else if (k == "width") {
      const std::string s = P.get_string(v, key);
      if (!contains(kWidthRules, s) && !is_width_integer(s)) {
        P.fail(v, key,
               fmt::format("'{}' is not a width rule (input, min(input,30) or a positive "
                           "integer)",
                           s));
      }
      p.width.set(s, w);
    } else if (k == "lr_schedule") {
      if (!v.IsSequence() || v.size() == 0) {
        P.fail(v, key, "expected a non-empty list of [step, lr] pairs, got " + Parser::kind(v));
      }
      std::vector<LrPoint> s;
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string ik = fmt::format("{}[{}]", key, i);
        const YAML::Node e = v[i];
        if (!e.IsSequence() || e.size() != 2) {
          P.fail(e, ik, "expected a [step, lr] pair, got " + Parser::kind(e));
        }
        const long step = P.get_int(e[0], ik + "[0]", 0, 100000000);
        const double lr = P.get_positive_double(e[1], ik + "[1]");
        if (i == 0 && step != 0) P.fail(e[0], ik + "[0]", "the schedule must start at step 0");
        if (i > 0 && step <= s.back().step) {
          P.fail(e[0], ik + "[0]",
                 fmt::format("steps must increase strictly ({} after {})", step, s.back().step));
        }
        s.push_back({step, lr});
      }
      p.lr_schedule.set(s, w);
    }
  }
  return p;
}

// Axis values of one model entry or of the grid.
struct ModelEntry {
  std::string model;
  std::vector<std::string> posterior{""};  // the posteriors' names (`posterior:` or `inference:`)
  Field<std::vector<int>> depths;
  Field<std::vector<std::string>> kernels;
  Field<std::vector<long>> inducing;
  ProtocolPatch protocol;
  OptionsPatch options;  ///< the entry's `options:`: every one must be the model's
  Where where;
};

struct Axes {
  Field<std::vector<std::string>> datasets;
  Field<std::vector<int>> splits;  // empty vector with value = "all"
  bool splits_all = false;
  Field<std::vector<int>> depths;
  Field<std::vector<std::string>> kernels;
  std::optional<std::vector<ModelEntry>> models;
  Where models_where;
  OptionsPatch options;  ///< `axes.options` (and `protocol.options`): where a model takes them

  void overlay(const Axes& o) {
    options.overlay(o.options);
    datasets.overlay(o.datasets);
    if (o.splits.value) {
      splits = o.splits;
      splits_all = o.splits_all;
    }
    depths.overlay(o.depths);
    kernels.overlay(o.kernels);
    if (o.models) {
      models = o.models;
      models_where = o.models_where;
    }
  }
};

struct Override {
  std::map<std::string, std::vector<std::string>> when;
  ProtocolPatch set;
  Where where;
};

const std::vector<std::string> kWhenKeys = {"dataset",   "split", "model",  "inference",
                                            "posterior", "depth", "kernel", "inducing"};

std::vector<int> parse_depths(const Parser& P, const YAML::Node& v, const std::string& key) {
  return P.get_list<int>(
      v, key,
      [&](const YAML::Node& n, const std::string& k) {
        return static_cast<int>(P.get_int(n, k, 1, 64));
      },
      true);
}

std::vector<std::string> parse_kernels(const Parser& P, const YAML::Node& v,
                                       const std::string& key) {
  return P.get_list<std::string>(
      v, key,
      [&](const YAML::Node& n, const std::string& k) {
        return P.get_choice(n, k, known_kernels());
      },
      true);
}

// The models with posteriors and their posteriors, for messages: "dgp: dsvi, ...; dwp: ...".
std::string posteriors_text() {
  std::vector<std::string> parts;
  for (const auto& model : known_models()) {
    const auto names = models::posterior_names(model);
    if (!names.empty()) parts.push_back(model + ": " + join(names));
  }
  return join(parts, "; ");
}

ModelEntry parse_model_entry(const Parser& P, const YAML::Node& e, const std::string& key) {
  ModelEntry m;
  m.where = P.where(e, key);
  if (e.IsScalar()) {
    m.model = P.get_choice(e, key, known_models());
    if (!models::posterior_names(m.model).empty()) {
      const std::string& pk = models::posterior_key(m.model);
      P.fail(e, key,
             fmt::format("model {} needs {}: {{model: {}, {}: ...}}", m.model, pk, m.model, pk));
    }
    return m;
  }
  std::vector<std::string> allowed = {"model", "posterior", "inference", "depths", "kernels"};
  for (const auto& k : kProtocolKeys)
    if (k != "kernel") allowed.push_back(k);
  P.check_keys(e, key, allowed);
  if (!e["model"]) P.fail(e, key, "missing key 'model' (one of: " + join(known_models()) + ")");
  m.model = P.get_choice(e["model"], key + ".model", known_models());
  // The posterior, under either of its names (models/registry.hpp).
  if (e["posterior"] && e["inference"]) {
    P.fail(e["inference"], key + ".inference",
           "posterior and inference name the same axis: give one");
  }
  const std::string given = e["posterior"] ? "posterior" : "inference";
  const auto names = models::posterior_names(m.model);
  if (const auto v = e[given]) {
    if (names.empty()) {
      P.fail(v, key + "." + given,
             fmt::format("model {} takes no {} (only {})", m.model, given, posteriors_text()));
    }
    m.posterior = P.get_list<std::string>(
        v, key + "." + given,
        [&](const YAML::Node& n, const std::string& k) {
          return models::entry(m.model, P.get_choice(n, k, models::posterior_spellings(m.model)))
              .posterior;
        },
        true);
  } else if (!names.empty()) {
    P.fail(e, key,
           fmt::format("model {} needs '{}' ({})", m.model, models::posterior_key(m.model),
                       join(names)));
  }
  if (const auto v = e["depths"]) {
    auto d = parse_depths(P, v, key + ".depths");
    for (const auto& post : m.posterior) {
      for (int depth : d) {
        try {
          models::check_depth(models::entry(m.model, post), size_t(depth));
        } catch (const ConfigError& ex) {
          P.fail(v, key + ".depths", ex.what());
        }
      }
    }
    m.depths.set(d, P.where(v, key + ".depths"));
  }
  if (const auto v = e["kernels"]) {
    m.kernels.set(parse_kernels(P, v, key + ".kernels"), P.where(v, key + ".kernels"));
  }
  if (const auto v = e["inducing"]) {
    m.inducing.set(
        P.get_list<long>(
            v, key + ".inducing",
            [&](const YAML::Node& n, const std::string& k) { return P.get_int(n, k, 1, 100000); },
            true),
        P.where(v, key + ".inducing"));
  }
  m.protocol = parse_protocol_keys(P, e, key, /*allow_kernel=*/false, /*allow_inducing=*/false);
  if (const auto v = e["options"]) m.options = parse_options(P, v, key + ".options");
  return m;
}

Axes parse_axes(const Parser& P, const YAML::Node& a, const std::string& path) {
  P.check_keys(a, path, {"datasets", "splits", "depths", "kernels", "models", "options"});
  Axes ax;
  if (const auto v = a["options"]) ax.options = parse_options(P, v, path + ".options");
  if (const auto v = a["datasets"]) {
    const std::string key = path + ".datasets";
    auto ds = P.get_list<std::string>(
        v, key,
        [&](const YAML::Node& n, const std::string& k) {
          const std::string s = P.get_string(n, k);
          try {
            return P.dataset(s).name;
          } catch (const ConfigError& e) {
            P.fail(n, k, e.what());
          }
        },
        false);
    std::set<std::string> uniq(ds.begin(), ds.end());
    if (uniq.size() != ds.size()) P.fail(v, key, "a dataset is listed twice");
    ax.datasets.set(ds, P.where(v, key));
  }
  if (const auto v = a["splits"]) {
    const std::string key = path + ".splits";
    if (v.IsScalar() && v.Scalar() == "all") {
      ax.splits.set({}, P.where(v, key));
      ax.splits_all = true;
    } else if (v.IsSequence()) {
      auto s = P.get_list<int>(
          v, key,
          [&](const YAML::Node& n, const std::string& k) {
            return static_cast<int>(P.get_int(n, k, 0, 1000));
          },
          false);
      std::set<int> uniq(s.begin(), s.end());
      if (uniq.size() != s.size()) P.fail(v, key, "a split is listed twice");
      ax.splits.set(s, P.where(v, key));
    } else {
      P.fail(v, key, "expected 'all' or a list of split indices, got " + Parser::kind(v));
    }
  }
  if (const auto v = a["depths"]) {
    ax.depths.set(parse_depths(P, v, path + ".depths"), P.where(v, path + ".depths"));
  }
  if (const auto v = a["kernels"]) {
    ax.kernels.set(parse_kernels(P, v, path + ".kernels"), P.where(v, path + ".kernels"));
  }
  if (const auto v = a["models"]) {
    const std::string key = path + ".models";
    if (!v.IsSequence() || v.size() == 0) {
      P.fail(v, key, "expected a non-empty list of models, got " + Parser::kind(v));
    }
    std::vector<ModelEntry> models;
    for (size_t i = 0; i < v.size(); ++i) {
      models.push_back(parse_model_entry(P, v[i], fmt::format("{}[{}]", key, i)));
    }
    ax.models = std::move(models);
    ax.models_where = P.where(v, key);
  }
  return ax;
}

std::vector<Override> parse_overrides(const Parser& P, const YAML::Node& v,
                                      const std::string& key) {
  if (!v.IsSequence()) P.fail(v, key, "expected a list of {when, set}, got " + Parser::kind(v));
  std::vector<Override> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string ik = fmt::format("{}[{}]", key, i);
    const YAML::Node e = v[i];
    P.check_keys(e, ik, {"when", "set"});
    if (!e["when"]) P.fail(e, ik, "missing key 'when'");
    if (!e["set"]) P.fail(e, ik, "missing key 'set'");
    Override o;
    o.where = P.where(e, ik);
    P.check_keys(e["when"], ik + ".when", kWhenKeys);
    for (auto it = e["when"].begin(); it != e["when"].end(); ++it) {
      const std::string k = it->first.Scalar();
      o.when[k] = P.get_list<std::string>(
          it->second, ik + ".when." + k,
          [&](const YAML::Node& n, const std::string& kk) { return P.get_string(n, kk); }, true);
      if (k == "dataset") {
        for (auto& d : o.when[k]) {
          try {
            d = P.dataset(d).name;
          } catch (const ConfigError& ex) {
            P.fail(it->second, ik + ".when.dataset", ex.what());
          }
        }
      } else if (k == "model") {
        for (const auto& m : o.when[k])
          if (!contains(known_models(), m))
            P.fail(it->second, ik + ".when.model",
                   fmt::format("unknown model '{}' (known: {})", m, join(known_models())));
      }
    }
    std::vector<std::string> set_keys;
    for (const auto& k : kProtocolKeys)
      if (k != "kernel" && k != "options") set_keys.push_back(k);
    P.check_keys(e["set"], ik + ".set", set_keys);
    o.set = parse_protocol_keys(P, e["set"], ik + ".set", false, true);
    out.push_back(std::move(o));
  }
  return out;
}

struct Profile {
  std::string description;
  bool tables = false;      ///< `tables: true`: dkp tables DIR writes its tables too
  bool replicates = false;  ///< `replicates: true`: seed replicates of the full profile's cells
  ProtocolPatch protocol;
  Axes axes;
  std::vector<Override> overrides;
};

Profile parse_profile(const Parser& P, const YAML::Node& v, const std::string& key) {
  P.check_keys(v, key, {"description", "tables", "replicates", "protocol", "axes", "overrides"});
  Profile pr;
  if (const auto d = v["description"]) pr.description = P.get_string(d, key + ".description");
  if (const auto t = v["tables"])
    pr.tables = P.get_choice(t, key + ".tables", {"true", "false"}) == "true";
  if (const auto r = v["replicates"]) {
    pr.replicates = P.get_choice(r, key + ".replicates", {"true", "false"}) == "true";
    // Replicates differ from the full profile's cells in their seed alone: the tables pair them
    // split by split to measure our run-to-run sd (report::apply_replicates).
    if (pr.replicates) {
      if (!pr.tables) P.fail(r, key + ".replicates", "needs tables: true");
      if (v["overrides"]) P.fail(v["overrides"], key + ".overrides", "not allowed with replicates");
      const auto p = v["protocol"];
      if (!p || !p.IsMap() || p.size() != 1 || !p["seed"]) {
        P.fail(p ? p : r, key + ".protocol", "replicates set the seed and nothing else");
      }
    }
  }
  OptionsPatch options;
  if (const auto p = v["protocol"]) {
    P.check_keys(p, key + ".protocol", kProtocolKeys);
    pr.protocol = parse_protocol_keys(P, p, key + ".protocol", true, true);
    if (const auto o = p["options"]) options = parse_options(P, o, key + ".protocol.options");
  }
  if (const auto a = v["axes"]) pr.axes = parse_axes(P, a, key + ".axes");
  options.overlay(pr.axes.options);  // axes.options over protocol.options
  pr.axes.options = options;
  if (const auto o = v["overrides"]) pr.overrides = parse_overrides(P, o, key + ".overrides");
  return pr;
}

bool when_matches(const Override& o, const RunSpec& s) {
  for (const auto& [k, values] : o.when) {
    std::string actual;
    if (k == "dataset") actual = s.dataset;
    if (k == "split") actual = std::to_string(s.split);
    if (k == "model") actual = s.model;
    if (k == "inference" || k == "posterior") actual = s.posterior_name();  // one axis
    if (k == "depth") actual = std::to_string(s.depth);
    if (k == "kernel") actual = s.kernel;
    if (k == "inducing") actual = std::to_string(s.protocol.inducing);
    if (!contains(values, actual)) return false;
  }
  return true;
}

void apply_patch(Protocol& p, const ProtocolPatch& patch) {
  if (patch.steps.value) p.steps = *patch.steps.value;
  if (patch.kl_anneal.value) p.kl_anneal = *patch.kl_anneal.value;
  if (patch.train_samples.value) p.train_samples = *patch.train_samples.value;
  if (patch.test_samples.value) p.test_samples = *patch.test_samples.value;
  if (patch.inducing.value) p.inducing = *patch.inducing.value;
  if (patch.batch.value) p.batch = *patch.batch.value;
  if (patch.seed.value) p.seed = *patch.seed.value;
  if (patch.lr_schedule.value) p.lr_schedule = *patch.lr_schedule.value;
  if (patch.width.value) p.width = *patch.width.value;
  if (patch.pixels.value) p.pixels = *patch.pixels.value;
  if (patch.pixel_scale.value) p.pixel_scale = *patch.pixel_scale.value;
}

// The cells of `base` with its model options: the grid-level options (`grid`) apply where the
// cell's model takes them, each with the values it takes (with the cell's kernel), the model
// entry's (`entry`, over the grid's) must all be taken; an option with several values is a
// sweep, and the cells are every combination, in option-table order. Notes in `used` the
// grid-level options some cell took.
std::vector<RunSpec> with_options(const Parser& P, const RunSpec& base, const OptionsPatch& grid,
                                  const OptionsPatch& entry, std::set<std::string>& used) {
  const auto& e = models::entry(base.model, base.posterior_name());
  std::vector<RunSpec> cells = {base};
  for (const auto& d : models::option_table()) {
    const bool from_entry = entry.values.count(d.name) > 0;
    const auto* f = from_entry ? &entry.values.at(d.name)
                               : (grid.values.count(d.name) ? &grid.values.at(d.name) : nullptr);
    if (!f) continue;
    std::vector<std::string> values;
    for (const auto& v : *f->value) {
      if (models::accepts(e, d.name, base.kernel, v)) {
        values.push_back(v);
      } else if (from_entry) {  // the registry's message, naming the models that take it
        RunSpec x = base;
        x.options.set(d.name, v);
        try {
          models::check_spec(model_spec(x, 0, 0));
        } catch (const ConfigError& ex) {
          P.fail_where(f->where, ex.what());
        }
      }
    }
    if (values.empty()) continue;
    if (!from_entry) used.insert(d.name);
    std::vector<RunSpec> next;
    for (const auto& c : cells) {
      for (const auto& v : values) {
        RunSpec x = c;
        x.options.set(d.name, v);
        next.push_back(std::move(x));
      }
    }
    cells = std::move(next);
  }
  return cells;
}

// The location that last set each cross-checked protocol value, for error messages.
struct Provenance {
  Where steps, lr_schedule, kl_anneal;
  void note(const ProtocolPatch& p) {
    if (p.steps.value) steps = p.steps.where;
    if (p.lr_schedule.value) lr_schedule = p.lr_schedule.where;
    if (p.kl_anneal.value) kl_anneal = p.kl_anneal.where;
  }
};

}  // namespace

Grid parse_grid(const std::string& text, const std::string& filename, const std::string& profile,
                const fs::path& data_root) {
  Parser P(filename, data_root);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}:{}: invalid YAML: {}", filename, e.mark.line + 1,
                                  e.mark.column + 1, e.msg));
  }
  if (!root.IsMap())
    throw ConfigError(fmt::format("{}: a grid file must be a YAML mapping", filename));
  P.check_keys(
      root, "",
      {"name", "family", "reference", "description", "protocol", "axes", "overrides", "profiles"});

  Grid g;
  g.file = filename;
  g.name = fs::path(filename).stem().string();
  if (const auto v = root["name"]) {
    g.name = P.get_string(v, "name");
    bool ok = !g.name.empty() && g.name[0] != '.';
    for (char c : g.name) {
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '_' || c == '.'))
        ok = false;
    }
    if (!ok) P.fail(v, "name", fmt::format("'{}' is not a directory-safe name", g.name));
  }
  if (!root["family"])
    P.fail(root, "family", "missing key (one of: " + join(known_families()) + ")");
  g.family = P.get_choice(root["family"], "family", known_families());
  if (const auto v = root["reference"]) {
    g.reference = P.get_choice(v, "reference", {"dkp", "gw", "agw", "dsvi", "compositional"});
  }
  if (const auto v = root["description"]) g.description = P.get_string(v, "description");

  if (!root["protocol"]) P.fail(root, "protocol", "missing key");
  P.check_keys(root["protocol"], "protocol", kProtocolKeys);
  ProtocolPatch proto = parse_protocol_keys(P, root["protocol"], "protocol", true, true);
  if (!root["axes"]) P.fail(root, "axes", "missing key");
  Axes axes = parse_axes(P, root["axes"], "axes");
  if (const auto o = root["protocol"]["options"]) {
    OptionsPatch options = parse_options(P, o, "protocol.options");
    options.overlay(axes.options);  // axes.options over protocol.options
    axes.options = options;
  }
  std::vector<Override> overrides;
  if (const auto v = root["overrides"]) overrides = parse_overrides(P, v, "overrides");

  std::map<std::string, YAML::Node> profile_nodes;
  if (const auto v = root["profiles"]) {
    P.expect_map(v, "profiles");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string name = P.get_string(it->first, "profiles");
      g.profiles.push_back(name);
      profile_nodes[name] = it->second;
      // Validate every profile, not only the selected one: a typo in 'quick' fails a full run.
      if (parse_profile(P, it->second, "profiles." + name).tables) {
        g.tabulated_profiles.push_back(name);
      }
    }
  }
  g.profile = profile;
  if (profile_nodes.count(profile)) {
    const Profile pr = parse_profile(P, profile_nodes[profile], "profiles." + profile);
    g.profile_description = pr.description;
    g.replicates = pr.replicates;
    proto.overlay(pr.protocol);
    axes.overlay(pr.axes);
    overrides.insert(overrides.end(), pr.overrides.begin(), pr.overrides.end());
  } else if (profile != "full") {
    throw ConfigError(
        fmt::format("{}: no profile '{}' (profiles: {})", filename, profile,
                    g.profiles.empty() ? "none besides full" : "full, " + join(g.profiles)));
  }

  // Required values after merging.
  const YAML::Node pnode = root["protocol"];
  auto require = [&](bool present, const char* key) {
    if (!present) P.fail(pnode, std::string("protocol.") + key, "missing required key");
  };
  require(proto.steps.value.has_value(), "steps");
  require(proto.lr_schedule.value.has_value(), "lr_schedule");
  require(proto.kl_anneal.value.has_value(), "kl_anneal");
  require(proto.train_samples.value.has_value(), "train_samples");
  require(proto.test_samples.value.has_value(), "test_samples");
  require(proto.inducing.value.has_value(), "inducing");
  require(proto.batch.value.has_value(), "batch");
  require(proto.seed.value.has_value(), "seed");
  const YAML::Node anode = root["axes"];
  if (!axes.datasets.value) P.fail(anode, "axes.datasets", "missing required key");
  if (!axes.splits.value) P.fail(anode, "axes.splits", "missing required key ('all' or a list)");
  if (!axes.models) P.fail(anode, "axes.models", "missing required key");
  if (!axes.kernels.value && !proto.kernel.value) {
    P.fail(anode, "axes.kernels", "missing: give axes.kernels or protocol.kernel");
  }

  Protocol base;
  apply_patch(base, proto);
  Provenance base_prov;
  base_prov.note(proto);

  std::set<std::string> hashes;
  std::set<std::string> options_used;  // the grid-level options some cell takes
  for (const auto& ds : *axes.datasets.value) {
    const int n = P.dataset(ds).splits;
    if (!axes.splits_all) {
      for (int s : *axes.splits.value) {
        if (s >= n) {
          P.fail_where(axes.splits.where,
                       fmt::format("split {} does not exist for {} (splits 0..{})", s, ds, n - 1));
        }
      }
    }
  }
  // Split-major order: every table cell gets its first split before any gets its second.
  int max_splits = 0;
  for (const auto& ds : *axes.datasets.value)
    max_splits = std::max(max_splits, P.dataset(ds).splits);
  std::vector<int> split_order;
  if (axes.splits_all) {
    for (int s = 0; s < max_splits; ++s) split_order.push_back(s);
  } else {
    split_order = *axes.splits.value;
  }
  for (int split : split_order) {
    for (const auto& ds : *axes.datasets.value) {
      if (split >= P.dataset(ds).splits) continue;
      for (const auto& m : *axes.models) {
        std::vector<std::string> kernels =
            m.kernels.value ? *m.kernels.value
                            : (axes.kernels.value ? *axes.kernels.value
                                                  : std::vector<std::string>{*proto.kernel.value});
        std::vector<long> inducing =
            m.inducing.value ? *m.inducing.value : std::vector<long>{base.inducing};
        for (const auto& post : m.posterior) {
          // The entry's depths, its only depth when its depth rule allows one (sgp), or the grid's.
          const auto& rule = models::entry(m.model, post);
          std::vector<int> depths;
          Where depth_where = m.where;
          if (m.depths.value) {
            depths = *m.depths.value;
            depth_where = m.depths.where;
          } else if (rule.min_depth == rule.max_depth) {
            depths = {int(rule.min_depth)};
          } else if (axes.depths.value) {
            depths = *axes.depths.value;
            depth_where = axes.depths.where;
          } else {
            P.fail_where(m.where, "no depths: give axes.depths or depths in this model entry");
          }
          for (long ind : inducing) {
            for (int depth : depths) {
              for (const auto& kernel : kernels) {
                RunSpec s;
                s.grid = g.name;
                s.dataset = ds;
                s.data_fingerprint = P.dataset(ds).fingerprint;
                s.split = split;
                s.model = m.model;
                s.set_posterior(post);
                s.depth = depth;
                s.kernel = kernel;
                s.protocol = base;
                Provenance prov = base_prov;
                apply_patch(s.protocol, m.protocol);
                prov.note(m.protocol);
                s.protocol.inducing = ind;
                for (const auto& o : overrides) {
                  if (when_matches(o, s)) {
                    apply_patch(s.protocol, o.set);
                    prov.note(o.set);
                  }
                }
                // Cross-field checks, reported where the offending value was set.
                const auto& p = s.protocol;
                if (p.lr_schedule.back().step >= p.steps) {
                  P.fail_where(prov.lr_schedule,
                               fmt::format("schedule step {} is impossible with steps = {} (set "
                                           "at line {}) for {}",
                                           p.lr_schedule.back().step, p.steps,
                                           prov.steps.mark.line + 1, s.label()));
                }
                if (p.kl_anneal > p.steps) {
                  P.fail_where(prov.kl_anneal, fmt::format("kl_anneal {} exceeds steps = {} for {}",
                                                           p.kl_anneal, p.steps, s.label()));
                }
                for (RunSpec& c : with_options(P, s, axes.options, m.options, options_used)) {
                  try {
                    validate_run_spec(c, data_root);
                  } catch (const ConfigError& e) {
                    P.fail_where(depth_where, fmt::format("{}: {}", c.label(), e.what()));
                  }
                  if (!hashes.insert(c.hash()).second) {
                    P.fail_where(m.where,
                                 fmt::format("cell {} appears twice in the grid", c.label()));
                  }
                  g.cells.push_back(std::move(c));
                }
              }
            }
          }
        }
      }
    }
  }
  for (const auto& [name, f] : axes.options.values) {
    if (!options_used.count(name)) {
      P.fail_where(f.where,
                   fmt::format("no cell of the grid takes option {} ({}) with these values", name,
                               models::option_decl(name).summary));
    }
  }
  return g;
}

Grid load_grid(const fs::path& file, const std::string& profile, const fs::path& data_root) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) {
    throw ConfigError(
        fmt::format("{} is a directory, not a grid file: give its grid files ({}/*.yaml)",
                    file.string(), file.string()));
  }
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const DataError& e) {
    throw ConfigError(fmt::format("cannot read grid file: {}", e.what()));
  }
  return parse_grid(text, file.string(), profile, data_root);
}

void keep_splits_below(Grid& grid, uint64_t n) {
  if (n == 0) throw ConfigError("--splits 0: keep at least one split (splits are numbered from 0)");
  std::erase_if(grid.cells, [n](const RunSpec& c) { return static_cast<uint64_t>(c.split) >= n; });
  grid.split_limit = n;
}

const RunSpec& find_cell(const Grid& grid, const std::string& hash) {
  if (hash.size() < 4) {
    throw ConfigError(
        fmt::format("--cell '{}': give the configuration hash (at least 4 of its "
                    "16 hex characters)",
                    hash));
  }
  std::vector<const RunSpec*> hits;
  for (const auto& c : grid.cells) {
    if (c.hash().compare(0, hash.size(), hash) == 0) hits.push_back(&c);
  }
  if (hits.empty()) {
    throw ConfigError(
        fmt::format("no cell of grid {} (profile {}) has the configuration hash "
                    "'{}' ('dkp grid status {} --profile {} --verbose' lists them)",
                    grid.name, grid.profile, hash, grid.file.string(), grid.profile));
  }
  if (hits.size() > 1) {
    throw ConfigError(fmt::format("--cell '{}' names {} cells of grid {} (profile {}): {} and {}",
                                  hash, hits.size(), grid.name, grid.profile, hits[0]->hash(),
                                  hits[1]->hash()));
  }
  return *hits.front();
}

}  // namespace dkp::experiments
