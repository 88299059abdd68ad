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

#include "data/mnist.hpp"
#include "data/uci.hpp"
#include "models/factory.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"
#include "util/sha256.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Names and small helpers

const std::vector<std::string>& known_models() {
  static const std::vector<std::string> models = {"sgp", "dgp", "nngp", "diwp", "dwp"};
  return models;
}

const std::vector<std::string>& known_families() {
  static const std::vector<std::string> families = {"dkp-uci",    "dkp-mnist",       "gw-uci",
                                                    "agw-uci",    "agw-runtime",     "dsvi-uci",
                                                    "dsvi-mnist", "dsvi-rectangles", "generic"};
  return families;
}

namespace {

// A dataset's canonical name: MNIST's, or the UCI short name of any accepted spelling (throws
// ConfigError listing the known names).
std::string canonical_dataset(const std::string& name) {
  return data::dataset_classes(name) > 0 ? name : data::uci_info(name).name;
}

const std::vector<std::string> kInferences = {"dsvi", "global-inducing", "aep"};
const std::vector<std::string> kPosteriors = {"gw", "agw", "abgw"};
const std::vector<std::string> kKernels = {"se", "relu"};
const std::vector<std::string> kWidthRules = {"input", "min(input,30)"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

const std::vector<std::string> kPixelRules = {"unit", "standard"};

bool is_width_integer(const std::string& w) {
  if (w.empty() || w.size() > 9) return false;
  for (char c : w)
    if (c < '0' || c > '9') return false;
  return std::stol(w) > 0;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string format_double(double x) {
  return fmt::format("{}", x);
}

}  // namespace

int uci_split_count(const std::string& dataset) {
  if (data::dataset_classes(dataset) > 0) return 1;  // MNIST: its one train/test split
  const auto& info = data::uci_info(dataset);
  return info.name == "protein" ? 5 : 20;
}

std::string shell_quote(const std::string& word) {
  if (word.empty()) return "''";
  bool plain = true;
  for (char c : word) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == ':' || c == ',' || c == '=' ||
                    c == '+' || c == '-';
    if (!ok) plain = false;
  }
  if (plain) return word;
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// ---------------------------------------------------------------------------------------------
// Learning-rate schedules

std::string format_lr_schedule(const std::vector<LrPoint>& schedule) {
  std::string out;
  for (const auto& p : schedule) {
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", p.step, format_double(p.lr));
  }
  return out;
}

namespace {

// Shared checks of a schedule; `where` prefixes messages.
void check_schedule(const std::vector<LrPoint>& s, const std::string& where) {
  if (s.empty()) throw ConfigError(where + "the learning-rate schedule is empty");
  if (s.front().step != 0) {
    throw ConfigError(fmt::format("{}the learning-rate schedule must start at step 0, not {}",
                                  where, s.front().step));
  }
  for (size_t i = 0; i < s.size(); ++i) {
    if (!(std::isfinite(s[i].lr) && s[i].lr > 0)) {
      throw ConfigError(fmt::format("{}learning rate {} at step {} must be finite and positive",
                                    where, format_double(s[i].lr), s[i].step));
    }
    if (i > 0 && s[i].step <= s[i - 1].step) {
      throw ConfigError(fmt::format("{}schedule steps must increase strictly ({} after {})", where,
                                    s[i].step, s[i - 1].step));
    }
  }
}

}  // namespace

std::vector<LrPoint> parse_lr_schedule(const std::string& text) {
  std::vector<LrPoint> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      throw ConfigError(
          fmt::format("invalid learning-rate schedule '{}': expected STEP:LR[,STEP:LR...], e.g. "
                      "0:0.01,10000:0.001",
                      text));
    }
    const std::string s = item.substr(0, colon), l = item.substr(colon + 1);
    const auto step = util::parse_integer(s);
    if (!step || *step < 0) {
      throw ConfigError(
          fmt::format("invalid learning-rate schedule '{}': step '{}' is not a "
                      "non-negative integer",
                      text, s));
    }
    const auto lr = util::parse_double(l);
    if (!lr) {
      throw ConfigError(
          fmt::format("invalid learning-rate schedule '{}': '{}' is not a number", text, l));
    }
    out.push_back({long(*step), *lr});
  }
  check_schedule(out, fmt::format("invalid learning-rate schedule '{}': ", text));
  return out;
}

