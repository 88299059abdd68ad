#include "models/model.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"

#include "util/error.hpp"

namespace dkp::models {

VarMap to_vars(autodiff::Tape& tape, const ParamMap& params, bool with_grad) {
  VarMap vars;
  for (const auto& [name, value] : params) {
    vars.emplace(name, with_grad ? tape.variable(value) : tape.constant(value));
  }
  return vars;
}

autodiff::Var gaussian_ell_sum(const autodiff::Var& y, const autodiff::Var& f_mean,
                               const autodiff::Var& f_var, const autodiff::Var& log_s2,
                               const autodiff::Var& inv_s2) {
  namespace ad = dkp::autodiff;
  const double B = double(y.n_rows());
  const autodiff::Var sq = ad::sum(ad::square(y - f_mean) + f_var);
  return ad::scale(log_s2, -0.5 * B) - ad::scale(ad::mul(inv_s2, sq), 0.5) -
         y.tape().constant(0.5 * B * std::log(2.0 * M_PI));
}

ElboEstimate assemble_elbo(const autodiff::Var& ell_total, const autodiff::Var& logpq_total,
                           double samples, double batch, double n_train, double kl_weight) {
  namespace ad = dkp::autodiff;
  const autodiff::Var ell_mean = ad::scale(ell_total, 1.0 / (samples * batch));
  const autodiff::Var kl = ad::scale(logpq_total, -1.0 / (samples * n_train));
  ElboEstimate e;
  e.elbo = ell_mean - ad::scale(kl, kl_weight);
  e.expected_loglik = ell_mean.scalar();
  e.kl = kl.scalar();
  return e;
}

const autodiff::Var& get(const VarMap& vars, const std::string& name) {
  auto it = vars.find(name);
  if (it == vars.end()) throw Error(fmt::format("model parameter '{}' is missing", name));
  return it->second;
}

}  // namespace dkp::models
