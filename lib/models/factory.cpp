#include "models/factory.hpp"

#include <fmt/format.h>

#include "models/diwp.hpp"
#include "models/dsvi_dgp.hpp"
#include "models/dwp.hpp"
#include "models/gi_dgp.hpp"
#include "models/gram_dgp.hpp"
#include "models/nngp.hpp"
#include "models/sgp.hpp"
#include "util/error.hpp"

namespace dkp::models {

std::unique_ptr<Model> make_model(const ModelSpec& spec, const arma::mat& X_train,
                                  const arma::vec& y_train, random::Stream& init) {
  if (spec.model == "dgp" && spec.inference == "global-inducing" && spec.kernel == "relu") {
    // The DKP paper's DGP baseline: GP layers on Gram kernels after the learned per-feature
    // scale and bias input layer (models/gram_dgp.hpp). SE stays with GiDgp below: SE on
    // X diag(exp(s)) + b with a per-feature scale is the same model as ARD SE on X (the bias
    // cancels in a stationary kernel). Note the depth conventions differ: GiDgp counts GP layers
    // (depth D = D GP layers), GramDgp counts the input Gram as layer 1 like the NNGP and DIWP
    // (depth D = D - 1 GP layers), so GiDgp at depth D matches GramDgp(se) at depth D + 1.
    GramDgpConfig cfg;
    cfg.depth = spec.depth;
    cfg.kernel = spec.kernel;
    cfg.width = spec.width;
    cfg.inducing = spec.inducing;
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
      return std::make_unique<SgpModel>(cfg, X_train, init);
    }
    DsviConfig cfg;
    cfg.depth = spec.depth;
    cfg.num_inducing = spec.inducing;
    cfg.hidden_width = spec.width;
    return std::make_unique<DsviDgp>(cfg, X_train, init);
  }
  if (spec.model == "dgp") {
    throw ConfigError(
        fmt::format("dgp: unknown inference '{}' (dsvi, global-inducing)", spec.inference));
  }
  if (spec.model == "dwp") {
    if (spec.kernel != "se") {
      throw ConfigError(fmt::format("dwp: kernel '{}' is not available (se only)", spec.kernel));
    }
    DwpConfig cfg;
    cfg.depth = spec.depth;
    cfg.width = spec.width;
    cfg.inducing = spec.inducing;
    cfg.posterior = parse_dwp_posterior(spec.posterior);  // empty -> gw
    return std::make_unique<Dwp>(cfg, X_train, y_train, init);
  }
  if (spec.model == "nngp" || spec.model == "diwp") {
    if (spec.kernel != "relu" && spec.kernel != "se") {
      throw ConfigError(
          fmt::format("{}: kernel '{}' is not available (relu, se)", spec.model, spec.kernel));
    }
    DiwpConfig cfg;
    cfg.depth = spec.depth;
    cfg.kernel = spec.kernel;
    cfg.inducing = spec.inducing;
    if (spec.model == "nngp") {
      return std::make_unique<Nngp>(static_cast<const GramModelConfig&>(cfg), X_train, y_train,
                                    init);
    }
    return std::make_unique<Diwp>(cfg, X_train, y_train, init);
  }
  throw ConfigError(fmt::format("unknown model '{}' (sgp, dgp, nngp, diwp, dwp)", spec.model));
}

}  // namespace dkp::models