// ---------------------------------------------------------------------------------------------
// RunSpec

namespace {
// A DIWP cell's delta_init joins its hash and its command line unless it is 1, the first
// default (grid.hpp): one rule for canonical() and run_args().
bool delta_init_is_set(const RunSpec& s) {
  return s.model == "diwp" && s.delta_init != 1.0;
}
}  // namespace

std::string RunSpec::canonical() const {
  const auto& p = protocol;
  std::string c = fmt::format(
      "dkp-run-v1\ndataset={}\nsplit={}\nmodel={}\ninference={}\nposterior={}\ndepth={}\n"
      "kernel={}\nsteps={}\nlr_schedule={}\nkl_anneal={}\ntrain_samples={}\ntest_samples={}\n"
      "inducing={}\nbatch={}\nwidth={}\nseed={}\n",
      dataset, split, model, inference, posterior, depth, kernel, p.steps,
      format_lr_schedule(p.lr_schedule), p.kl_anneal, p.train_samples, p.test_samples, p.inducing,
      p.batch, p.width, p.seed);
  // The DIWP options only when set (delta_init: when not 1, see grid.hpp).
  if (delta_init_is_set(*this)) c += fmt::format("delta_init={}\n", delta_init);
  if (diwp_dof != "point") c += "diwp_dof=" + diwp_dof + "\n";
  if (stl != "on") c += "stl=" + stl + "\n";
  if (a_prime_scale != 1.0) c += fmt::format("a_prime_scale={}\n", a_prime_scale);
  if (mu_param != "direct") c += "mu_param=" + mu_param + "\n";
  if (hidden_ard) c += "hidden_ard=on\n";
  if (gi_precision != "shared") c += "gi_precision=" + gi_precision + "\n";
  if (p.pixels != "unit") c += "pixels=" + p.pixels + "\n";
  if (p.pixel_scale != 1.0) c += fmt::format("pixel_scale={}\n", p.pixel_scale);
  if (p.init_lengthscale > 0.0) c += fmt::format("init_lengthscale={}\n", p.init_lengthscale);
  if (p.init_variance > 0.0) c += fmt::format("init_variance={}\n", p.init_variance);
  return c;
}

