// Model options, declared once: each option of a model beyond its axes (model, posterior, depth,
// kernel, width, inducing) is one row of option_table() (options.cpp) with its name, type,
// default, allowed values or range, help and place in the configuration hash. Everything that
// reads or writes options takes it from there: `dkp run` / `dkp bench model` flags and their
// help, the grids' `options:` keys, the run specs' canonical text and hash, validation, and the
// value a model's builder reads (OptionValues). Which models take an option is said by their
// registry entries (RegistryEntry::options, models/registry.hpp).
//
// A new option: a row in option_table(), a name constant below, the entries that take it (their
// *_entries() function) and the builder that reads it.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dkp::models {

/// The options' names: the grid key and the canonical text's key; the command-line flag is the
/// name with dashes (OptionDecl::flag).
namespace opt {
inline constexpr const char* kInitLengthscale = "init_lengthscale";
inline constexpr const char* kInitVariance = "init_variance";
inline constexpr const char* kHiddenArd = "hidden_ard";
inline constexpr const char* kGiPrecision = "gi_precision";
inline constexpr const char* kStl = "stl";
inline constexpr const char* kMuParam = "mu_param";
inline constexpr const char* kAPrimeScale = "a_prime_scale";
inline constexpr const char* kFreezeAPrime = "freeze_a_prime";
inline constexpr const char* kWhiten = "whiten";
inline constexpr const char* kQSqrtDiag = "q_sqrt_diag";
inline constexpr const char* kMeanFunction = "mean_function";
inline constexpr const char* kDiwpVScale = "diwp_v_scale";
inline constexpr const char* kGwUntil = "gw_until";
inline constexpr const char* kMfUntil = "mf_until";
inline constexpr const char* kMarginalise = "marginalise";
inline constexpr const char* kAPrimeForm = "a_prime_form";
inline constexpr const char* kDeltaInit = "delta_init";
inline constexpr const char* kDiwpDof = "diwp_dof";
inline constexpr const char* kDiwpOmegaV = "diwp_omega_v";
inline constexpr const char* kOutputScale = "output_scale";
/// How a regression split is standardised (read by experiments::load_run_data, not a builder).
inline constexpr const char* kStandardise = "standardise";
}  // namespace opt

enum class OptionType {
  Switch,  ///< off (the default, always) | on; a flag without a value on the command line
           ///< (--hidden-ard)
  Number,  ///< a real number, positive and finite unless it is the default
  Choice,  ///< one of `choices`
};

/// One model option.
struct OptionDecl {
  std::string name;  ///< snake_case (opt::k...)
  OptionType type = OptionType::Choice;
  /// The default's canonical text (number_text for numbers).
  std::string default_value;
  /// Choice: the allowed values; Switch: {"off", "on"}.
  std::vector<std::string> choices;
  /// A short phrase for messages ("the initial scale of A'").
  std::string summary;
  /// The help text of its flag.
  std::string help;
  /// The value the canonical text leaves out; another value is written as `name=value`. The
  /// default, but for delta_init (1: the DIWP's first default, so that cells computed at 1 keep
  /// their hashes and are never taken for cells at today's default).
  std::string hash_baseline;
  /// Whether the option changes the work of a step (the estimate's calibration key).
  bool changes_cost = true;
  /// --name-with-dashes
  std::string flag() const;
};

/// Every option, in the order the canonical text writes them.
const std::vector<OptionDecl>& option_table();
/// The declaration of `name`, or nullptr.
const OptionDecl* find_option(const std::string& name) noexcept;
/// The declaration of `name`; std::logic_error when there is none (a programming error).
const OptionDecl& option_decl(const std::string& name);
/// The option names, in table order.
std::vector<std::string> option_names();

/// A number's canonical text: the shortest text that reads back as the same double ("0.1", "2",
/// "54.598150033144236").
std::string number_text(double v);

/// The canonical text of `text` as a value of option `d`, or ConfigError naming the option and
/// what it takes (`where` prefixes the message: a flag, a file:line or a grid key). Switches take
/// on/off/true/false, numbers any real number text (range checked by check_value), choices their
/// choices.
std::string canonical_value(const OptionDecl& d, const std::string& text, const std::string& where);

/// Throws ConfigError when a number option's value is set (not its default) but not positive and
/// finite.
void check_value(const OptionDecl& d, const std::string& value);

/// The options of one model: option name -> canonical text. An option not in the map has its
/// default. Typed reads check the name and type (std::logic_error: a programming error).
class OptionValues {
 public:
  /// Sets `name` to `text` (canonical_value; ConfigError with `where` when it is not a value of
  /// the option, or names no option). Setting the default removes the entry.
  void set(const std::string& name, const std::string& text, const std::string& where = "");
  void set_number(const std::string& name, double v);
  void set_switch(const std::string& name, bool on);
  /// Back to the default.
  void reset(const std::string& name);
  /// The canonical text of the value (the default when unset).
  std::string text(const std::string& name) const;
  /// Whether the value differs from the default.
  bool is_set(const std::string& name) const;
  bool on(const std::string& name) const;        ///< a Switch
  double number(const std::string& name) const;  ///< a Number
  /// A Number that counts training steps: ConfigError naming the flag unless it is whole.
  size_t steps(const std::string& name) const;
  std::string choice(const std::string& name) const;  ///< a Choice
  /// The options that differ from their defaults, name -> canonical text.
  const std::map<std::string, std::string>& set_values() const { return values_; }
  bool operator==(const OptionValues&) const = default;

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace dkp::models
