#include "distributions/inverse_wishart.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "distributions/gamma_op.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

namespace ad = autodiff;

namespace {

constexpr double kLog2 = 0.69314718055994530942;

void check_args(const Var& L, const Var& nu, const char* where) {
  if (L.n_rows() != L.n_cols() || L.n_rows() == 0) {
    throw Error(fmt::format("distributions::{}: the Cholesky factor is {}x{}, not square", where,
                            L.n_rows(), L.n_cols()));
  }
  if (nu.val().n_elem != 1) {
    throw Error(fmt::format("distributions::{}: nu must be 1x1, got {}x{}", where, nu.n_rows(),
                            nu.n_cols()));
  }
  const double P = static_cast<double>(L.n_rows());
  if (!(nu.scalar() > P - 1.0) || !std::isfinite(nu.scalar())) {
    throw Error(fmt::format("distributions::{}: nu = {} must exceed P - 1 = {}", where, nu.scalar(),
                            P - 1.0));
  }
}

// -nu P/2 log 2 - log Gamma_P(nu/2), as a function of the 1x1 Var nu.
Var iw_normaliser(const Var& nu, arma::uword P) {
  Var half_nu = ad::scale(nu, 0.5);
  return ad::sub(ad::scale(nu, -0.5 * static_cast<double>(P) * kLog2),
                 ad::mvlgamma(half_nu, static_cast<int>(P)));
}

}  // namespace

PsdSample inverse_wishart_sample(const Var& L, const Var& nu, random::Stream& s,
                                 GammaMethod method) {
  check_args(L, nu, "inverse_wishart_sample");
  const arma::uword P = L.n_rows();
  Tape& tape = L.tape();
  arma::vec offs(P);
  for (arma::uword j = 0; j < P; ++j) offs[j] = -0.5 * static_cast<double>(j);
  // alpha_j = (nu - j)/2 (0-based), a function of nu for the reparameterised gradient.
  Var alpha = ad::add(tape.constant(std::move(offs)), ad::scale(nu, 0.5));
  BartlettParams p{alpha, tape.constant(0.5), tape.constant(0.0), tape.constant(1.0)};
  BartlettFactor bf = bartlett_sample(P, p, s, method);
  // F = L T^{-T}: solve X T^T = L from the right.
  Var F = ad::tri_solve(bf.T, L, linalg::Uplo::Lower, /*trans=*/true, linalg::Side::Right);
  Var G = ad::matmul(F, F, false, true);
  return {G, F, bf};
}

Var inverse_wishart_log_prob(const Var& G, const Var& L, const Var& nu, const char* where) {
  check_args(L, nu, "inverse_wishart_log_prob");
  const arma::uword P = L.n_rows();
  if (G.n_rows() != P || G.n_cols() != P) {
    throw Error(fmt::format("distributions::inverse_wishart_log_prob: G is {}x{}, Psi {}x{}",
                            G.n_rows(), G.n_cols(), P, P));
  }
  const double Pd = static_cast<double>(P);
  Var LG = ad::cholesky(G, where, linalg::JitterPolicy{.max_retries = 0});
  Var logdet_g = ad::logdet_chol(LG);
  Var logdet_psi = ad::logdet_chol(L);
  Var tr = ad::sum(ad::square(ad::solve_lower(LG, L)));  // tr(Psi G^{-1}) = ||LG^{-1} L||^2
  Var lp = ad::mul(ad::scale(ad::add_scalar(nu, Pd + 1.0), -0.5), logdet_g);
  lp = ad::add(lp, ad::mul(ad::scale(nu, 0.5), logdet_psi));
  lp = ad::sub(lp, ad::scale(tr, 0.5));
  return ad::add(lp, iw_normaliser(nu, P));
}

Var inverse_wishart_log_prob_at_sample(const PsdSample& sample, const Var& L, const Var& nu) {
  check_args(L, nu, "inverse_wishart_log_prob_at_sample");
  const arma::uword P = L.n_rows();
  if (sample.bartlett.T.n_rows() != P || sample.bartlett.T.n_cols() != P) {
    throw Error(
        fmt::format("distributions::inverse_wishart_log_prob_at_sample: T is {}x{}, Psi "
                    "{}x{}",
                    sample.bartlett.T.n_rows(), sample.bartlett.T.n_cols(), P, P));
  }
  const double Pd = static_cast<double>(P);
  Var lp = ad::scale(ad::logdet_chol(L), -0.5 * (Pd + 1.0));
  Var sum_log_c = ad::sum(ad::log(sample.bartlett.c));
  lp = ad::add(lp, ad::mul(ad::scale(ad::add_scalar(nu, Pd + 1.0), 0.5), sum_log_c));
  lp = ad::sub(lp, ad::scale(ad::sum(ad::square(sample.bartlett.T)), 0.5));
  return ad::add(lp, iw_normaliser(nu, P));
}

IWConditionalSample inverse_wishart_conditional_sample(const Var& G_ii, const Var& L_psi_ii,
                                                       const Var& Psi_it, const Var& psi_tt,
                                                       const Var& nu_joint, random::Stream& s,
                                                       GammaMethod method) {
  const arma::uword Pi = G_ii.n_rows(), n = Psi_it.n_cols();
  if (G_ii.n_cols() != Pi || L_psi_ii.n_rows() != Pi || L_psi_ii.n_cols() != Pi ||
      Psi_it.n_rows() != Pi || psi_tt.n_rows() != n || psi_tt.n_cols() != 1 ||
      nu_joint.val().n_elem != 1) {
    throw Error(fmt::format(
        "distributions::inverse_wishart_conditional_sample: G_ii {}x{}, L_psi_ii {}x{}, Psi_it "
        "{}x{}, psi_tt {}x{} (need n x 1), nu {}x{}",
        G_ii.n_rows(), G_ii.n_cols(), L_psi_ii.n_rows(), L_psi_ii.n_cols(), Psi_it.n_rows(), n,
        psi_tt.n_rows(), psi_tt.n_cols(), nu_joint.n_rows(), nu_joint.n_cols()));
  }
  Tape& tape = G_ii.tape();
  // With A = L^{-1} psi_it (Psi_ii = L L^T): psi_tt.i = psi_tt - ||A||^2 column-wise, and
  //   G_ii^{-1} g_it = Psi_ii^{-1} psi_it + L^{-T} E diag(sqrt(g_tt.i)) = L^{-T} (A + E diag(.)),
  // E ~ N(0, 1), i.e. N(Psi_ii^{-1} psi_it, g_tt.i Psi_ii^{-1}) per column: two triangular
  // solves with the P_i x n block.
  Var A = ad::solve_lower(L_psi_ii, Psi_it);
  Var psi_c = ad::sub(psi_tt, ad::col_sumsq(A));  // psi_tt.i, n x 1
  Var shape = ad::repmat(ad::scale(nu_joint, 0.5), n, 1);
  Var g_c = inverse_gamma_sample(shape, ad::scale(psi_c, 0.5), s, method);  // g_tt.i, n x 1
  Var E = tape.constant(random::normal_matrix(s, Pi, n));
  Var Y = ad::solve_lower(L_psi_ii, ad::add(A, ad::mul_each_row(E, ad::transpose(ad::sqrt(g_c)))),
                          /*trans=*/true);  // G_ii^{-1} g_it
  Var g_it = ad::matmul(G_ii, Y);
  Var g_tt = ad::add(g_c, ad::transpose(ad::col_sums(ad::mul(g_it, Y))));
  return {g_it, g_tt, g_c};
}

}  // namespace dkp::distributions
