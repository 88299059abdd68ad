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

#include "data/datasets.hpp"
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
// Whether canonical() writes option `d` of spec `s`: when the spec's model takes the option and
// its value differs from the hash baseline, or (a spec that validation rejects) when it is set
// for a model that does not take it.
bool in_canonical(const RunSpec& s, const models::OptionDecl& d) {
  const auto* e = models::find_entry(s.model, s.posterior_name());
  if (e && models::takes_option(*e, d.name)) return s.options.text(d.name) != d.hash_baseline;
  return s.options.is_set(d.name);
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
  if (!data_fingerprint.empty()) c += "data=" + data_fingerprint + "\n";
  // The model options where they differ from their hash baselines, then the data's.
  for (const auto& d : models::option_table()) {
    if (in_canonical(*this, d)) c += d.name + "=" + options.text(d.name) + "\n";
  }
  if (p.pixels != "unit") c += "pixels=" + p.pixels + "\n";
  if (p.pixel_scale != 1.0) c += fmt::format("pixel_scale={}\n", p.pixel_scale);
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
  // Model options are written only when they differ from their hash baselines: absent means the
  // baseline (for a model that takes the option), or the default.
  const auto* e = models::find_entry(r.model, r.posterior_name());
  for (const auto& d : models::option_table()) {
    try {
      if (const auto v = take(d.name, false)) {
        r.options.set(d.name, *v, "run configuration: " + d.name);
      } else if (e && models::takes_option(*e, d.name)) {
        r.options.set(d.name, d.hash_baseline);
      }
    } catch (const ConfigError& ex) {
      throw DataError(ex.what());
    }
  }
  if (const auto px = take("pixels", false)) {
    if (*px != "standard") throw DataError(fmt::format("run configuration: pixels='{}'", *px));
    p.pixels = *px;
  }
  if (const auto v = take("pixel_scale", false)) p.pixel_scale = number("pixel_scale", *v);
  if (const auto v = take("data", false)) r.data_fingerprint = *v;
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
  // Every model option that differs from `dkp run`'s default (the option's), and every one the
  // hash holds (delta_init at its default), so the command names what the hash names.
  for (const auto& d : models::option_table()) {
    if (!options.is_set(d.name) && !in_canonical(*this, d)) continue;
    const std::string value = options.text(d.name);
    if (d.type == models::OptionType::Switch) {
      if (value == "on") a.push_back(d.flag());
    } else {
      a.insert(a.end(), {d.flag(), value});
    }
  }
  a.insert(a.end(), {"--seed", std::to_string(p.seed)});
  a.insert(a.end(), extra.begin(), extra.end());
  a.insert(a.end(), {"--out", run_dir(results_root).string(), "--quiet"});
  return a;
}

std::vector<std::string> RunSpec::spec_args(const fs::path& results_root,
                                            const std::vector<std::string>& extra) const {
  std::vector<std::string> a = {"run", "--spec", canonical()};
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

void validate_run_spec(const RunSpec& s, const std::filesystem::path& data_root) {
  // The dataset table (data/datasets.hpp): ConfigError listing the known names.
  const data::DatasetInfo info =
      data_root.empty() ? data::dataset_info(s.dataset) : data::dataset_info(s.dataset, data_root);
  const bool classification = info.classes > 0;
  if (info.kind != data::DatasetKind::Images &&
      (s.protocol.pixels != "unit" || s.protocol.pixel_scale != 1.0)) {
    throw ConfigError(fmt::format(
        "pixels '{}' and pixel scale {} are for images; {}'s inputs are standardised per feature",
        s.protocol.pixels, s.protocol.pixel_scale, s.dataset));
  }
  if (info.kind == data::DatasetKind::Images || data::is_toy_dataset(s.dataset)) {
    if (s.options.is_set(models::opt::kStandardise)) {
      throw ConfigError(fmt::format("standardise '{}' is for tabular data; {} is not",
                                    s.options.text(models::opt::kStandardise), s.dataset));
    }
  }
  if (!(s.protocol.pixel_scale > 0.0) || !std::isfinite(s.protocol.pixel_scale)) {
    throw ConfigError(
        fmt::format("pixel scale must be positive and finite (got {})", s.protocol.pixel_scale));
  }
  const int n = info.splits;
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
  m.options = spec.options;
  m.classes = classes;
  return m;
}

}  // namespace dkp::experiments
