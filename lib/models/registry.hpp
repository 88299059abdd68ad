// The model registry: one entry per (model, posterior) that dkp builds, each defined beside its
// model (an `*_entries()` function in the model's .cpp file, listed once in registry.cpp). An
// entry says which kernels the model takes, whether it classifies, its depth rule, which
// model-specific options it has, and how it is built. Everything that lists or checks models
// (make_model, classifies, check_model_options, the run specs' checks, the grids' model entries,
// `dkp run --help`) reads the registry, so each rule is written once.
//
// The variant axis of a model is its approximate posterior (`posterior`): the DGP's inference
// (dsvi, global-inducing, aep), the DWP's posterior (gw, agw, abgw) and the compositional DGP's
// (dsvi, jointly-gaussian, inducing-locations). `inference` is another name of the same axis;
// the DGP's canonical text and command lines spell it `inference` (RegistryEntry::posterior_key),
// which keeps the configuration hashes of the committed results.
#pragma once

#include <armadillo>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "models/diwp_defaults.hpp"
#include "models/model.hpp"
#include "models/options.hpp"

namespace dkp::models {

/// A model to build: its name, posterior, axes and options (the `dkp run --model ...` names).
struct ModelSpec {
  std::string model;  ///< sgp | dgp | nngp | diwp | dwp | cdgp (model_names())
  /// The DGP's posterior under its old name (dkp bench --inference): read when `posterior` is
  /// empty, for the models whose posterior_key is "inference" (dgp) only; posterior_of().
  std::string inference;
  std::string posterior;  ///< dgp: dsvi | global-inducing | aep; dwp: gw | agw | abgw; cdgp: ...
  size_t depth = 2;
  std::string kernel = "se";
  size_t width = 0;  ///< 0: number of input features
  size_t inducing = 100;
  /// The model options (models/options.hpp): each read by the builders of the entries that take
  /// it; check_spec rejects one that is set for an entry that does not.
  OptionValues options{};
  /// 0: regression; C >= 2: classification over C classes, for the entries that classify with
  /// the spec's kernel (RegistryEntry::classifies_with); the others throw ConfigError.
  size_t classes = 0;
};

/// An option an entry accepts (options.hpp), with every kernel of the entry or with some only,
/// and every value of the option or some only (dwp gw: stl on or off, not mixing).
struct OptionUse {
  std::string option;
  std::vector<std::string> kernels;  ///< empty: every kernel of the entry
  std::vector<std::string> values;   ///< empty: every value
};

/// Builds and initialises a model from a spec that check_spec accepted (its posterior resolved to
/// the entry's name) and the standardised training data.
using ModelBuilder =
    std::function<std::unique_ptr<Model>(const ModelSpec& spec, const arma::mat& X_train,
                                         const arma::vec& y_train, random::Stream& init)>;

/// The largest depth any model takes.
inline constexpr size_t kMaxDepth = 64;

/// One (model, posterior) that dkp builds. A model file's *_entries() function gives its entries;
/// registry() sets model and posterior_key from the model's row in registry.cpp.
struct RegistryEntry {
  std::string model;
  std::string posterior;             ///< empty: the model has no posteriors
  std::vector<std::string> aliases;  ///< other names of the posterior
  /// The word the model's canonical run text and command lines use for its posterior: "posterior",
  /// or "inference" (dgp). Both words name the same axis wherever a user types one.
  std::string posterior_key = "posterior";
  /// make_model's posterior when the spec names none (dwp: gw, cdgp: dsvi); run specs and grids
  /// always name it.
  bool default_posterior = false;
  std::string summary;               ///< one line for the help text
  std::vector<std::string> kernels;  ///< the kernels it takes
  /// The kernels with which it classifies (likelihood `classification_likelihood`); empty:
  /// regression only.
  std::vector<std::string> classifies_with;
  std::string classification_likelihood;
  /// Depth rule: the number of kernel applications, from min_depth to max_depth; `depth_note`
  /// says why when the rule is narrower than 1..kMaxDepth.
  size_t min_depth = 1, max_depth = kMaxDepth;
  std::string depth_note;
  std::vector<OptionUse> options;
  ModelBuilder build;
};

/// Every entry, in the order of registry.cpp's list (models in order, each model's posteriors in
/// order).
const std::vector<RegistryEntry>& registry();

/// An entry with its posterior and summary, the rest default (for the *_entries() functions).
RegistryEntry make_entry(std::string posterior, std::string summary);

/// Model names in registry order.
std::vector<std::string> model_names();
/// The kernels any model takes, in registry order.
std::vector<std::string> kernel_names();
/// A model's posteriors (their names, not the aliases), in registry order; empty when it has none
/// or is unknown.
std::vector<std::string> posterior_names(const std::string& model);
/// The posteriors' names and their aliases.
std::vector<std::string> posterior_spellings(const std::string& model);
/// The word `model`'s canonical text and command line use for its posterior ("posterior" or
/// "inference"); "posterior" for an unknown model.
const std::string& posterior_key(const std::string& model);

/// The entry of (model, posterior), `posterior` a name or an alias; empty `posterior` names the
/// model's default posterior (RegistryEntry::default_posterior) or the model without posteriors.
/// nullptr when there is none.
const RegistryEntry* find_entry(const std::string& model, const std::string& posterior) noexcept;
/// The same, or ConfigError naming the known models or the model's posteriors. Without
/// `allow_default`, a model with posteriors needs one named (run specs and grids: the hash).
const RegistryEntry& entry(const std::string& model, const std::string& posterior,
                           bool allow_default = true);

/// The posterior a spec names: `posterior`, or `inference` when that is empty and the model spells
/// its posterior "inference" (dgp); ConfigError when both are set and differ.
std::string posterior_of(const ModelSpec& spec);

/// A model with its posterior and kernel as a user types them, e.g. "dgp --inference dsvi",
/// "dgp --inference global-inducing --kernel relu" (the kernel when the entry takes several).
std::string entry_label(const RegistryEntry& e, const std::string& kernel = "");

/// Whether `e` accepts option `option` with `kernel` (and, when given, with the value `value`).
bool accepts(const RegistryEntry& e, const std::string& option, const std::string& kernel,
             const std::string& value = "");
/// Whether `e` accepts `option` at all (any kernel, any value): the canonical text writes the
/// option for the entry's specs (experiments/run_spec.hpp).
bool takes_option(const RegistryEntry& e, const std::string& option);

/// Throws ConfigError when `depth` breaks the entry's depth rule.
void check_depth(const RegistryEntry& e, size_t depth);

/// The generic option check: every option `spec` sets must be positive and finite if a number,
/// and listed by `e` (with the spec's kernel and that value); otherwise ConfigError naming the
/// option and the models that take it.
void check_options(const RegistryEntry& e, const ModelSpec& spec);

/// Every rule of the registry on a spec: a known model and posterior, the depth rule, a kernel the
/// entry takes, its options (check_options), and classification only where the entry classifies.
/// Returns the entry.
const RegistryEntry& check_spec(const ModelSpec& spec);

/// Whether the entry of `spec` (model, posterior, kernel) classifies; false for an unknown one.
bool entry_classifies(const ModelSpec& spec);
/// The models that classify, as text: "sgp and dgp --inference dsvi or aep (robust-max), ...".
std::string classifiers_text();

/// The registry as help text: every model and posterior with its kernels, tasks, depth rule and
/// options, then every option with the models that take it (for `dkp run --help`).
std::string registry_help();

}  // namespace dkp::models
