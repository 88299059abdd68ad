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
  /// diwp: initial delta of every inverse Wishart layer.
  double delta_init = kDiwpDeltaInit;
  /// diwp: train/test points' dof delta + P + B + 1 with B the batch size, as bayesfunc does
  /// (DiwpConfig::reference_batch_dof), instead of delta + P + 2.
  bool diwp_batch_dof = false;
  /// diwp: Q(Omega)'s V_1 V_1^T without the / N0 (DiwpConfig::omega_v_paper).
  bool diwp_omega_v_paper = false;
  /// dwp: sticking the landing for the Bartlett parameters (DwpConfig::sticking_the_landing).
  bool sticking_the_landing = true;
  /// dwp agw / abgw: sticking the landing for A' and B too (DwpConfig::stl_mixing).
  bool stl_mixing = false;
  /// dwp agw / abgw: DwpConfig::a_prime_scale.
  double a_prime_scale = 1.0;
  /// dwp: DwpConfig::mu_raw (--mu-param bayesfunc).
  bool mu_raw = false;
  /// dgp global-inducing: GiDgpConfig::hidden_ard and GiDgpConfig::per_output_precision.
  bool hidden_ard = false;
  bool per_output_precision = false;
  /// sgp and dgp dsvi: the SE kernels' initial lengthscales and variance (every layer); 0 keeps
  /// the model's (1 and 1, DSVI report section 4). The report's MNIST code starts its ARD DGPs
  /// at 2 and 2 (experiments/dsvi-mnist.yaml).
  double init_lengthscale = 0.0;
  double init_variance = 0.0;
  /// 0: regression; C >= 2: classification over C classes, for the entries that classify with
  /// the spec's kernel (RegistryEntry::classifies_with); the others throw ConfigError.
  size_t classes = 0;
};

/// The model-specific options a ModelSpec can set (beyond model, posterior, depth, kernel, width,
/// inducing and classes). An option is set when it differs from its default; an entry accepts
/// the options it lists (RegistryEntry::options), and check_spec rejects any other that is set.
enum class ModelOption {
  InitLengthscale,  ///< --init-lengthscale: init_lengthscale != 0
  InitVariance,     ///< --init-variance: init_variance != 0
  HiddenArd,        ///< --hidden-ard: hidden_ard
  GiPrecision,      ///< --gi-precision per-output: per_output_precision
  Stl,              ///< --stl off: !sticking_the_landing
  StlMixing,        ///< --stl mixing: stl_mixing
  MuParam,          ///< --mu-param bayesfunc: mu_raw
  APrimeScale,      ///< --a-prime-scale: a_prime_scale != 1
  DeltaInit,        ///< --delta-init: delta_init != kDiwpDeltaInit
  DiwpDof,          ///< --diwp-dof batch: diwp_batch_dof
  DiwpOmegaV,       ///< --diwp-omega-v paper: diwp_omega_v_paper
};

/// An option an entry accepts, with every kernel of the entry or with some only.
struct OptionUse {
  ModelOption option;
  std::vector<std::string> kernels;  ///< empty: every kernel of the entry
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

/// The command-line spelling of an option ("--stl mixing") and a short description.
std::string option_flag(ModelOption option);
std::string option_description(ModelOption option);
/// Whether `spec` sets `option` (differs from its default).
bool option_is_set(ModelOption option, const ModelSpec& spec);
/// Whether `e` accepts `option` with `kernel`.
bool accepts(const RegistryEntry& e, ModelOption option, const std::string& kernel);

/// Throws ConfigError when `depth` breaks the entry's depth rule.
void check_depth(const RegistryEntry& e, size_t depth);

/// The generic option check: every option `spec` sets must be positive and finite if a number,
/// and listed by `e` (with the spec's kernel); otherwise ConfigError naming the option and the
/// models that take it.
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
