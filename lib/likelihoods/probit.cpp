#include "likelihoods/probit.hpp"

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "likelihoods/quadrature.hpp"
#include "util/error.hpp"

namespace dkp::likelihoods {

namespace {

void check(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y, const Probit& pr,
           bool positive_var) {
  validate(pr);
  if (m.n_cols() != 1 || v.n_cols() != 1 || m.n_rows() != v.n_rows()) {
    throw Error(fmt::format("probit: means {}x{} and variances {}x{} (need N x 1 each)", m.n_rows(),
                            m.n_cols(), v.n_rows(), v.n_cols()));
  }
  if (y.n_elem != m.n_rows()) {
    throw Error(fmt::format("probit: {} labels for {} points", y.n_elem, m.n_rows()));
  }
  const arma::mat& vv = v.val();
  const bool bad_var = vv.n_elem > 0 && (positive_var ? vv.min() <= 0.0 : vv.min() < 0.0);
  if (!m.val().is_finite() || !vv.is_finite() || bad_var) {
    throw Error(fmt::format("probit: means and variances must be finite, variances {}",
                            positive_var ? "positive" : "non-negative"));
  }
  for (arma::uword n = 0; n < y.n_elem; ++n) {
    if (y[n] > 1) throw Error(fmt::format("probit: label {} of point {} is not 0 or 1", y[n], n));
  }
}

// An op in m and v (N x 1) with the given value and per-point derivatives dvalue/dm, dvalue/dv.
autodiff::Var record(const autodiff::Var& m, const autodiff::Var& v, double value, arma::mat gm,
                     arma::mat gv) {
  auto g = std::make_shared<std::pair<arma::mat, arma::mat>>(std::move(gm), std::move(gv));
  return m.tape().record(arma::mat(1, 1, arma::fill::value(value)), {m, v},
                         [m, v, g](autodiff::Node* out) {
                           return [m, v, g, out] {
                             const double a = out->adj(0, 0);
                             if (m.needs_grad()) autodiff::accumulate(m, a * g->first);
                             if (v.needs_grad()) autodiff::accumulate(v, a * g->second);
                           };
                         });
}

}  // namespace

void validate(const Probit& pr) {
  if (!(pr.jitter >= 0.0 && pr.jitter < 0.5)) {
    throw ConfigError(fmt::format("probit: jitter must be in [0, 0.5), got {}", pr.jitter));
  }
  if (pr.gh_points == 0) throw ConfigError("probit: needs at least 1 quadrature point");
}

autodiff::Var probit_ell_sum(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                             const Probit& pr) {
  check(m, v, y, pr, true);
  const GaussHermite gh = gauss_hermite(pr.gh_points);
  const double a = 1.0 - 2.0 * pr.jitter, rpi = 1.0 / std::sqrt(M_PI);
  const arma::uword N = m.n_rows();
  arma::mat gm(N, 1), gv(N, 1);
  double value = 0.0;
  for (arma::uword n = 0; n < N; ++n) {
    const double s = y[n] == 1 ? 1.0 : -1.0, sd2 = std::sqrt(2.0 * v.val()[n]);
    double dm = 0.0, dv = 0.0;
    for (arma::uword k = 0; k < gh.x.n_elem; ++k) {
      const double wk = gh.w[k] * rpi;
      const double z = s * (m.val()[n] + sd2 * gh.x[k]);
      const double p = a * normal_cdf(z) + pr.jitter;
      // With no jitter a Phi(z) underflows for z below about -38: log p is then -inf.
      value += wk * std::log(p);
      const double r = wk * a * normal_pdf(z) / p;  // d (wk log p) / dz
      dm += r * s;
      dv += r * s * gh.x[k] / sd2;
    }
    gm[n] = dm;
    gv[n] = dv;
  }
  return record(m, v, value, std::move(gm), std::move(gv));
}

autodiff::Var probit_log_z_sum(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                               const Probit& pr) {
  check(m, v, y, pr, false);
  const double a = 1.0 - 2.0 * pr.jitter;
  const arma::uword N = m.n_rows();
  arma::mat gm(N, 1), gv(N, 1);
  double value = 0.0;
  for (arma::uword n = 0; n < N; ++n) {
    const double s = y[n] == 1 ? 1.0 : -1.0, c = 1.0 / std::sqrt(1.0 + v.val()[n]);
    const double t = s * m.val()[n] * c;
    const double p = a * normal_cdf(t) + pr.jitter;
    value += std::log(p);
    const double r = a * normal_pdf(t) / p;  // d log p / dt
    gm[n] = r * s * c;
    gv[n] = -0.5 * r * t * c * c;
  }
  return record(m, v, value, std::move(gm), std::move(gv));
}

arma::mat probit_prob_one(const arma::mat& m, const arma::mat& v, const Probit& pr) {
  validate(pr);
  if (m.n_rows != v.n_rows || m.n_cols != v.n_cols) {
    throw Error(fmt::format("probit: means {}x{} and variances {}x{}", m.n_rows, m.n_cols, v.n_rows,
                            v.n_cols));
  }
  if (!m.is_finite() || !v.is_finite() || (v.n_elem > 0 && v.min() < 0.0)) {
    throw Error("probit: means and variances must be finite, variances non-negative");
  }
  const double a = 1.0 - 2.0 * pr.jitter;
  arma::mat p(m.n_rows, m.n_cols);
  for (arma::uword i = 0; i < m.n_elem; ++i) {
    p[i] = a * normal_cdf(m[i] / std::sqrt(1.0 + v[i])) + pr.jitter;
  }
  return p;
}

}  // namespace dkp::likelihoods
