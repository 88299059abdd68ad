#include "models/factory.hpp"

#include <fmt/format.h>

#include "models/diwp.hpp"
#include "models/gi_dgp.hpp"
#include "models/nngp.hpp"
#include "util/error.hpp"

namespace dkp::models {

std::unique_ptr<Model> make_model(const ModelSpec& spec, const arma::mat& X_train,
                                  const arma::vec& y_train, random::Stream& init) {
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
    throw NotImplementedError(
        fmt::format("model '{}{}' is not implemented yet (issue 5: SVGP layer, SGP and DSVI DGP)",
                    spec.model, spec.inference.empty() ? "" : " --inference " + spec.inference));
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
  if (spec.model == "nngp" || spec.model == "diwp" || spec.model == "dwp") {
    throw NotImplementedError(fmt::format(
        "model '{}' is not implemented yet (issue 6: deep kernel processes)", spec.model));
  }
  throw ConfigError(fmt::format("unknown model '{}' (sgp, dgp, nngp, diwp, dwp)", spec.model));
}

}  // namespace dkp::models
