#include "models/registry.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "models/aep_dgp.hpp"
#include "models/cdgp.hpp"
#include "models/diwp.hpp"
#include "models/dsvi_dgp.hpp"
#include "models/dwp.hpp"
#include "models/gi_dgp.hpp"
#include "models/nngp.hpp"
#include "models/sgp.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace {

// The registry's consistency (a programming error otherwise): a model's entries all have a
// posterior or none, (model, posterior) and the aliases are unique, a model has one default at
// most, every entry has kernels, a depth rule and a builder, and options only with its kernels.
void check_registry(const std::vector<RegistryEntry>& entries) {
  std::map<std::string, const RegistryEntry*> first;
  for (const auto& e : entries) {
    const auto fail = [&](const std::string& what) {
      throw std::logic_error(fmt::format("model registry: {} {}: {}", e.model, e.posterior, what));
    };
    const RegistryEntry& f = *first.emplace(e.model, &e).first->second;
    if (f.posterior.empty() != e.posterior.empty()) {
      fail("a model's entries have a posterior each or none");
    }
    if (e.kernels.empty() || !e.build || e.min_depth < 1 || e.min_depth > e.max_depth ||
        e.max_depth > kMaxDepth) {
      fail("no kernels, no builder or an impossible depth rule");
    }
    const auto takes = [&](const std::string& k) {
      return std::find(e.kernels.begin(), e.kernels.end(), k) != e.kernels.end();
    };
    if (!std::all_of(e.classifies_with.begin(), e.classifies_with.end(), takes)) {
      fail("classifies with a kernel it does not take");
    }
    for (const auto& use : e.options) {
      const OptionDecl* d = find_option(use.option);
      if (!d) fail("an option that option_table() does not declare: " + use.option);
      if (!std::all_of(use.kernels.begin(), use.kernels.end(), takes)) {
        fail("an option with a kernel it does not take");
      }
      for (const auto& v : use.values) {
        if (std::find(d->choices.begin(), d->choices.end(), v) == d->choices.end()) {
          fail("an option value the option does not have: " + v);
        }
      }
    }
    size_t named = 0, defaults = 0;
    for (const auto& o : entries) {
      if (o.model != e.model) continue;
      defaults += o.default_posterior;
      named += o.posterior == e.posterior;
      named += size_t(std::count(o.aliases.begin(), o.aliases.end(), e.posterior));
      for (const auto& name : e.aliases) {
        named += o.posterior == name;
        named += size_t(std::count(o.aliases.begin(), o.aliases.end(), name));
      }
    }
    if (named != 1 + e.aliases.size() || defaults > 1) {
      fail("a posterior or alias named twice, or two defaults");
    }
  }
}

// The entries that take an option (with `value`, when given), each with the kernels it takes it
// with (empty: all).
using EntrySet = std::vector<std::pair<const RegistryEntry*, std::vector<std::string>>>;

bool value_ok(const OptionUse& use, const std::string& value) {
  return value.empty() || use.values.empty() ||
         std::find(use.values.begin(), use.values.end(), value) != use.values.end();
}

EntrySet takers(const std::string& option, const std::string& value = "") {
  EntrySet set;
  for (const auto& e : registry())
    for (const auto& use : e.options)
      if (use.option == option && value_ok(use, value)) set.emplace_back(&e, use.kernels);
  return set;
}

// "a", "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& parts, const std::string& last = " and ") {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? last : ", ";
    out += parts[i];
  }
  return out;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// A set of entries, each with all its kernels (empty restriction) or some, as text: a model all
