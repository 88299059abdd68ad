#include "autodiff/params.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::autodiff {

std::string layer_key(size_t layer, const char* what) {
  return fmt::format("layer{}.{}", layer, what);
}

VarMap to_vars(Tape& tape, const ParamMap& params, bool with_grad) {
  VarMap vars;
  for (const auto& [name, value] : params) {
    vars.emplace(name, with_grad ? tape.variable(value) : tape.constant(value));
  }
  return vars;
}

const Var& get(const VarMap& vars, const std::string& name) {
  auto it = vars.find(name);
  if (it == vars.end()) throw Error(fmt::format("model parameter '{}' is missing", name));
  return it->second;
}

}  // namespace dkp::autodiff
