#include "models/model.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "autodiff/ops.hpp"

#include "util/error.hpp"

namespace dkp::models {

autodiff::Var gaussian_ell_sum(const autodiff::Var& y, const autodiff::Var& f_mean,
                               const autodiff::Var& f_var, const autodiff::Var& log_s2,
                               const autodiff::Var& inv_s2) {
  namespace ad = dkp::autodiff;
  const double B = double(y.n_rows());
  const autodiff::Var sq = ad::sum(ad::square(y - f_mean) + f_var);
  return ad::scale(log_s2, -0.5 * B) - ad::scale(ad::mul(inv_s2, sq), 0.5) -
         y.tape().constant(0.5 * B * std::log(2.0 * M_PI));
}

size_t inducing_points(const Model& model) {
  const ParamMap& p = model.initial_parameters();
  if (const auto it = p.find("inducing_inputs"); it != p.end()) return it->second.n_rows;
  for (const auto& [name, value] : p) {
    if (name == "Z" || (name.size() > 2 && name.compare(name.size() - 2, 2, ".Z") == 0))
      return value.n_rows;
  }
  return 0;
}

arma::uvec init_inducing_inputs(const char* model, const arma::mat& X, const arma::vec& y,
                                size_t inducing, random::Stream& init, ParamMap& params) {
  if (X.n_rows != y.n_elem || X.n_rows < 2 || X.n_cols < 1) {
    throw ConfigError(fmt::format("{}: {} training inputs ({} features) and {} targets", model,
                                  X.n_rows, X.n_cols, y.n_elem));
  }
  if (inducing < 1) throw ConfigError(fmt::format("{}: needs at least 1 inducing point", model));
  if (inducing > X.n_rows) {
    spdlog::warn(
        "{}: {} inducing points requested but the training set has only {} points; using all of "
        "them as inducing inputs (M = {})",
        model, inducing, X.n_rows, X.n_rows);
  }
  const arma::uvec pick =
      random::permutation(init, X.n_rows).head(std::min<arma::uword>(inducing, X.n_rows));
  params["inducing_inputs"] = X.rows(pick);
  return pick;
}

ElboEstimate elbo_estimate(const autodiff::Var& ell, const autodiff::Var& kl, double kl_weight) {
  ElboEstimate e;
  e.elbo = autodiff::sub(ell, autodiff::scale(kl, kl_weight));
  e.expected_loglik = ell.scalar();
  e.kl = kl.scalar();
  return e;
}

ElboEstimate assemble_elbo(const autodiff::Var& ell_total, const autodiff::Var& logpq_total,
                           double samples, double batch, double n_train, double kl_weight) {
  namespace ad = dkp::autodiff;
  const autodiff::Var ell_mean = ad::scale(ell_total, 1.0 / (samples * batch));
  const autodiff::Var kl = ad::scale(logpq_total, -1.0 / (samples * n_train));
  return elbo_estimate(ell_mean, kl, kl_weight);
}

std::string hidden_csv(const Predictive& pred) {
  if (pred.hidden.empty() || pred.hidden_kind == HiddenKind::None) {
    throw Error(
        "hidden_csv: no hidden-layer samples (a model without hidden layers, or predict() "
        "called without keep_hidden)");
  }
  const arma::uword N = pred.mean.n_rows;
  arma::uword cols = 0;
  for (size_t s = 0; s < pred.hidden.size(); ++s) {
    if (pred.hidden[s].size() != pred.hidden[0].size()) {
      throw Error(fmt::format("hidden_csv: sample {} has {} hidden layers, sample 0 {}", s,
                              pred.hidden[s].size(), pred.hidden[0].size()));
    }
    for (size_t l = 0; l < pred.hidden[s].size(); ++l) {
      const arma::mat& H = pred.hidden[s][l];
      if (H.n_rows != N) {
        throw Error(fmt::format("hidden_csv: sample {} layer {} has {} rows for {} points", s,
                                l + 1, H.n_rows, N));
      }
      cols = std::max(cols, H.n_cols);
    }
  }
  const bool gram = pred.hidden_kind == HiddenKind::Gram;
  if (gram && cols == 0) throw Error("hidden_csv: Gram rows without the g_tt column");
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "sample,layer,index");
  for (arma::uword c = 0; c < cols; ++c) {
    if (gram && c == 0)
      fmt::format_to(std::back_inserter(out), ",g_tt");
    else if (gram)
      fmt::format_to(std::back_inserter(out), ",g_{}", c);
    else
      fmt::format_to(std::back_inserter(out), ",f{}", c + 1);
  }
  out.push_back('\n');
  for (size_t s = 0; s < pred.hidden.size(); ++s) {
    for (size_t l = 0; l < pred.hidden[s].size(); ++l) {
      const arma::mat& H = pred.hidden[s][l];
      for (arma::uword i = 0; i < N; ++i) {
        fmt::format_to(std::back_inserter(out), "{},{},{}", s, l + 1, i);
        for (arma::uword c = 0; c < cols; ++c) {
          if (c < H.n_cols)
            fmt::format_to(std::back_inserter(out), ",{:.17g}", H(i, c));
          else
            out.push_back(',');
        }
        out.push_back('\n');
      }
    }
  }
  return fmt::to_string(out);
}

}  // namespace dkp::models