// of whose entries are in the set with all their kernels is its name; otherwise its posteriors
// with the same kernel restriction go together: "sgp and dwp --posterior agw or abgw".
std::vector<std::string> describe_parts(const EntrySet& set) {
  std::vector<std::string> parts;
  for (const auto& model : model_names()) {
    EntrySet mine;
    for (const auto& [e, kernels] : set) {
      if (e->model != model) continue;
      mine.emplace_back(e, kernels == e->kernels ? std::vector<std::string>{} : kernels);
    }
    if (mine.empty()) continue;
    const auto& all = registry();
    const bool whole =
        mine.size() == size_t(std::count_if(all.begin(), all.end(),
                                            [&](const auto& e) { return e.model == model; })) &&
        std::all_of(mine.begin(), mine.end(), [](const auto& m) { return m.second.empty(); });
    if (whole) {
      parts.push_back(model);
      continue;
    }
    std::vector<bool> done(mine.size(), false);
    for (size_t i = 0; i < mine.size(); ++i) {
      if (done[i]) continue;
      std::vector<std::string> posts;
      for (size_t j = i; j < mine.size(); ++j) {
        if (done[j] || mine[j].second != mine[i].second) continue;
        done[j] = true;
        posts.push_back(mine[j].first->posterior);
      }
      std::string part = model;
      if (!posts.front().empty()) {
        part += " --" + mine[i].first->posterior_key + " " + and_list(posts, " or ");
      }
      if (!mine[i].second.empty()) part += " --kernel " + and_list(mine[i].second, " or ");
      parts.push_back(part);
    }
  }
  return parts;
}

std::string describe(const EntrySet& set) {
  return and_list(describe_parts(set));
}

const RegistryEntry* find_in(const std::vector<RegistryEntry>& entries, const std::string& model,
                             const std::string& posterior) {
  for (const auto& e : entries) {
    if (e.model != model) continue;
    if (posterior.empty()
            ? (e.posterior.empty() || e.default_posterior)
            : (e.posterior == posterior ||
               std::find(e.aliases.begin(), e.aliases.end(), posterior) != e.aliases.end())) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace

const std::vector<RegistryEntry>& registry() {
  // The models, in the order of the help text and of every list of models: the name, the word
  // its canonical text and command line use for its posterior, and the entries functions of
  // its model files (declared in their headers).
  struct ModelRow {
    const char* model;
    const char* posterior_key;
    std::vector<std::vector<RegistryEntry> (*)()> entries;
  };
  static const std::vector<RegistryEntry> entries = [] {
    const ModelRow rows[] = {
        {"sgp", "posterior", {&sgp_entries}},
        {"dgp", "inference", {&dsvi_dgp_entries, &gi_dgp_entries, &aep_dgp_entries}},
        {"nngp", "posterior", {&nngp_entries}},
        {"diwp", "posterior", {&diwp_entries}},
        {"dwp", "posterior", {&dwp_entries}},
        {"cdgp", "posterior", {&cdgp_entries}},
    };
    std::vector<RegistryEntry> all;
    for (const auto& row : rows) {
      for (auto* entries_of : row.entries) {
        for (auto& e : entries_of()) {
          e.model = row.model;
          e.posterior_key = row.posterior_key;
          all.push_back(std::move(e));
        }
      }
    }
    check_registry(all);
    return all;
  }();
  return entries;
}

RegistryEntry make_entry(std::string posterior, std::string summary) {
  RegistryEntry e;
  e.posterior = std::move(posterior);
  e.summary = std::move(summary);
  return e;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) {
    if (std::find(names.begin(), names.end(), e.model) == names.end()) names.push_back(e.model);
  }
  return names;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) {
    for (const auto& k : e.kernels)
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  }
  return names;
}

std::vector<std::string> posterior_names(const std::string& model) {
  std::vector<std::string> names;
  for (const auto& e : registry())
    if (e.model == model && !e.posterior.empty()) names.push_back(e.posterior);
  return names;
}

std::vector<std::string> posterior_spellings(const std::string& model) {
  std::vector<std::string> names;
  for (const auto& e : registry()) {
    if (e.model != model || e.posterior.empty()) continue;
    names.push_back(e.posterior);
    names.insert(names.end(), e.aliases.begin(), e.aliases.end());
  }
  return names;
}

