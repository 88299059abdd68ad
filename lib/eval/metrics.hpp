// Evaluation metrics in the papers' conventions (DESIGN.md section 5).
//
// Predictions come as S Monte Carlo samples of a Gaussian predictive per test point: mean m_ns and
// variance v_ns (the likelihood noise already added), in standardised units. Then
//   test log-likelihood per point = log (1/S) sum_s N(y_n; m_ns, v_ns)  - log y_std
//   (original units; averaged over points), and
//   RMSE = sqrt(mean_n (y_n - mean_s m_ns)^2) * y_std.
#pragma once

#include <armadillo>

namespace dkp::eval {

struct RegressionMetrics {
  double test_ll = 0.0;    ///< mean over test points, original units
  double test_rmse = 0.0;  ///< original units
  arma::vec point_ll;      ///< per test point, original units
  arma::vec pred_mean;     ///< mixture mean, standardised units
  arma::vec pred_var;      ///< mixture variance, standardised units
};

/// Moments of the predictive mixture (1/S) sum_s N(m_ns, v_ns) per point.
struct MixtureMoments {
  arma::vec mean;  ///< mean_s m_ns
  arma::vec var;   ///< mean_s (v_ns + m_ns^2) - mean^2
};

/// `mean` and `var` are N x S (points x samples); checks shapes, finiteness and v > 0.
MixtureMoments mixture_moments(const arma::mat& mean, const arma::mat& var);

/// `mean` and `var` are N x S (points x samples), standardised units; y standardised.
RegressionMetrics regression_metrics(const arma::mat& mean, const arma::mat& var,
                                     const arma::vec& y, double y_std);

/// Row-wise log-mean-exp of an N x S matrix (stable).
arma::vec log_mean_exp_rows(const arma::mat& a);

}  // namespace dkp::eval
