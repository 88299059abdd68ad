#include "eval/metrics.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "likelihoods/probit.hpp"
#include "likelihoods/robustmax.hpp"
#include "platform/parallel.hpp"
#include "util/error.hpp"

namespace dkp::eval {

arma::vec log_mean_exp_rows(const arma::mat& a) {
  const arma::vec m = arma::max(a, 1);
  arma::mat shifted = a.each_col() - m;
  return m + arma::log(arma::mean(arma::exp(shifted), 1));
}

arma::mat class_probabilities(const arma::mat& mean, const arma::mat& var, size_t classes,
                              size_t threads, likelihoods::ClassLikelihood kind) {
  const arma::uword C = classes;
  const bool probit = kind == likelihoods::ClassLikelihood::Probit;
  const arma::uword L = likelihoods::latent_columns(C, kind);  // latent columns per sample
  if (C < 2 || (probit && C != 2) || mean.n_cols == 0 || mean.n_cols % L != 0 ||
      var.n_rows != mean.n_rows || var.n_cols != mean.n_cols) {
    throw Error(fmt::format("class probabilities: mean {}x{}, var {}x{}, {} classes{}", mean.n_rows,
                            mean.n_cols, var.n_rows, var.n_cols, classes,
                            probit ? " (probit: 2)" : ""));
  }
  const arma::uword S = mean.n_cols / L;
  likelihoods::RobustMax rm;
  rm.classes = C;
  const arma::uword N = mean.n_rows;
  arma::mat p(N, C, arma::fill::zeros);
  // Row blocks, one per thread: every point's probabilities are computed alone, so the split
  // does not change them.
  const size_t T = std::max<size_t>(1, std::min<size_t>(threads, N));
  platform::parallel_for(T, [&](size_t t) {
    const arma::uword r0 = N * t / T, r1 = N * (t + 1) / T;
    if (r1 == r0) return;
    arma::mat last;  // the previous sample's probabilities, reused when its marginals repeat
    for (arma::uword s = 0; s < S; ++s) {
      const arma::mat m = mean.submat(r0, s * L, r1 - 1, s * L + L - 1);
      const arma::mat v = var.submat(r0, s * L, r1 - 1, s * L + L - 1);
      // A model that draws nothing (the SGP) gives every sample the same marginals.
      const bool repeat =
          s > 0 &&
          arma::approx_equal(m, mean.submat(r0, s * L - L, r1 - 1, s * L - 1), "absdiff", 0.0) &&
          arma::approx_equal(v, var.submat(r0, s * L - L, r1 - 1, s * L - 1), "absdiff", 0.0);
      if (!repeat) {
        if (probit) {
          const arma::vec p1 = likelihoods::probit_prob_one(m, v, likelihoods::Probit{});
          last = arma::join_horiz(1.0 - p1, p1);
        } else if (kind == likelihoods::ClassLikelihood::Softmax) {
          last = likelihoods::softmax_rows(m);
        } else {
          last = likelihoods::robustmax_class_probs(m, v, rm);
        }
      }
      p.rows(r0, r1 - 1) += last;
    }
  });
  return p / double(S);
}

ClassificationMetrics classification_metrics(const arma::mat& mean, const arma::mat& var,
                                             size_t classes, const arma::uvec& labels,
                                             size_t threads, likelihoods::ClassLikelihood kind) {
  const arma::uword N = mean.n_rows;
  if (labels.n_elem != N) {
    throw Error(fmt::format("classification_metrics: {} labels for {} points", labels.n_elem, N));
  }
  if (N > 0 && labels.max() >= classes) {
    throw Error(
        fmt::format("classification_metrics: label {} for {} classes", labels.max(), classes));
  }
  ClassificationMetrics m;
  m.class_prob = class_probabilities(mean, var, classes, threads, kind);
  m.point_ll.set_size(N);
  m.predicted.set_size(N);
  arma::uword correct = 0;
  for (arma::uword n = 0; n < N; ++n) {
    m.point_ll[n] = std::log(m.class_prob(n, labels[n]));
    m.predicted[n] = m.class_prob.row(n).index_max();
    correct += m.predicted[n] == labels[n] ? 1 : 0;
  }
  m.test_ll = N > 0 ? arma::mean(m.point_ll) : 0.0;
  m.test_acc = N > 0 ? double(correct) / double(N) : 0.0;
  m.reliability = reliability(m.class_prob, labels);
  return m;
}

Reliability reliability(const arma::mat& class_prob, const arma::uvec& labels, size_t bins) {
  const arma::uword N = class_prob.n_rows;
  if (bins == 0) throw Error("reliability: needs at least 1 bin");
  if (labels.n_elem != N || (N > 0 && labels.max() >= class_prob.n_cols)) {
    throw Error(fmt::format("reliability: {} labels for {} x {} class probabilities", labels.n_elem,
                            N, class_prob.n_cols));
  }
  Reliability r;
  r.count.zeros(bins);
  r.confidence.zeros(bins);
  r.accuracy.zeros(bins);
  for (arma::uword n = 0; n < N; ++n) {
    const arma::uword c = class_prob.row(n).index_max();
    const double conf = class_prob(n, c);
    const size_t b = std::min(bins - 1, size_t(std::max(0.0, conf) * double(bins)));
    r.count[b] += 1;
    r.confidence[b] += conf;
    r.accuracy[b] += c == labels[n] ? 1.0 : 0.0;
  }
  for (size_t b = 0; b < bins; ++b) {
    if (r.count[b] == 0) continue;
    r.confidence[b] /= double(r.count[b]);
    r.accuracy[b] /= double(r.count[b]);
    r.ece += double(r.count[b]) / double(N) * std::abs(r.accuracy[b] - r.confidence[b]);
  }
  return r;
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

arma::vec mixture_cdf(const arma::mat& mean, const arma::mat& var, const arma::vec& y) {
  if (mean.n_rows != y.n_elem || var.n_rows != y.n_elem || mean.n_cols != var.n_cols ||
      mean.n_cols == 0) {
    throw Error(fmt::format("mixture_cdf: mean {}x{}, var {}x{}, y {}", mean.n_rows, mean.n_cols,
                            var.n_rows, var.n_cols, y.n_elem));
  }
  if (!mean.is_finite() || !var.is_finite() || var.min() <= 0.0 || !y.is_finite()) {
    throw Error("mixture_cdf: non-finite predictions or targets, or non-positive variances");
  }
  arma::vec u(y.n_elem);
  const double S = double(mean.n_cols);
  for (arma::uword n = 0; n < y.n_elem; ++n) {
    double sum = 0.0;
    for (arma::uword s = 0; s < mean.n_cols; ++s) {
      // Phi(z) = erfc(-z / sqrt 2) / 2, accurate in both tails.
      sum += 0.5 * std::erfc((mean(n, s) - y[n]) / std::sqrt(2.0 * var(n, s)));
    }
    u[n] = sum / S;
  }
  return u;
}

double central_coverage(const arma::vec& pit, double level) {
  if (!(level > 0.0 && level < 1.0)) {
    throw Error(fmt::format("central_coverage: level {} is not in (0, 1)", level));
  }
  if (pit.n_elem == 0) throw Error("central_coverage: no points");
  const double lo = 0.5 * (1.0 - level), hi = 0.5 * (1.0 + level);
  return double(arma::accu(pit >= lo && pit <= hi)) / double(pit.n_elem);
}

double calibration_error(const arma::vec& pit) {
  if (pit.n_elem == 0) throw Error("calibration_error: no points");
  double sum = 0.0;
  constexpr int kLevels = 19;
  for (int k = 1; k <= kLevels; ++k) {
    const double p = 0.05 * k;
    sum += std::abs(double(arma::accu(pit <= p)) / double(pit.n_elem) - p);
  }
  return sum / kLevels;
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
  m.point_pit = mixture_cdf(mean, var, y);
  m.coverage.set_size(kCoverageLevels.size());
  for (size_t k = 0; k < kCoverageLevels.size(); ++k)
    m.coverage[k] = central_coverage(m.point_pit, kCoverageLevels[k]);
  m.calibration_error = calibration_error(m.point_pit);
  return m;
}

}  // namespace dkp::eval