RunSpec RunSpec::parse_canonical(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != "dkp-run-v1") {
    throw DataError(
        fmt::format("run configuration: expected version line 'dkp-run-v1', got '{}'", line));
  }
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos || !kv.emplace(line.substr(0, eq), line.substr(eq + 1)).second) {
      throw DataError(fmt::format("run configuration: malformed or repeated line '{}'", line));
    }
  }
  auto take = [&](const std::string& key, bool required = true) -> std::optional<std::string> {
    const auto it = kv.find(key);
    if (it == kv.end()) {
      if (required) throw DataError(fmt::format("run configuration: no '{}'", key));
      return std::nullopt;
    }
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  auto number = [](const std::string& key, const std::string& v) {
    const auto d = util::parse_double(v);
    if (!d || !std::isfinite(*d)) {
      throw DataError(fmt::format("run configuration: {}='{}' is not a number", key, v));
    }
    return *d;
  };
  auto integer = [&](const std::string& key) {
    const std::string v = *take(key);
    number(key, v);
    const auto i = util::parse_integer(v);
    if (!i) throw DataError(fmt::format("run configuration: {}='{}' is not an integer", key, v));
    return *i;
  };
  RunSpec r;
  r.dataset = *take("dataset");
  r.split = int(integer("split"));
  r.model = *take("model");
  r.inference = *take("inference");
  r.posterior = *take("posterior");
  r.depth = int(integer("depth"));
  r.kernel = *take("kernel");
  auto& p = r.protocol;
  p.steps = long(integer("steps"));
  try {
    p.lr_schedule = parse_lr_schedule(*take("lr_schedule"));
  } catch (const ConfigError& e) {
    throw DataError(fmt::format("run configuration: {}", e.what()));
  }
  p.kl_anneal = long(integer("kl_anneal"));
  p.train_samples = long(integer("train_samples"));
  p.test_samples = long(integer("test_samples"));
  p.inducing = long(integer("inducing"));
  p.batch = long(integer("batch"));
  p.width = *take("width");
  const std::string seed = *take("seed");
  errno = 0;
  char* end = nullptr;
  p.seed = std::strtoull(seed.c_str(), &end, 10);
  if (seed.empty() || end != seed.c_str() + seed.size() || errno == ERANGE || seed[0] == '-') {
    throw DataError(fmt::format("run configuration: seed='{}' is not a seed", seed));
  }
  // Options written only when set (canonical()): absent means the value that is not written.
  if (const auto d = take("delta_init", false)) {
    r.delta_init = number("delta_init", *d);
  } else if (r.model == "diwp") {
    r.delta_init = 1.0;
  }
  if (const auto d = take("diwp_dof", false)) r.diwp_dof = *d;
  if (const auto px = take("pixels", false)) {
    if (*px != "standard") throw DataError(fmt::format("run configuration: pixels='{}'", *px));
    p.pixels = *px;
  }
  if (const auto v = take("pixel_scale", false)) p.pixel_scale = number("pixel_scale", *v);
  if (const auto v = take("init_lengthscale", false)) {
    p.init_lengthscale = number("init_lengthscale", *v);
  }
  if (const auto v = take("init_variance", false)) p.init_variance = number("init_variance", *v);
  if (const auto st = take("stl", false)) {
    if (*st != "off" && *st != "mixing") {
      throw DataError(fmt::format("run configuration: stl='{}'", *st));
    }
    r.stl = *st;
  }
  if (const auto a = take("a_prime_scale", false)) r.a_prime_scale = number("a_prime_scale", *a);
  if (const auto mp = take("mu_param", false)) {
    if (*mp != "bayesfunc") throw DataError(fmt::format("run configuration: mu_param='{}'", *mp));
    r.mu_param = *mp;
  }
  if (const auto h = take("hidden_ard", false)) {
    if (*h != "on") throw DataError(fmt::format("run configuration: hidden_ard='{}'", *h));
    r.hidden_ard = true;
  }
  if (const auto g = take("gi_precision", false)) r.gi_precision = *g;
  if (!kv.empty()) {
    throw DataError(fmt::format("run configuration: unknown key '{}'", kv.begin()->first));
  }
  if (r.canonical() != text) {
    throw DataError("run configuration: not in canonical form (written by another dkp version?)");
  }
  return r;
}

std::string RunSpec::hash() const {
  return util::sha256_hex(canonical()).substr(0, 16);
}

fs::path RunSpec::run_dir(const fs::path& results_root) const {
  return results_root / grid / dataset / ("split" + std::to_string(split)) / hash();
}

std::string RunSpec::model_label() const {
  if (model == "sgp") return fmt::format("sgp-m{}", protocol.inducing);
  if (!inference.empty()) return model + "-" + inference;
  if (!posterior.empty()) return model + "-" + posterior;
  return model;
}

std::string RunSpec::label() const {
  return fmt::format("{}/split{} {} d{} {}", dataset, split, model_label(), depth, kernel);
}

std::vector<std::string> RunSpec::run_args(const fs::path& results_root,
                                           const std::vector<std::string>& extra) const {
  const auto& p = protocol;
  std::vector<std::string> a = {"run",     "--dataset", dataset, "--split", std::to_string(split),
                                "--model", model};
  if (!inference.empty()) a.insert(a.end(), {"--inference", inference});
  if (!posterior.empty()) a.insert(a.end(), {"--posterior", posterior});
  a.insert(a.end(),
           {"--depth", std::to_string(depth), "--kernel", kernel, "--steps",
            std::to_string(p.steps), "--lr-schedule", format_lr_schedule(p.lr_schedule),
            "--kl-anneal", std::to_string(p.kl_anneal), "--samples",
            std::to_string(p.train_samples), "--test-samples", std::to_string(p.test_samples),
            "--inducing", std::to_string(p.inducing), "--batch", std::to_string(p.batch)});
  if (p.width != "input") a.insert(a.end(), {"--width", p.width});
  if (p.pixels != "unit") a.insert(a.end(), {"--pixels", p.pixels});
  if (p.pixel_scale != 1.0) {
    a.insert(a.end(), {"--pixel-scale", fmt::format("{}", p.pixel_scale)});
  }
  if (p.init_lengthscale > 0.0) {
    a.insert(a.end(), {"--init-lengthscale", fmt::format("{}", p.init_lengthscale)});
  }
  if (p.init_variance > 0.0) {
    a.insert(a.end(), {"--init-variance", fmt::format("{}", p.init_variance)});
  }
  if (delta_init_is_set(*this)) a.insert(a.end(), {"--delta-init", fmt::format("{}", delta_init)});
  if (diwp_dof != "point") a.insert(a.end(), {"--diwp-dof", diwp_dof});
  if (stl != "on") a.insert(a.end(), {"--stl", stl});
  if (a_prime_scale != 1.0) {
    a.insert(a.end(), {"--a-prime-scale", fmt::format("{}", a_prime_scale)});
  }
  if (mu_param != "direct") a.insert(a.end(), {"--mu-param", mu_param});
  if (hidden_ard) a.push_back("--hidden-ard");
  if (gi_precision != "shared") a.insert(a.end(), {"--gi-precision", gi_precision});
  a.insert(a.end(), {"--seed", std::to_string(p.seed)});
  a.insert(a.end(), extra.begin(), extra.end());
  a.insert(a.end(), {"--out", run_dir(results_root).string(), "--quiet"});
  return a;
}

