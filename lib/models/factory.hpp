// Builds a model from its name and options (the `dkp run --model ...` names): the model registry's
// entry of the spec (models/registry.hpp) after the registry's checks.
#pragma once

#include <memory>
#include <string>

#include "models/diwp_defaults.hpp"
#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

/// Whether the model `spec` names can classify (see ModelSpec::classes): its registry entry
/// classifies with the spec's kernel.
bool classifies(const ModelSpec& spec);

/// Throws ConfigError when `spec` names an unknown model or posterior or sets an option its
/// registry entry does not list, or a number option that is not positive and finite
/// (check_options; make_model checks the rest of the registry's rules, check_spec).
void check_model_options(const ModelSpec& spec);

/// Builds and initialises the model from the standardised training data, with the builder of the
/// spec's registry entry after check_spec.
std::unique_ptr<Model> make_model(const ModelSpec& spec, const arma::mat& X_train,
                                  const arma::vec& y_train, random::Stream& init);

}  // namespace dkp::models
