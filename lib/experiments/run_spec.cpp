#include "experiments/run_spec.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "data/mnist.hpp"
#include "data/toy.hpp"
#include "data/uci.hpp"
#include "experiments/names.hpp"
#include "models/factory.hpp"
#include "models/registry.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"
#include "util/sha256.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

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
// RunSpec

namespace {
// A DIWP cell's delta_init joins its hash and its command line unless it is 1, the first
// default (grid.hpp): one rule for canonical() and run_args().
bool delta_init_is_set(const RunSpec& s) {
  return s.model == "diwp" && s.delta_init != 1.0;
}

// The posterior as canonical(), run_args() and model_label() write it: {inference, posterior},
// the posterior's name (not an alias) under the model's key, the other empty; an unknown model's,
// or two different values, as they are.
std::pair<std::string, std::string> keyed_posterior(const RunSpec& s) {
  if ((!s.inference.empty() && !s.posterior.empty() && s.inference != s.posterior) ||
      !contains(models::model_names(), s.model)) {
    return {s.inference, s.posterior};
  }
  std::string name = s.posterior_name();
  if (const auto* e = models::find_entry(s.model, name); e && !name.empty()) name = e->posterior;
  if (models::posterior_key(s.model) == "inference") return {name, ""};
  return {"", name};
}
}  // namespace

const std::string& RunSpec::posterior_name() const {
  return posterior.empty() ? inference : posterior;
}

void RunSpec::set_posterior(const std::string& name) {
  const bool by_inference = models::posterior_key(model) == "inference";
  inference = by_inference ? name : "";
  posterior = by_inference ? "" : name;
}

std::string RunSpec::canonical() const {
  const auto& p = protocol;
  const auto [inf, post] = keyed_posterior(*this);
  std::string c = fmt::format(
      "dkp-run-v1\ndataset={}\nsplit={}\nmodel={}\ninference={}\nposterior={}\ndepth={}\n"
      "kernel={}\nsteps={}\nlr_schedule={}\nkl_anneal={}\ntrain_samples={}\ntest_samples={}\n"
      "inducing={}\nbatch={}\nwidth={}\nseed={}\n",
      dataset, split, model, inf, post, depth, kernel, p.steps, format_lr_schedule(p.lr_schedule),
      p.kl_anneal, p.train_samples, p.test_samples, p.inducing, p.batch, p.width, p.seed);
  // The DIWP options only when set (delta_init: when not 1, see grid.hpp).
  if (delta_init_is_set(*this)) c += fmt::format("delta_init={}\n", delta_init);
  if (diwp_dof != "point") c += "diwp_dof=" + diwp_dof + "\n";
  if (diwp_omega_v != "n0") c += "diwp_omega_v=" + diwp_omega_v + "\n";
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
  if (const auto d = take("diwp_omega_v", false)) r.diwp_omega_v = *d;
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
  const auto [inf, post] = keyed_posterior(*this);
  if (!inf.empty()) return model + "-" + inf;
  if (!post.empty()) return model + "-" + post;
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
  const auto [inf, post] = keyed_posterior(*this);
  if (!inf.empty()) a.insert(a.end(), {"--inference", inf});
  if (!post.empty()) a.insert(a.end(), {"--posterior", post});
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
  if (diwp_omega_v != "n0") a.insert(a.end(), {"--diwp-omega-v", diwp_omega_v});
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
  if (!classification && !data::is_toy_dataset(s.dataset))
    data::uci_info(s.dataset);  // throws ConfigError listing the known names
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
  // The model: the registry's rules (models/registry.hpp), on the spec as make_model sees it.
  if (!contains(known_models(), s.model)) {
    throw ConfigError(fmt::format("unknown model '{}' (known: {})", s.model, join(known_models())));
  }
  if (!s.inference.empty() && !s.posterior.empty() && s.inference != s.posterior) {
    throw ConfigError(
        fmt::format("posterior '{}' and inference '{}' differ (two names of one axis: give one)",
                    s.posterior, s.inference));
  }
  models::entry(s.model, s.posterior_name(), /*allow_default=*/false);  // named, as hashed
  if (s.diwp_dof != "point" && s.diwp_dof != "batch") {
    throw ConfigError(fmt::format("DIWP dof must be point or batch (got '{}')", s.diwp_dof));
  }
  if (s.diwp_omega_v != "n0" && s.diwp_omega_v != "paper") {
    throw ConfigError(fmt::format("--diwp-omega-v must be n0 or paper (got '{}')", s.diwp_omega_v));
  }
  const models::ModelSpec m = model_spec(s, 0, 0);
  const models::RegistryEntry& e = models::check_spec(m);
  if (classification && !models::classifies(m)) {
    throw ConfigError(fmt::format("{} is a classification dataset and {} does not classify; {}",
                                  s.dataset, models::entry_label(e, s.kernel),
                                  models::classifiers_text()));
  }
  const auto& p = s.protocol;
  if (p.steps < 1) throw ConfigError(fmt::format("steps must be positive, not {}", p.steps));
  check_lr_schedule(p.lr_schedule, "");
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

size_t resolve_width(const std::string& rule, size_t d0) {
  if (rule == "input") return d0;
  if (rule == "min(input,30)") return std::min<size_t>(d0, 30);
  try {
    size_t pos = 0;
    const long w = std::stol(rule, &pos);
    if (pos == rule.size() && w > 0) return size_t(w);
  } catch (const std::exception&) {
  }
  throw ConfigError(
      fmt::format("--width '{}': expected input, min(input,30) or a positive integer", rule));
}

models::ModelSpec model_spec(const RunSpec& spec, size_t width, size_t classes) {
  models::ModelSpec m;
  m.model = spec.model;
  m.posterior = spec.posterior_name();
  m.depth = spec.depth < 0 ? 0 : size_t(spec.depth);
  m.kernel = spec.kernel;
  m.width = width;
  m.inducing = spec.protocol.inducing < 0 ? 0 : size_t(spec.protocol.inducing);
  m.delta_init = spec.delta_init;
  m.diwp_batch_dof = spec.diwp_dof == "batch";
  m.diwp_omega_v_paper = spec.diwp_omega_v == "paper";
  models::set_stl(m, spec.stl);
  m.a_prime_scale = spec.a_prime_scale;
  m.mu_raw = models::parse_mu_param(spec.mu_param);
  m.hidden_ard = spec.hidden_ard;
  m.per_output_precision = models::parse_gi_precision(spec.gi_precision);
  m.classes = classes;
  m.init_lengthscale = spec.protocol.init_lengthscale;
  m.init_variance = spec.protocol.init_variance;
  return m;
}

}  // namespace dkp::experiments