std::string RunSpec::command_line(const std::string& dkp_path, const fs::path& results_root,
                                  const std::vector<std::string>& extra) const {
  std::string out = shell_quote(dkp_path);
  for (const auto& a : run_args(results_root, extra)) {
    out += ' ';
    out += shell_quote(a);
  }
  return out;
}

void validate_run_spec(const RunSpec& s) {
  const bool classification = data::dataset_classes(s.dataset) > 0;
  if (!classification) data::uci_info(s.dataset);  // throws ConfigError listing the known names
  if (!classification && (s.protocol.pixels != "unit" || s.protocol.pixel_scale != 1.0)) {
    throw ConfigError(fmt::format(
        "pixels '{}' and pixel scale {} are for images; {}'s inputs are standardised per feature",
        s.protocol.pixels, s.protocol.pixel_scale, s.dataset));
  }
  if (!(s.protocol.pixel_scale > 0.0) || !std::isfinite(s.protocol.pixel_scale)) {
    throw ConfigError(
        fmt::format("pixel scale must be positive and finite (got {})", s.protocol.pixel_scale));
  }
  const int n = uci_split_count(s.dataset);
  if (s.split < 0 || s.split >= n) {
    throw ConfigError(
        fmt::format("split {} does not exist for {} (splits 0..{})", s.split, s.dataset, n - 1));
  }
  if (!contains(known_models(), s.model)) {
    throw ConfigError(fmt::format("unknown model '{}' (known: {})", s.model, join(known_models())));
  }
  if (s.model == "dgp") {
    if (!contains(kInferences, s.inference)) {
      throw ConfigError(fmt::format("model dgp needs inference {} (got '{}')",
                                    join(kInferences, " or "), s.inference));
    }
  } else if (!s.inference.empty()) {
    throw ConfigError(
        fmt::format("model {} takes no inference (got '{}'); only dgp does", s.model, s.inference));
  }
  if (s.model == "dwp") {
    if (!contains(kPosteriors, s.posterior)) {
      throw ConfigError(fmt::format("model dwp needs posterior {} (got '{}')",
                                    join(kPosteriors, ", "), s.posterior));
    }
  } else if (!s.posterior.empty()) {
    throw ConfigError(
        fmt::format("model {} takes no posterior (got '{}'); only dwp does", s.model, s.posterior));
  }
  if (s.depth < 1 || s.depth > 64) {
    throw ConfigError(fmt::format("depth {} is impossible (1..64)", s.depth));
  }
  if (classification) {
    models::ModelSpec m;
    m.model = s.model;
    m.inference = s.inference;
    m.kernel = s.kernel;
    if (!models::classifies(m)) {
      throw ConfigError(fmt::format(
          "{} is a classification dataset: models sgp, dgp dsvi, dgp aep, nngp, diwp and dgp "
          "global-inducing with the relu kernel classify, {} does not yet",
          s.dataset, s.model + (s.inference.empty() ? "" : " " + s.inference) + " " + s.kernel));
    }
  }
  if (s.model == "sgp" && s.depth != 1) {
    throw ConfigError(
        fmt::format("model sgp is a single-layer GP: depth must be 1, not {}", s.depth));
  }
  if (!contains(kKernels, s.kernel)) {
    throw ConfigError(fmt::format("unknown kernel '{}' (known: {})", s.kernel, join(kKernels)));
  }
  if (!(s.delta_init > 0.0) || !std::isfinite(s.delta_init)) {
    throw ConfigError(fmt::format("initial delta must be positive (got {})", s.delta_init));
  }
  if (s.diwp_dof != "point" && s.diwp_dof != "batch") {
    throw ConfigError(fmt::format("DIWP dof must be point or batch (got '{}')", s.diwp_dof));
  }
  if (s.model != "diwp" && (s.delta_init != models::kDiwpDeltaInit || s.diwp_dof != "point")) {
    throw ConfigError(
        fmt::format("model {} takes no DIWP options (delta init, dof); only diwp does", s.model));
  }
  if (!(s.a_prime_scale > 0.0) || !std::isfinite(s.a_prime_scale)) {
    throw ConfigError(fmt::format("A' scale must be positive (got {})", s.a_prime_scale));
  }
  if (s.a_prime_scale != 1.0 &&
      !(s.model == "dwp" && (s.posterior == "agw" || s.posterior == "abgw"))) {
    throw ConfigError("--a-prime-scale applies to dwp with posterior agw or abgw only");
  }
  // The global-inducing DGP's and the DWP's options, checked by the factory's rule.
  models::ModelSpec options;
  options.model = s.model;
  options.inference = s.inference;
  options.posterior = s.posterior;
  options.kernel = s.kernel;
  models::set_stl(options, s.stl);
  options.mu_raw = models::parse_mu_param(s.mu_param);
  options.hidden_ard = s.hidden_ard;
  options.per_output_precision = models::parse_gi_precision(s.gi_precision);
  options.init_lengthscale = s.protocol.init_lengthscale;
  options.init_variance = s.protocol.init_variance;
  models::check_model_options(options);
  const auto& p = s.protocol;
  if (p.steps < 1) throw ConfigError(fmt::format("steps must be positive, not {}", p.steps));
  check_schedule(p.lr_schedule, "");
  if (p.lr_schedule.back().step >= p.steps) {
    throw ConfigError(fmt::format("learning-rate schedule step {} is not below steps ({})",
                                  p.lr_schedule.back().step, p.steps));
  }
  if (p.kl_anneal < 0 || p.kl_anneal > p.steps) {
    throw ConfigError(fmt::format("kl_anneal {} must be in 0..steps ({})", p.kl_anneal, p.steps));
  }
  if (p.train_samples < 1) throw ConfigError("train samples must be at least 1");
  if (p.test_samples < 1) throw ConfigError("test samples must be at least 1");
  if (p.inducing < 1) throw ConfigError("inducing points must be at least 1");
  if (p.batch < 1) throw ConfigError("batch size must be at least 1");
  if (!contains(kWidthRules, p.width) && !is_width_integer(p.width)) {
    throw ConfigError(
        fmt::format("width rule '{}' is not input, min(input,30) or a positive "
                    "integer",
                    p.width));
  }
  if (!contains(kPixelRules, p.pixels)) {
    throw ConfigError(fmt::format("pixels '{}' is not unit or standard", p.pixels));
  }
}

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
  explicit Parser(std::string file) : file_(std::move(file)) {}

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
  Field<double> init_lengthscale, init_variance, pixel_scale;

  void overlay(const ProtocolPatch& o) {
    pixels.overlay(o.pixels);
    pixel_scale.overlay(o.pixel_scale);
    init_lengthscale.overlay(o.init_lengthscale);
    init_variance.overlay(o.init_variance);
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

const std::vector<std::string> kProtocolKeys = {"steps",         "lr_schedule",  "kl_anneal",
                                                "train_samples", "test_samples", "inducing",
                                                "batch",         "kernel",       "width",
                                                "seed",          "pixels",       "init_lengthscale",
                                                "init_variance", "pixel_scale"};

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
      p.kernel.set(P.get_choice(v, key, kKernels), w);
    } else if (k == "pixels") {
      p.pixels.set(P.get_choice(v, key, kPixelRules), w);
    } else if (k == "pixel_scale") {
      p.pixel_scale.set(P.get_positive_double(v, key), w);
    } else if (k == "init_lengthscale") {
      p.init_lengthscale.set(P.get_positive_double(v, key), w);
    } else if (k == "init_variance") {
      p.init_variance.set(P.get_positive_double(v, key), w);
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
  std::vector<std::string> inference{""}, posterior{""};
  Field<std::vector<int>> depths;
  Field<std::vector<std::string>> kernels;
  Field<std::vector<long>> inducing;
  ProtocolPatch protocol;
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

  void overlay(const Axes& o) {
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
      [&](const YAML::Node& n, const std::string& k) { return P.get_choice(n, k, kKernels); },
      true);
}

