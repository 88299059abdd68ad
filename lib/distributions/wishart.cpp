#include "distributions/wishart.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

namespace ad = autodiff;

namespace {

constexpr double kLogPi = 1.14472988584940017414;
constexpr double kLog2 = 0.69314718055994530942;

void check_square_factor(const Var& L, const char* where) {
  if (L.n_rows() != L.n_cols() || L.n_rows() == 0) {
    throw Error(fmt::format("distributions::{}: the Cholesky factor is {}x{}, not square", where,
                            L.n_rows(), L.n_cols()));
  }
}

// The terms of log W that do not involve G: -nu/2 log|Sigma| - nu P/2 log 2 - log Gamma_m(nu/2)
// + nu (m - P)/2 log(pi).
Var wishart_normaliser(const Var& L, double nu, arma::uword m) {
  const double P = static_cast<double>(L.n_rows());
  const double c = -0.5 * nu * P * kLog2 - log_mvgamma(m, 0.5 * nu) +
                   0.5 * nu * (static_cast<double>(m) - P) * kLogPi;
  return ad::add_scalar(ad::scale(ad::logdet_chol(L), -0.5 * nu), c);
}

}  // namespace

double log_mvgamma(arma::uword p, double a) {
  const double pd = static_cast<double>(p);
  double v = 0.25 * pd * (pd - 1.0) * kLogPi;
  for (arma::uword i = 0; i < p; ++i) v += std::lgamma(a - 0.5 * static_cast<double>(i));
  return v;
}

PsdSample wishart_sample(const Var& L, double nu, random::Stream& s, GammaMethod method) {
  check_square_factor(L, "wishart_sample");
  const arma::uword P = L.n_rows();
  bartlett_columns(P, nu);  // validates nu
  BartlettParams prior = wishart_bartlett_params(L.tape(), P, nu);
  BartlettFactor bf = bartlett_sample(P, prior, s, method);
  Var F = ad::matmul(L, bf.T);
  Var G = ad::matmul(F, F, false, true);
  return {G, F, bf};
}

Var wishart_log_prob(const Var& G, const Var& L, double nu) {
  check_square_factor(L, "wishart_log_prob");
  const arma::uword P = L.n_rows();
  if (G.n_rows() != P || G.n_cols() != P) {
    throw Error(fmt::format("distributions::wishart_log_prob: G is {}x{} but Sigma is {}x{}",
                            G.n_rows(), G.n_cols(), P, P));
  }
  const arma::uword m = bartlett_columns(P, nu);
  const double Pd = static_cast<double>(P);
  Var G11 = ad::submat(G, 0, 0, m - 1, m - 1);
  Var logdet_g = ad::logdet_spd(G11, "distributions::wishart_log_prob G[:m,:m]",
                                linalg::JitterPolicy{.max_retries = 0});
  Var tr = ad::trace(ad::chol_solve(L, G));
  Var lp = ad::sub(ad::scale(logdet_g, 0.5 * (nu - Pd - 1.0)), ad::scale(tr, 0.5));
  return ad::add(lp, wishart_normaliser(L, nu, m));
}

Var wishart_log_prob_factor(const Var& F, const Var& L, double nu) {
  check_square_factor(L, "wishart_log_prob_factor");
  const arma::uword P = L.n_rows();
  const arma::uword m = bartlett_columns(P, nu);
  if (F.n_rows() != P || F.n_cols() != m) {
    throw Error(
        fmt::format("distributions::wishart_log_prob_factor: F is {}x{}, need {}x{} "
                    "(P x min(P, nu))",
                    F.n_rows(), F.n_cols(), P, m));
  }
  const double Pd = static_cast<double>(P);
  Var logdet_g = ad::scale(log_abs_det(ad::submat(F, 0, 0, m - 1, m - 1)), 2.0);
  Var tr = ad::sum(ad::square(ad::solve_lower(L, F)));
  Var lp = ad::sub(ad::scale(logdet_g, 0.5 * (nu - Pd - 1.0)), ad::scale(tr, 0.5));
  return ad::add(lp, wishart_normaliser(L, nu, m));
}

}  // namespace dkp::distributions
