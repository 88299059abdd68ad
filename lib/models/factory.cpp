#include "models/factory.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::models {

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