ModelEntry parse_model_entry(const Parser& P, const YAML::Node& e, const std::string& key) {
  ModelEntry m;
  m.where = P.where(e, key);
  if (e.IsScalar()) {
    m.model = P.get_choice(e, key, known_models());
    if (m.model == "dgp")
      P.fail(e, key, "model dgp needs an inference: {model: dgp, inference: ...}");
    if (m.model == "dwp")
      P.fail(e, key, "model dwp needs a posterior: {model: dwp, posterior: ...}");
    return m;
  }
  std::vector<std::string> allowed = {"model", "inference", "posterior", "depths", "kernels"};
  for (const auto& k : kProtocolKeys)
    if (k != "kernel") allowed.push_back(k);
  P.check_keys(e, key, allowed);
  if (!e["model"]) P.fail(e, key, "missing key 'model' (one of: " + join(known_models()) + ")");
  m.model = P.get_choice(e["model"], key + ".model", known_models());
  if (const auto v = e["inference"]) {
    if (m.model != "dgp") {
      P.fail(v, key + ".inference",
             fmt::format("model {} takes no inference (only dgp: {})", m.model, join(kInferences)));
    }
    m.inference = P.get_list<std::string>(
        v, key + ".inference",
        [&](const YAML::Node& n, const std::string& k) { return P.get_choice(n, k, kInferences); },
        true);
  } else if (m.model == "dgp") {
    P.fail(e, key, "model dgp needs 'inference' (" + join(kInferences) + ")");
  }
  if (const auto v = e["posterior"]) {
    if (m.model != "dwp") {
      P.fail(v, key + ".posterior",
             fmt::format("model {} takes no posterior (only dwp: {})", m.model, join(kPosteriors)));
    }
    m.posterior = P.get_list<std::string>(
        v, key + ".posterior",
        [&](const YAML::Node& n, const std::string& k) { return P.get_choice(n, k, kPosteriors); },
        true);
  } else if (m.model == "dwp") {
    P.fail(e, key, "model dwp needs 'posterior' (" + join(kPosteriors) + ")");
  }
  if (const auto v = e["depths"]) {
    auto d = parse_depths(P, v, key + ".depths");
    if (m.model == "sgp") {
      for (size_t i = 0; i < d.size(); ++i)
        if (d[i] != 1) P.fail(v, key + ".depths", "model sgp is single-layer: depth must be 1");
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
  return m;
}

Axes parse_axes(const Parser& P, const YAML::Node& a, const std::string& path) {
  P.check_keys(a, path, {"datasets", "splits", "depths", "kernels", "models"});
  Axes ax;
  if (const auto v = a["datasets"]) {
    const std::string key = path + ".datasets";
    auto ds = P.get_list<std::string>(
        v, key,
        [&](const YAML::Node& n, const std::string& k) {
          const std::string s = P.get_string(n, k);
          try {
            return canonical_dataset(s);
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
            d = canonical_dataset(d);
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
      if (k != "kernel") set_keys.push_back(k);
    P.check_keys(e["set"], ik + ".set", set_keys);
    o.set = parse_protocol_keys(P, e["set"], ik + ".set", false, true);
    out.push_back(std::move(o));
  }
  return out;
}

struct Profile {
  std::string description;
  ProtocolPatch protocol;
  Axes axes;
  std::vector<Override> overrides;
};

Profile parse_profile(const Parser& P, const YAML::Node& v, const std::string& key) {
  P.check_keys(v, key, {"description", "protocol", "axes", "overrides"});
  Profile pr;
  if (const auto d = v["description"]) pr.description = P.get_string(d, key + ".description");
  if (const auto p = v["protocol"]) {
    P.check_keys(p, key + ".protocol", kProtocolKeys);
    pr.protocol = parse_protocol_keys(P, p, key + ".protocol", true, true);
  }
  if (const auto a = v["axes"]) pr.axes = parse_axes(P, a, key + ".axes");
  if (const auto o = v["overrides"]) pr.overrides = parse_overrides(P, o, key + ".overrides");
  return pr;
}

bool when_matches(const Override& o, const RunSpec& s) {
  for (const auto& [k, values] : o.when) {
    std::string actual;
    if (k == "dataset") actual = s.dataset;
    if (k == "split") actual = std::to_string(s.split);
    if (k == "model") actual = s.model;
    if (k == "inference") actual = s.inference;
    if (k == "posterior") actual = s.posterior;
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
  if (patch.init_lengthscale.value) p.init_lengthscale = *patch.init_lengthscale.value;
  if (patch.init_variance.value) p.init_variance = *patch.init_variance.value;
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

Grid parse_grid(const std::string& text, const std::string& filename, const std::string& profile) {
  Parser P(filename);
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
    g.reference = P.get_choice(v, "reference", {"dkp", "gw", "agw", "dsvi"});
  }
  if (const auto v = root["description"]) g.description = P.get_string(v, "description");

  if (!root["protocol"]) P.fail(root, "protocol", "missing key");
  P.check_keys(root["protocol"], "protocol", kProtocolKeys);
  ProtocolPatch proto = parse_protocol_keys(P, root["protocol"], "protocol", true, true);
  if (!root["axes"]) P.fail(root, "axes", "missing key");
  Axes axes = parse_axes(P, root["axes"], "axes");
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
      parse_profile(P, it->second, "profiles." + name);
    }
  }
  g.profile = profile;
  if (profile_nodes.count(profile)) {
    const Profile pr = parse_profile(P, profile_nodes[profile], "profiles." + profile);
    g.profile_description = pr.description;
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
  for (const auto& ds : *axes.datasets.value) {
    const int n = uci_split_count(ds);
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
    max_splits = std::max(max_splits, uci_split_count(ds));
  std::vector<int> split_order;
  if (axes.splits_all) {
    for (int s = 0; s < max_splits; ++s) split_order.push_back(s);
  } else {
    split_order = *axes.splits.value;
  }
  for (int split : split_order) {
    for (const auto& ds : *axes.datasets.value) {
      if (split >= uci_split_count(ds)) continue;
      for (const auto& m : *axes.models) {
        std::vector<int> depths;
        Where depth_where = m.where;
        if (m.depths.value) {
          depths = *m.depths.value;
          depth_where = m.depths.where;
        } else if (m.model == "sgp") {
          depths = {1};
        } else if (axes.depths.value) {
          depths = *axes.depths.value;
          depth_where = axes.depths.where;
        } else {
          P.fail_where(m.where, "no depths: give axes.depths or depths in this model entry");
        }
        std::vector<std::string> kernels =
            m.kernels.value ? *m.kernels.value
                            : (axes.kernels.value ? *axes.kernels.value
                                                  : std::vector<std::string>{*proto.kernel.value});
        std::vector<long> inducing =
            m.inducing.value ? *m.inducing.value : std::vector<long>{base.inducing};
        for (const auto& inf : m.inference) {
          for (const auto& post : m.posterior) {
            for (long ind : inducing) {
              for (int depth : depths) {
                for (const auto& kernel : kernels) {
                  RunSpec s;
                  s.grid = g.name;
                  s.dataset = ds;
                  s.split = split;
                  s.model = m.model;
                  s.inference = inf;
                  s.posterior = post;
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
                    P.fail_where(prov.kl_anneal,
                                 fmt::format("kl_anneal {} exceeds steps = {} for {}", p.kl_anneal,
                                             p.steps, s.label()));
                  }
                  try {
                    validate_run_spec(s);
                  } catch (const ConfigError& e) {
                    P.fail_where(depth_where, fmt::format("{}: {}", s.label(), e.what()));
                  }
                  if (!hashes.insert(s.hash()).second) {
                    P.fail_where(m.where,
                                 fmt::format("cell {} appears twice in the grid", s.label()));
                  }
                  g.cells.push_back(std::move(s));
                }
              }
            }
          }
        }
      }
    }
  }
  return g;
}

Grid load_grid(const fs::path& file, const std::string& profile) {
  std::string text;
  try {
    text = util::read_file(file);
  } catch (const DataError& e) {
    throw ConfigError(fmt::format("cannot read grid file: {}", e.what()));
  }
  return parse_grid(text, file.string(), profile);
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
