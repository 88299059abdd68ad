#include "eval/metrics.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::eval {

arma::vec log_mean_exp_rows(const arma::mat& a) {
  const arma::vec m = arma::max(a, 1);
  arma::mat shifted = a.each_col() - m;
  return m + arma::log(arma::mean(arma::exp(shifted), 1));
}

MixtureMoments mixture_moments(const arma::mat& mean, const arma::mat& var) {
  if (mean.n_rows != var.n_rows || mean.n_cols != var.n_cols || mean.n_cols == 0) {
    throw Error(fmt::format("mixture_moments: mean {}x{}, var {}x{}", mean.n_rows, mean.n_cols,
                            var.n_rows, var.n_cols));
  }
  if (!var.is_finite() || (var.n_elem > 0 && var.min() <= 0.0) || !mean.is_finite()) {
    throw Error("mixture_moments: non-finite predictions or non-positive variances");
  }
  MixtureMoments mm;
  mm.mean = arma::mean(mean, 1);
  mm.var = arma::mean(var + arma::square(mean), 1) - arma::square(mm.mean);
  return mm;
}

RegressionMetrics regression_metrics(const arma::mat& mean, const arma::mat& var,
                                     const arma::vec& y, double y_std) {
  if (mean.n_rows != y.n_elem || var.n_rows != y.n_elem) {
    throw Error(fmt::format("regression_metrics: mean {}x{}, var {}x{}, y {}", mean.n_rows,
                            mean.n_cols, var.n_rows, var.n_cols, y.n_elem));
  }
  MixtureMoments mm = mixture_moments(mean, var);
  arma::mat diff = mean.each_col() - y;
  const arma::mat logp =
      -0.5 * std::log(2.0 * M_PI) - 0.5 * arma::log(var) - 0.5 * arma::square(diff) / var;
  RegressionMetrics m;
  m.point_ll = log_mean_exp_rows(logp) - std::log(y_std);
  m.test_ll = arma::mean(m.point_ll);
  m.pred_mean = std::move(mm.mean);
  m.pred_var = std::move(mm.var);
  m.test_rmse = std::sqrt(arma::mean(arma::square(m.pred_mean - y))) * y_std;
  return m;
}

}  // namespace dkp::eval
