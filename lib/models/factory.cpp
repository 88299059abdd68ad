#include "models/factory.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "models/aep_dgp.hpp"
#include "models/diwp.hpp"
#include "models/dsvi_dgp.hpp"
#include "models/dwp.hpp"
#include "models/gi_dgp.hpp"
#include "models/gram_dgp.hpp"
#include "models/nngp.hpp"
#include "models/sgp.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace {

// `--depth` means the number of kernel applications (GP layers including the output layer) for
// every model: DGP-3 is F1 ~ GP(K(X)), F2 ~ GP(K(F1)), f ~ GP(K(F2)), the DKP paper's "three
// layers (two hidden layers and one output layer), with three applications of the kernel"
// (sec. 7), and DWP/DGP depth 2..5 in the Wishart papers. The Gram-kernel models (gram_model.hpp)
// number the input Gram as layer 1 as well, so their own depth is one more.
size_t gram_model_depth(size_t depth) {
  if (depth < 1) throw ConfigError("depth must be at least 1");
  return depth + 1;
}

}  // namespace

bool parse_gi_precision(const std::string& gi_precision) {
  if (gi_precision != "shared" && gi_precision != "per-output") {
    throw ConfigError(
        fmt::format("--gi-precision must be shared or per-output (got '{}')", gi_precision));
  }
  return gi_precision == "per-output";
}

void set_stl(ModelSpec& spec, const std::string& stl) {
  if (stl != "on" && stl != "off" && stl != "mixing") {
    throw ConfigError(fmt::format("--stl must be on, off or mixing (got '{}')", stl));
  }
  spec.sticking_the_landing = stl != "off";
  spec.stl_mixing = stl == "mixing";
}

bool parse_mu_param(const std::string& mu_param) {
  if (mu_param != "direct" && mu_param != "bayesfunc") {
    throw ConfigError(fmt::format("--mu-param must be direct or bayesfunc (got '{}')", mu_param));
  }
  return mu_param == "bayesfunc";
}

void check_model_options(const ModelSpec& spec) {
  if ((spec.hidden_ard || spec.per_output_precision) &&
      !(spec.model == "dgp" && spec.inference == "global-inducing" && spec.kernel == "se")) {
    throw ConfigError(
        "--hidden-ard and --gi-precision apply to dgp with inference global-inducing only "
        "(kernel se)");
  }
  if ((!spec.sticking_the_landing || spec.stl_mixing) && spec.model != "dwp") {
    throw ConfigError(fmt::format(
        "model {} has no sticking-the-landing option (--stl); only dwp does", spec.model));
  }
  if (spec.mu_raw && spec.model != "dwp") {
    throw ConfigError(
        fmt::format("model {} has no Bartlett means (--mu-param); only dwp does", spec.model));
  }
  const bool svgp_model = spec.model == "sgp" || (spec.model == "dgp" && spec.inference == "dsvi");
  for (const auto& [value, flag] : {std::pair{spec.init_lengthscale, "--init-lengthscale"},
                                    std::pair{spec.init_variance, "--init-variance"}}) {
    if (value == 0.0) continue;
    if (!(value > 0.0) || !std::isfinite(value)) {
      throw ConfigError(fmt::format("{} must be positive and finite (got {})", flag, value));
    }
    if (!svgp_model) {
      throw ConfigError(fmt::format(
          "{} applies to sgp and dgp --inference dsvi only (their SE kernels' initial value)",
          flag));
    }
  }
  if (spec.stl_mixing && spec.posterior != "agw" && spec.posterior != "abgw") {
    throw ConfigError(
        "--stl mixing is for the dwp's agw and abgw posteriors (A' and B): the gw has neither; "
        "use agw or abgw");
  }
}

bool classifies(const ModelSpec& spec) {
  return spec.model == "sgp" || spec.model == "nngp" || spec.model == "diwp" ||
         (spec.model == "dgp" && (spec.inference == "dsvi" || spec.inference == "aep" ||
                                  (spec.inference == "global-inducing" && spec.kernel == "relu")));
}

namespace {

// A Gram model's classification settings: C classes, and (DKP paper section 7) no learned input
// scale and bias for the image datasets.
void set_classes(GramModelConfig& cfg, size_t classes) {
  cfg.classes = classes;
  cfg.input_scale_bias = classes == 0;
}

}  // namespace

