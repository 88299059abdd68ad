#include "models/factory.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::models {

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
  check_options(entry(spec.model, posterior_of(spec)), spec);
}

bool classifies(const ModelSpec& spec) {
  return entry_classifies(spec);
}

std::unique_ptr<Model> make_model(const ModelSpec& spec, const arma::mat& X_train,
                                  const arma::vec& y_train, random::Stream& init) {
  const RegistryEntry& e = check_spec(spec);
  ModelSpec resolved = spec;
  resolved.posterior = e.posterior;
  resolved.inference.clear();
  return e.build(resolved, X_train, y_train, init);
}

}  // namespace dkp::models
