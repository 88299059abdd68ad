#include "models/options.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "models/diwp_defaults.hpp"
#include "util/error.hpp"
#include "util/parse.hpp"

namespace dkp::models {

namespace {

OptionDecl make(const char* name, OptionType type, std::string default_value,
                std::vector<std::string> choices, std::string summary, std::string help,
                bool changes_cost = true, std::string hash_baseline = "") {
  OptionDecl d;
  d.name = name;
  d.type = type;
  d.default_value = std::move(default_value);
  d.choices =
      type == OptionType::Switch ? std::vector<std::string>{"off", "on"} : std::move(choices);
  d.summary = std::move(summary);
  d.help = std::move(help);
  d.hash_baseline = hash_baseline.empty() ? d.default_value : std::move(hash_baseline);
  d.changes_cost = changes_cost;
  return d;
}

std::string choices_text(const OptionDecl& d) {
  std::string out;
  for (size_t i = 0; i < d.choices.size(); ++i) {
    if (i > 0) out += i + 1 == d.choices.size() ? " or " : ", ";
    out += d.choices[i];
  }
  return out;
}

}  // namespace

std::string OptionDecl::flag() const {
  std::string f = "--";
  for (char c : name) f.push_back(c == '_' ? '-' : c);
  return f;
}

const std::vector<OptionDecl>& option_table() {
  using T = OptionType;
  static const std::vector<OptionDecl> table = [] {
    std::vector<OptionDecl> t = {
        make(opt::kDeltaInit, T::Number, number_text(kDiwpDeltaInit), {},
             "the inverse Wishart layers' initial delta",
             "diwp: initial delta of every inverse Wishart layer (default e^4; 1 collapses the SE "
             "DIWP)",
             false, "1"),
        make(opt::kDiwpDof, T::Choice, "point", {"point", "batch"},
             "the train/test points' degrees of freedom",
             "diwp: dof of each train/test point's conditional: point (delta + P + 2, appendix I) "
             "| batch (delta + P + B + 1, B the batch size, as bayesfunc)"),
        make(opt::kDiwpOmegaV, T::Choice, "n0", {"n0", "paper"},
             "the scaling of the input layer's V V^T",
             "diwp: the input layer's Q(Omega) = IW(delta I + V V^T / N0) (n0) | IW(delta I + V "
             "V^T) (paper: eq. 96, bayesfunc's SingularIWLayer)"),
        make(opt::kDiwpVScale, T::Choice, "fixed", {"fixed", "learned"},
             "the scale of V V^T in Q's IW scale",
             "diwp: Q = IW(delta K + s V V^T / P, ...) with s fixed at 1 (fixed) | s = exp(t) "
             "learned, t from 0, in every inverse Wishart layer (learned: bayesfunc's IWLayer "
             "log_diag; the same family, another path for Adam: s can follow delta)",
             false),
        make(opt::kWhiten, T::Choice, "on", {"on", "off"}, "whitened q(u)",
             "dgp dsvi: q(u) of the whitened u = L_K^-1 f(Z) (on: the 2017 paper code) | of f(Z) "
             "itself (off: the 2018 code and the DSVI report's own code)",
             false),
        make(opt::kQSqrtDiag, T::Choice, "softplus", {"softplus", "unconstrained"},
             "how q(u)'s Cholesky diagonal is stored",
             "dgp dsvi: the diagonal of q(u)'s Cholesky factors through softplus (positive; from "
             "the inner layers' 1e-5 it takes about a thousand steps to reach order one) | "
             "unconstrained, of either sign (GPflow's; about a hundred steps)",
             false),
        make(opt::kMeanFunction, T::Choice, "linear", {"linear", "zero"},
             "the inner layers' mean functions",
             "dgp aep: the inner layers' mean functions x^T W (linear: the DSVI report's section "
             "3.2) | none (zero: geepee's SDGPR, whose runs are the report's AEP-2 numbers)",
             false),
        make(opt::kOutputScale, T::Choice, "fixed", {"fixed", "learned"},
             "the output layer's kernel scale",
             "nngp, diwp, dgp global-inducing, kernel relu: the output layer's kernel K(G_L) as "
             "it is (fixed: the paper's; its prior variance is set by the Gram) | times a learned "
             "scale exp(s), s from 0 (learned)",
             false),
        make(opt::kStl, T::Choice, "on", {"on", "off", "mixing"}, "sticking the landing in log Q",
             "dwp: sticking the landing in log Q: on (the Bartlett parameters alpha, beta, mu, "
             "sigma, as the GW paper's appendix F) | off | mixing (agw, abgw: A' and B as well)"),
        make(opt::kAPrimeScale, T::Number, "1", {}, "the scale of A''s parameter",
             "dwp agw, abgw: A' = c Phi with Phi the optimised parameter (init I / c), so Adam's "
             "steps on A' are c times the learning rate",
             false),
        make(opt::kFreezeAPrime, T::Switch, "off", {}, "A' held at I (not learned)",
             "dwp agw, abgw: hold A' at I instead of learning it, so the A-GW is the GW (a "
             "check of the A-GW's density and sampling against the GW's)"),
        make(opt::kGwUntil, T::Number, "0", {}, "steps for which A' (and B) are held at I",
             "dwp agw, abgw: A' (and the AB-GW's B) held at I for this many steps, so that the "
             "run is the GW until then and the larger family trains on from the GW's parameters "
             "(a whole number; 0: learned from the first step)",
             false),
        make(opt::kMfUntil, T::Number, "0", {}, "steps for which the posterior is mean field",
             "cdgp jointly-gaussian: the cross-layer blocks of q's Cholesky factor held at 0 for "
             "this many steps, so that the run is mean field until then (u sampled, not "
             "integrated out) and the jointly Gaussian posterior trains on from the point it "
             "reached (a whole number; 0: learned from the first step)",
             false),
        make(opt::kMarginalise, T::Choice, "sample", {"sample", "analytic"},
             "how the inducing outputs leave the expected log-likelihood",
             "cdgp jointly-gaussian: the inducing outputs of all layers sampled with every draw "
             "(the paper's Sec. 4.1, \"Sampling\") | integrated out analytically, each layer's "
             "q(u_l) conditioned on the layers drawn before it (its eqs. 15-17, with the full "
             "cross-layer covariance)"),
        make(opt::kAPrimeForm, T::Choice, "full", {"full", "unit-lower"}, "the form of A'",
             "dwp agw, abgw: A' a full matrix (the AGW paper's) | I plus a strictly "
             "lower-triangular part (det A' = 1, so that A' shares no scale with the Bartlett "
             "factor T)",
             false),
        make(opt::kMuParam, T::Choice, "direct", {"direct", "bayesfunc"},
             "the Bartlett means' parameterisation",
             "dwp: the Bartlett means' parameter: direct (mu itself) | bayesfunc (mu = mu_raw / "
             "sqrt(m), m = min(P, nu), as bayesfunc's WishartLayer, so Adam's steps on mu are lr "
             "/ sqrt(m))",
             false),
        make(opt::kHiddenArd, T::Switch, "off", {}, "ARD lengthscales in every layer",
             "dgp global-inducing: ARD lengthscales in every layer, not only the first (changes "
             "the prior; the DWP papers' DGP has one lengthscale per hidden layer)"),
        make(opt::kGiPrecision, T::Choice, "shared", {"shared", "per-output"},
             "the pseudo-likelihood precision shared by a layer's outputs or one per output",
             "dgp global-inducing: the pseudo-likelihood precision of a layer's q(U): shared by "
             "its output columns (bayesfunc) | per-output (one per column)"),
        make(opt::kInitLengthscale, T::Number, "0", {}, "the SE kernels' initial lengthscales",
             "sgp, dgp dsvi: initial lengthscale of every SE kernel (0: the model's, 1; the DSVI "
             "report's MNIST code: 2)",
             false),
        make(opt::kInitVariance, T::Number, "0", {}, "the SE kernels' initial variance",
             "sgp, dgp dsvi: initial variance of every SE kernel (0: the model's, 1; the DSVI "
             "report's MNIST code: 2)",
             false),
        make(opt::kStandardise, T::Choice, "train", {"train", "test-sd"},
             "how the split's inputs and targets are standardised",
             "sgp, dgp dsvi: minus the training mean, over the training standard deviation "
             "(train) | over the test set's population standard deviation plus 1e-6 (test-sd: "
             "the DSVI report's code; a feature constant on the test set is divided by 1e-6)",
             false),
    };
    return t;
  }();
  return table;
}

const OptionDecl* find_option(const std::string& name) noexcept {
  for (const auto& d : option_table())
    if (d.name == name) return &d;
  return nullptr;
}

const OptionDecl& option_decl(const std::string& name) {
  if (const auto* d = find_option(name)) return *d;
  throw std::logic_error("no model option named '" + name + "' in option_table()");
}

std::vector<std::string> option_names() {
  std::vector<std::string> names;
  for (const auto& d : option_table()) names.push_back(d.name);
  return names;
}

std::string number_text(double v) {
  return fmt::format("{}", v);
}

std::string canonical_value(const OptionDecl& d, const std::string& text,
                            const std::string& where) {
  const std::string at = where.empty() ? d.flag() : where;
  switch (d.type) {
    case OptionType::Switch:
      if (text == "on" || text == "true") return "on";
      if (text == "off" || text == "false") return "off";
      throw ConfigError(fmt::format("{}: '{}' is not on or off ({})", at, text, d.summary));
    case OptionType::Number: {
      const auto v = util::parse_double(text);
      if (!v || !std::isfinite(*v)) {
        throw ConfigError(fmt::format("{}: '{}' is not a number ({})", at, text, d.summary));
      }
      return number_text(*v);
    }
    case OptionType::Choice:
      if (std::find(d.choices.begin(), d.choices.end(), text) != d.choices.end()) return text;
      throw ConfigError(fmt::format("{} must be {} (got '{}')", at, choices_text(d), text));
  }
  return text;
}

void check_value(const OptionDecl& d, const std::string& value) {
  if (d.type != OptionType::Number || value == d.default_value) return;
  const double v = *util::parse_double(value);
  if (!(v > 0.0) || !std::isfinite(v)) {
    throw ConfigError(fmt::format("{} must be positive and finite (got {})", d.flag(), value));
  }
}

void OptionValues::set(const std::string& name, const std::string& text, const std::string& where) {
  const OptionDecl* d = find_option(name);
  if (!d) {
    std::string names;
    for (const auto& n : option_names()) {
      if (!names.empty()) names += ", ";
      names += n;
    }
    throw ConfigError(fmt::format("{}: no model option '{}' (options: {})",
                                  where.empty() ? "option" : where, name, names));
  }
  const std::string v = canonical_value(*d, text, where);
  if (v == d->default_value)
    values_.erase(name);
  else
    values_[name] = v;
}

void OptionValues::set_number(const std::string& name, double v) {
  set(name, number_text(v));
}

void OptionValues::set_switch(const std::string& name, bool on) {
  set(name, on ? "on" : "off");
}

void OptionValues::reset(const std::string& name) {
  option_decl(name);
  values_.erase(name);
}

std::string OptionValues::text(const std::string& name) const {
  const OptionDecl& d = option_decl(name);
  const auto it = values_.find(name);
  return it == values_.end() ? d.default_value : it->second;
}

bool OptionValues::is_set(const std::string& name) const {
  option_decl(name);
  return values_.count(name) > 0;
}

namespace {
void expect(const std::string& name, OptionType type) {
  if (option_decl(name).type != type) {
    throw std::logic_error("model option '" + name + "' read as another type");
  }
}
}  // namespace

bool OptionValues::on(const std::string& name) const {
  expect(name, OptionType::Switch);
  return text(name) == "on";
}

double OptionValues::number(const std::string& name) const {
  expect(name, OptionType::Number);
  return *util::parse_double(text(name));
}

size_t OptionValues::steps(const std::string& name) const {
  const double v = number(name);
  if (v != std::floor(v) || v > 1e15) {
    throw ConfigError(fmt::format("{} must be a whole number of steps (got {})",
                                  option_decl(name).flag(), text(name)));
  }
  return size_t(v);
}

std::string OptionValues::choice(const std::string& name) const {
  expect(name, OptionType::Choice);
  return text(name);
}

}  // namespace dkp::models