const std::string& posterior_key(const std::string& model) {
  static const std::string fallback = "posterior";
  for (const auto& e : registry())
    if (e.model == model) return e.posterior_key;
  return fallback;
}

const RegistryEntry* find_entry(const std::string& model, const std::string& posterior) noexcept {
  return find_in(registry(), model, posterior);
}

const RegistryEntry& entry(const std::string& model, const std::string& posterior,
                           bool allow_default) {
  const RegistryEntry* e = find_entry(model, posterior);
  if (e && (allow_default || !posterior.empty() || e->posterior.empty())) return *e;
  const auto models = model_names();
  if (std::find(models.begin(), models.end(), model) == models.end()) {
    throw ConfigError(fmt::format("unknown model '{}' (known: {})", model, join(models, ", ")));
  }
  const auto posteriors = posterior_names(model);
  const std::string& key = posterior_key(model);
  if (posteriors.empty()) {
    throw ConfigError(fmt::format("model {} takes no {} (got '{}')", model, key, posterior));
  }
  if (posterior.empty()) {
    throw ConfigError(
        fmt::format("model {} needs {} {} (got '')", model, key, and_list(posteriors, " or ")));
  }
  throw ConfigError(fmt::format("model {} has no {} '{}' ({})", model, key, posterior,
                                and_list(posteriors, " or ")));
}

std::string posterior_of(const ModelSpec& spec) {
  if (posterior_key(spec.model) != "inference" || spec.inference.empty()) return spec.posterior;
  if (!spec.posterior.empty() && spec.posterior != spec.inference) {
    throw ConfigError(fmt::format(
        "{}: posterior '{}' and inference '{}' differ (two names of one axis: give one)",
        spec.model, spec.posterior, spec.inference));
  }
  return spec.inference;
}

std::string entry_label(const RegistryEntry& e, const std::string& kernel) {
  std::string label = e.model;
  if (!e.posterior.empty()) label += " --" + e.posterior_key + " " + e.posterior;
  if (!kernel.empty() && e.kernels.size() > 1) label += " --kernel " + kernel;
  return label;
}

bool accepts(const RegistryEntry& e, const std::string& option, const std::string& kernel,
             const std::string& value) {
  return std::any_of(e.options.begin(), e.options.end(), [&](const OptionUse& u) {
    return u.option == option &&
           (u.kernels.empty() ||
            std::find(u.kernels.begin(), u.kernels.end(), kernel) != u.kernels.end()) &&
           value_ok(u, value);
  });
}

bool takes_option(const RegistryEntry& e, const std::string& option) {
  return std::any_of(e.options.begin(), e.options.end(),
                     [&](const OptionUse& u) { return u.option == option; });
}

void check_depth(const RegistryEntry& e, size_t depth) {
  if (depth >= e.min_depth && depth <= e.max_depth) return;
  const std::string rule = e.min_depth == e.max_depth
                               ? fmt::format("must be {}", e.min_depth)
                               : fmt::format("must be in {}..{}", e.min_depth, e.max_depth);
  throw ConfigError(fmt::format("model {}: depth {} (got {}){}", entry_label(e), rule, depth,
                                e.depth_note.empty() ? "" : ": " + e.depth_note));
}

void check_options(const RegistryEntry& e, const ModelSpec& spec) {
  for (const auto& [name, value] : spec.options.set_values()) {
    const OptionDecl& o = option_decl(name);
    check_value(o, value);
    if (accepts(e, name, spec.kernel, value)) continue;
    // A value only some of the option's takers take is named with the option ("--stl mixing").
    const bool by_value =
        !takers(name, value).empty() && takers(name, value).size() < takers(name).size();
    const std::string what = by_value ? o.flag() + " " + value : o.flag();
    const auto parts = describe_parts(takers(name, by_value ? value : ""));
    throw ConfigError(fmt::format("{} ({}) is not an option of {}; only {} {} it", what, o.summary,
                                  entry_label(e, spec.kernel),
                                  parts.empty() ? "no model" : and_list(parts),
                                  parts.size() == 1 ? "takes" : "take"));
  }
}