std::unique_ptr<Model> make_model(const ModelSpec& spec, const arma::mat& X_train,
                                  const arma::vec& y_train, random::Stream& init) {
  check_model_options(spec);
  if (spec.classes > 0 && !classifies(spec)) {
    throw ConfigError(fmt::format(
        "classification ({} classes) is available for sgp, dgp --inference dsvi or aep "
        "(robust-max), "
        "nngp, diwp and dgp --inference global-inducing --kernel relu (softmax); not for {}{}",
        spec.classes, spec.model,
        spec.inference.empty() ? ""
                               : " --inference " + spec.inference + " --kernel " + spec.kernel));
  }
  if (spec.model == "dgp" && spec.inference == "global-inducing" && spec.kernel == "relu") {
    // The DKP paper's DGP baseline: GP layers on Gram kernels after the learned per-feature
    // scale and bias input layer (models/gram_dgp.hpp). SE stays with GiDgp below: SE on
    // X diag(exp(s)) + b with a per-feature scale is the same model as ARD SE on X (the bias
    // cancels in a stationary kernel).
    GramDgpConfig cfg;
    cfg.depth = gram_model_depth(spec.depth);
    cfg.kernel = spec.kernel;
    cfg.width = spec.width;
    cfg.inducing = spec.inducing;
    set_classes(cfg, spec.classes);
    return std::make_unique<GramDgp>(cfg, X_train, y_train, init);
  }
  if (spec.model == "dgp" && spec.inference == "global-inducing") {
    if (spec.kernel != "se") {
      throw ConfigError(fmt::format("dgp: kernel '{}' is not available (se only)", spec.kernel));
    }
    GiDgpConfig cfg;
    cfg.depth = spec.depth;
    cfg.width = spec.width;
    cfg.inducing = spec.inducing;
    cfg.hidden_ard = spec.hidden_ard;
    cfg.per_output_precision = spec.per_output_precision;
    return std::make_unique<GiDgp>(cfg, X_train, y_train, init);
  }
  if (spec.model == "sgp" || (spec.model == "dgp" && spec.inference == "dsvi")) {
    if (spec.kernel != "se") {
      throw ConfigError(
          fmt::format("{}: kernel '{}' is not available (se only)", spec.model, spec.kernel));
    }
    if (spec.model == "sgp") {
      if (spec.depth != 1) {
        throw ConfigError(
            fmt::format("sgp: depth must be 1 (got {}); use --model dgp", spec.depth));
      }
      SgpConfig cfg;
      cfg.num_inducing = spec.inducing;
      cfg.num_classes = spec.classes;
      if (spec.init_lengthscale > 0.0) cfg.lengthscale = spec.init_lengthscale;
      if (spec.init_variance > 0.0) cfg.variance = spec.init_variance;
      return std::make_unique<SgpModel>(cfg, X_train, init);
    }
    DsviConfig cfg;
    cfg.depth = spec.depth;
    cfg.num_inducing = spec.inducing;
    cfg.hidden_width = spec.width;
    cfg.num_classes = spec.classes;
    if (spec.init_lengthscale > 0.0) cfg.lengthscale = spec.init_lengthscale;
    if (spec.init_variance > 0.0) cfg.variance = spec.init_variance;
    return std::make_unique<DsviDgp>(cfg, X_train, init);
  }
  if (spec.model == "dgp" && spec.inference == "aep") {
    if (spec.kernel != "se") {
      throw ConfigError(
          fmt::format("dgp aep: kernel '{}' is not available (se only)", spec.kernel));
    }
    AepConfig cfg;
    cfg.depth = spec.depth;
    cfg.num_inducing = spec.inducing;
    if (spec.width > 0) cfg.hidden_width = spec.width;  // else the report's 2
    cfg.num_classes = spec.classes;
    return std::make_unique<AepDgp>(cfg, X_train, init);
  }
  if (spec.model == "dgp") {
    throw ConfigError(
        fmt::format("dgp: unknown inference '{}' (dsvi, global-inducing, aep)", spec.inference));
  }
  if (spec.model == "dwp") {
    if (spec.kernel != "se") {
      throw ConfigError(fmt::format("dwp: kernel '{}' is not available (se only)", spec.kernel));
    }
    DwpConfig cfg;
    cfg.depth = spec.depth;
    cfg.width = spec.width;
    cfg.inducing = spec.inducing;
    cfg.posterior = layers::parse_wishart_posterior(spec.posterior);  // empty -> gw
    cfg.sticking_the_landing = spec.sticking_the_landing;
    cfg.stl_mixing = spec.stl_mixing;  // checked by check_model_options
    cfg.mu_raw = spec.mu_raw;
    if (!(spec.a_prime_scale > 0.0) || !std::isfinite(spec.a_prime_scale)) {
      throw ConfigError(fmt::format("dwp: A' scale must be positive (got {})", spec.a_prime_scale));
    }
    cfg.a_prime_scale = spec.a_prime_scale;
    return std::make_unique<Dwp>(cfg, X_train, y_train, init);
  }
  if (spec.model == "nngp" || spec.model == "diwp") {
    if (spec.kernel != "relu" && spec.kernel != "se") {
      throw ConfigError(
          fmt::format("{}: kernel '{}' is not available (relu, se)", spec.model, spec.kernel));
    }
    DiwpConfig cfg;
    cfg.depth = gram_model_depth(spec.depth);
    cfg.kernel = spec.kernel;
    cfg.inducing = spec.inducing;
    set_classes(cfg, spec.classes);
    if (!(spec.delta_init > 0.0) || !std::isfinite(spec.delta_init)) {
      throw ConfigError(
          fmt::format("diwp: initial delta must be positive (got {})", spec.delta_init));
    }
    cfg.delta_init = spec.delta_init;
    cfg.reference_batch_dof = spec.diwp_batch_dof;
    if (spec.model == "nngp") {
      return std::make_unique<Nngp>(static_cast<const GramModelConfig&>(cfg), X_train, y_train,
                                    init);
    }
    return std::make_unique<Diwp>(cfg, X_train, y_train, init);
  }
  throw ConfigError(fmt::format("unknown model '{}' (sgp, dgp, nngp, diwp, dwp)", spec.model));
}

}  // namespace dkp::models
