// Named parameter sets: what a model declares, the optimiser updates, checkpoints store and the
// layers read. Values are unconstrained matrices by name; on a tape they become Vars by name.
#pragma once

#include <armadillo>
#include <map>
#include <string>

#include "autodiff/tape.hpp"

namespace dkp::autodiff {

/// Unconstrained parameter values by name (what the optimiser updates and checkpoints store).
using ParamMap = std::map<std::string, arma::mat>;
/// The same parameters as Vars on a tape.
using VarMap = std::map<std::string, Var>;

/// Parameter name of a layer's parameter: "layer{l}.{what}".
std::string layer_key(size_t layer, const char* what);

/// Puts every parameter on `tape` as a variable (with gradient) or as a constant.
VarMap to_vars(Tape& tape, const ParamMap& params, bool with_grad);

/// Looks a parameter up; throws dkp::Error naming it when absent.
const Var& get(const VarMap& vars, const std::string& name);

}  // namespace dkp::autodiff
