// Evaluation metrics in the papers' conventions (DESIGN.md section 5).
//
// Predictions come as S Monte Carlo samples of a Gaussian predictive per test point: mean m_ns and
// variance v_ns (the likelihood noise already added), in standardised units. Then
//   test log-likelihood per point = log (1/S) sum_s N(y_n; m_ns, v_ns)  - log y_std
//   (original units; averaged over points), and
//   RMSE = sqrt(mean_n (y_n - mean_s m_ns)^2) * y_std.
// Calibration (not in the papers; for researchers comparing predictive uncertainty): the PIT
// (probability integral transform) of each test target under the mixture, u_n = (1/S) sum_s
// Phi((y_n - m_ns) / sqrt(v_ns)); the coverage of the mixture's central (equal-tailed) c-interval,
// the fraction of points with (1 - c)/2 <= u_n <= (1 + c)/2; and the calibration error,
// mean over p = 0.05, 0.10, ..., 0.95 of |fraction of points with u_n <= p - p|
// (Kuleshov et al. 2018). All are invariant to the units of y.
#pragma once

#include <array>

#include <armadillo>

#include "likelihoods/softmax.hpp"

namespace dkp::eval {

struct RegressionMetrics {
  double test_ll = 0.0;    ///< mean over test points, original units
  double test_rmse = 0.0;  ///< original units
  arma::vec point_ll;      ///< per test point, original units
  arma::vec pred_mean;     ///< mixture mean, standardised units
  arma::vec pred_var;      ///< mixture variance, standardised units
  arma::vec point_pit;     ///< per test point, the mixture's CDF at y (mixture_cdf)
  arma::vec coverage;      ///< central_coverage at each of kCoverageLevels
  double calibration_error = 0.0;
};

/// The central-interval levels whose coverage regression_metrics reports.
inline constexpr std::array<double, 3> kCoverageLevels{0.5, 0.9, 0.95};

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

/// The mixture (1/S) sum_s N(m_ns, v_ns)'s CDF at y_n per point (the PIT); shapes as above.
arma::vec mixture_cdf(const arma::mat& mean, const arma::mat& var, const arma::vec& y);

/// Fraction of PIT values in [(1 - level)/2, (1 + level)/2]; 0 < level < 1.
double central_coverage(const arma::vec& pit, double level);

/// Mean over p = 0.05, 0.10, ..., 0.95 of |fraction of PIT values <= p - p|.
double calibration_error(const arma::vec& pit);

/// Reliability of a classifier's confidence (the DSVI report's Figure 4, "calibration curves"):
/// the points binned by their confidence max_c pbar_nc into equal-width bins of [0, 1] (bin b
/// holds [b / K, (b + 1) / K), the last also 1); per bin the number of points, their mean
/// confidence and their accuracy (empty bins: 0, 0, 0); and the expected calibration error
///   ECE = sum_b (n_b / N) |accuracy_b - confidence_b|   (Naeini et al. 2015; 0 when N = 0).
struct Reliability {
  arma::uvec count;
  arma::vec confidence, accuracy;
  double ece = 0.0;
};

/// Reliability (K = `bins` bins) of the N x C class probabilities at the N labels; throws
/// dkp::Error on shapes, labels or bins = 0.
Reliability reliability(const arma::mat& class_prob, const arma::uvec& labels, size_t bins = 10);

/// Classification (the DSVI report's Tables 2 and 3, the DKP paper's Table 2): the predictive class
/// probabilities are the mixture over the S samples, pbar_nc = (1/S) sum_s p(y = c | q_ns), with
/// p(y | q_ns) the likelihood's predictive (robust-max, probit or softmax) under sample s. Then
///   test log-likelihood = mean_n log pbar_{n, y_n},
///   accuracy = fraction of points whose argmax_c pbar_nc is y_n.
struct ClassificationMetrics {
  double test_ll = 0.0;
  double test_acc = 0.0;    ///< fraction in [0, 1]
  Reliability reliability;  ///< 10 bins
  arma::vec point_ll;       ///< log pbar_{n, y_n}
  arma::mat class_prob;     ///< pbar, N x C
  arma::uvec predicted;     ///< argmax_c pbar_nc
};

/// pbar (N x C) from N x (S C) latent marginals (layout below), the points split over `threads`
/// threads (the same numbers for any count); throws dkp::Error on shapes. With the softmax
/// likelihood `mean` holds sampled logits and pbar is the mean of their softmax (var unused).
arma::mat class_probabilities(
    const arma::mat& mean, const arma::mat& var, size_t classes, size_t threads = 1,
    likelihoods::ClassLikelihood kind = likelihoods::ClassLikelihood::RobustMax);

/// `mean` and `var` are N x (S C) latent marginals (sample s in columns s C .. s C + C - 1, as
/// models::Predictive for C classes); `labels` the N class indices. Throws dkp::Error on shapes,
/// labels or variances that do not fit.
ClassificationMetrics classification_metrics(
    const arma::mat& mean, const arma::mat& var, size_t classes, const arma::uvec& labels,
    size_t threads = 1,
    likelihoods::ClassLikelihood kind = likelihoods::ClassLikelihood::RobustMax);

/// Row-wise log-mean-exp of an N x S matrix (stable).
arma::vec log_mean_exp_rows(const arma::mat& a);

}  // namespace dkp::eval