const RegistryEntry& check_spec(const ModelSpec& spec) {
  const RegistryEntry& e = entry(spec.model, posterior_of(spec));
  check_depth(e, spec.depth);
  if (std::find(e.kernels.begin(), e.kernels.end(), spec.kernel) == e.kernels.end()) {
    throw ConfigError(fmt::format("model {}: kernel '{}' is not available ({})", entry_label(e),
                                  spec.kernel, join(e.kernels, ", ")));
  }
  check_options(e, spec);
  if (spec.classes > 0 && !entry_classifies(spec)) {
    throw ConfigError(fmt::format("classification ({} classes) is not available for {}; {}",
                                  spec.classes, entry_label(e, spec.kernel), classifiers_text()));
  }
  return e;
}

bool entry_classifies(const ModelSpec& spec) {
  const RegistryEntry* e = nullptr;
  try {
    e = find_entry(spec.model, posterior_of(spec));
  } catch (const ConfigError&) {
    return false;
  }
  return e && std::find(e->classifies_with.begin(), e->classifies_with.end(), spec.kernel) !=
                  e->classifies_with.end();
}

std::string classifiers_text() {
  std::vector<std::string> likelihoods, parts;
  for (const auto& e : registry()) {
    if (!e.classifies_with.empty() && std::find(likelihoods.begin(), likelihoods.end(),
                                                e.classification_likelihood) == likelihoods.end()) {
      likelihoods.push_back(e.classification_likelihood);
    }
  }
  for (const auto& lik : likelihoods) {
    EntrySet set;
    for (const auto& e : registry())
      if (!e.classifies_with.empty() && e.classification_likelihood == lik)
        set.emplace_back(&e, e.classifies_with);
    parts.push_back(fmt::format("{} ({} likelihood)", describe(set), lik));
  }
  return "the models that classify: " + join(parts, "; ");
}

std::string registry_help() {
  std::string out =
      "Models (--model) and their posteriors (--posterior; dgp's also --inference, the same "
      "axis):\n";
  size_t width = 0;
  for (const auto& e : registry()) width = std::max(width, entry_label(e).size());
  for (const auto& e : registry()) {
    out += fmt::format("  {:<{}}  {}\n", entry_label(e), width, e.summary);
    std::string depth = e.min_depth == e.max_depth
                            ? fmt::format("{}", e.min_depth)
                            : fmt::format("{}..{}", e.min_depth, e.max_depth);
    if (!e.depth_note.empty()) depth += " (" + e.depth_note + ")";
    std::string tasks = "regression";
    if (!e.classifies_with.empty()) {
      tasks += fmt::format(
          ", classification ({} likelihood{})", e.classification_likelihood,
          e.classifies_with == e.kernels ? "" : ", kernel " + and_list(e.classifies_with, " or "));
    }
    out += fmt::format("      kernels {}; depth {}; {}\n", join(e.kernels, ", "), depth, tasks);
    if (!e.aliases.empty()) out += "      also named " + join(e.aliases, ", ") + "\n";
    std::vector<std::string> opts;
    for (const auto& use : e.options) {
      std::string o = option_decl(use.option).flag();
      if (!use.values.empty()) o += " " + and_list(use.values, " or ");
      if (!use.kernels.empty()) o += " (kernel " + and_list(use.kernels, " or ") + ")";
      opts.push_back(o);
    }
    if (!opts.empty()) out += "      options " + join(opts, ", ") + "\n";
  }
  out += "Model options (any other model rejects them):\n";
  for (const auto& o : option_table()) {
    const EntrySet t = takers(o.name);
    out +=
        fmt::format("  {:<20} {}: {}\n", o.flag(), o.summary, t.empty() ? "no model" : describe(t));
  }
  return out;
}

}  // namespace dkp::models
