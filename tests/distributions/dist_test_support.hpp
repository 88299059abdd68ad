// Helpers shared by the distribution tests: Monte Carlo summaries with standard errors, the
// Kolmogorov-Smirnov test, a Gamma maximum-likelihood fit, unconstrained parameterisations of
// Cholesky factors, and a pathwise (common-random-numbers) gradient check.
#pragma once

#include <doctest/doctest.h>

#include <armadillo>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "distributions/gamma_op.hpp"
#include "random/stream.hpp"
#include "test_support.hpp"

namespace dkp::test::dist {

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;

/// A fixed-seed stream for one test, derived from the test process seed and a purpose string.
inline random::Stream stream(const std::string& purpose, uint64_t index = 0) {
  return random::Stream(dkp::test::seed()).child(purpose, index);
}

/// A 1x1 matrix.
inline arma::mat sc(double x) {
  return arma::mat(1, 1, arma::fill::value(x));
}

/// Running mean and standard error of a scalar.
struct MeanSe {
  double mean = 0, se = 0, sd = 0;
  size_t n = 0;
};
inline MeanSe mean_se(const std::vector<double>& x) {
  MeanSe r;
  r.n = x.size();
  for (double v : x) r.mean += v;
  r.mean /= static_cast<double>(r.n);
  double ss = 0;
  for (double v : x) ss += (v - r.mean) * (v - r.mean);
  r.sd = std::sqrt(ss / static_cast<double>(r.n - 1));
  r.se = r.sd / std::sqrt(static_cast<double>(r.n));
  return r;
}

/// Sample variance and its standard error sqrt((m4 - s^4) / n) (large-sample, from the empirical
/// fourth central moment).
inline MeanSe variance_se(const std::vector<double>& x) {
  const MeanSe m = mean_se(x);
  double m2 = 0, m4 = 0;
  for (double v : x) {
    const double d = v - m.mean;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  const double n = static_cast<double>(x.size());
  m2 /= n;
  m4 /= n;
  MeanSe r;
  r.n = x.size();
  r.mean = m2 * n / (n - 1);
  r.se = std::sqrt(std::max(m4 - m2 * m2, 0.0) / n);
  return r;
}

/// The Kolmogorov-Smirnov statistic of a sample against a continuous CDF and its asymptotic
/// p-value (Kolmogorov distribution with Stephens' small-sample correction).
struct KsResult {
  double d = 0, p = 0;
};
inline KsResult ks_test(std::vector<double> x, const std::function<double(double)>& cdf) {
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double f = cdf(x[i]);
    d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
  }
  const double lam = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * d;
  double p = 0;
  for (int k = 1; k <= 100; ++k) {
    p += 2.0 * ((k % 2) ? 1.0 : -1.0) * std::exp(-2.0 * k * k * lam * lam);
  }
  return {d, std::clamp(p, 0.0, 1.0)};
}

/// Maximum-likelihood Gamma(shape, rate) fit: solves log k - digamma(k) = log(mean) - mean(log x)
/// by Newton's method.
struct GammaFit {
  double shape = 0, rate = 0;
};
inline GammaFit fit_gamma(const std::vector<double>& x) {
  double mean = 0, mean_log = 0;
  for (double v : x) {
    mean += v;
    mean_log += std::log(v);
  }
  mean /= static_cast<double>(x.size());
  mean_log /= static_cast<double>(x.size());
  const double s = std::log(mean) - mean_log;
  double k = (3 - s + std::sqrt((s - 3) * (s - 3) + 24 * s)) / (12 * s);  // Minka's start
  for (int it = 0; it < 100; ++it) {
    const double f = std::log(k) - boost::math::digamma(k) - s;
    const double df = 1.0 / k - boost::math::trigamma(k);
    const double step = f / df;
    k -= step;
    if (std::abs(step) < 1e-14 * k) break;
  }
  return {k, k / mean};
}

/// A lower Cholesky factor from an unconstrained square matrix U (as autodiff ops):
/// L = strict_lower(U) + diag(exp(diag(U))). Every entry of the lower triangle of U can be
/// perturbed on its own; the upper triangle is ignored.
inline Var chol_from_unconstrained(const Var& U) {
  const arma::uword n = U.n_rows();
  arma::mat strict = arma::trimatl(arma::ones(n, n), -1);
  Tape& t = U.tape();
  return ad::add(ad::mul(U, t.constant(strict)), ad::mul(ad::exp(U), t.constant(arma::eye(n, n))));
}
/// Plain-valued version of chol_from_unconstrained.
inline arma::mat chol_from_unconstrained(const arma::mat& U) {
  arma::mat L = arma::trimatl(U, -1);
  L.diag() = arma::exp(U.diag());
  return L;
}
/// A random unconstrained U whose factor has diagonal in [exp(lo), exp(hi)].
inline arma::mat random_unconstrained(random::Stream& s, arma::uword n, double off = 0.5,
                                      double lo = -0.3, double hi = 0.3) {
  arma::mat U = off * random::normal_matrix(s, n, n);
  for (arma::uword i = 0; i < n; ++i) U(i, i) = random::uniform(s, lo, hi);
  return U;
}

/// A scalar test function of a PSD matrix, nonlinear but with slowly growing derivatives (so that
/// Monte Carlo estimates of its gradients have light tails):
/// f(G) = sum(W % G) + sum(log(1 + G % G)) with fixed weights W ~ U(-1, 1).
inline Var test_functional(const Var& G, uint64_t seed = 7) {
  return ad::add(ad::random_contraction(G, seed),
                 ad::sum(ad::log(ad::add_scalar(ad::square(G), 1.0))));
}

/// f(theta; noise): builds the sample's functional on `tape` with noise from `s`.
using PathFn =
    std::function<Var(Tape&, const std::vector<Var>&, random::Stream&, distributions::GammaMethod)>;

/// Monte Carlo estimates of the directional derivative d/dt E[f(theta + t v)] at t = 0:
///   ad: mean over N draws of the reverse-mode gradient dotted with v (the reparameterised
///       estimator), with its standard error;
///   fd: mean over the same N draws of a 4-point central difference of f(theta + t v) in t with the
///       noise held fixed (common random numbers), with its standard error.
struct PathwiseEstimate {
  MeanSe ad, fd;
};
inline PathwiseEstimate pathwise(const PathFn& f, const std::vector<arma::mat>& theta,
                                 const std::vector<arma::mat>& dir, int n, const std::string& seed,
                                 distributions::GammaMethod method, double h, bool with_fd) {
  std::vector<double> ads, fds;
  for (int i = 0; i < n; ++i) {
    const random::Stream base = stream(seed, static_cast<uint64_t>(i));
    {
      Tape tape;
      std::vector<Var> vars;
      for (const auto& x : theta) vars.push_back(tape.variable(x));
      random::Stream s = base;
      Var y = f(tape, vars, s, method);
      tape.backward(y);
      double g = 0;
      for (size_t k = 0; k < vars.size(); ++k) g += arma::accu(vars[k].grad() % dir[k]);
      ads.push_back(g);
    }
    if (!with_fd) continue;
    auto at = [&](double t) {
      Tape tape;
      std::vector<Var> vars;
      for (size_t k = 0; k < theta.size(); ++k)
        vars.push_back(tape.constant(theta[k] + t * dir[k]));
      random::Stream s = base;
      return f(tape, vars, s, method).scalar();
    };
    fds.push_back((-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h));
  }
  PathwiseEstimate r;
  r.ad = mean_se(ads);
  if (with_fd) r.fd = mean_se(fds);
  return r;
}

}  // namespace dkp::test::dist
