#include "distributions/gw.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "linalg/triangular.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

namespace ad = autodiff;

namespace {

// m = min(P, nu) for an integer nu, checked against alpha's length.
arma::uword gw_columns(arma::uword P, int nu, const Var& alpha, const char* where) {
  if (nu < 1) throw Error(fmt::format("distributions::{}: nu = {} must be >= 1", where, nu));
  const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
  if (alpha.n_rows() != m || alpha.n_cols() != 1) {
    throw Error(fmt::format("distributions::{}: alpha is {}x{}, need min(P, nu) x 1 = {}x1", where,
                            alpha.n_rows(), alpha.n_cols(), m));
  }
  return m;
}

void check_square(const Var& X, arma::uword n, const char* name, const char* where) {
  if (X.n_rows() != n || X.n_cols() != n) {
    throw Error(fmt::format("distributions::{}: {} is {}x{}, need {}x{}", where, name, X.n_rows(),
                            X.n_cols(), n, n));
  }
}

// The Gamma, Normal and T_jj Jacobian terms common to GW, A-GW and AB-GW:
//   bartlett_log_prob - sum_j (P - j - 1)/2 log c_j.
Var common_terms(const BartlettFactor& f, const BartlettParams& p) {
  const arma::uword P = f.T.n_rows(), m = f.T.n_cols();
  arma::vec w(m);
  for (arma::uword j = 0; j < m; ++j) w[j] = -0.5 * static_cast<double>(P - j - 1);
  Var jac = ad::sum(ad::mul(ad::log(f.c), f.c.tape().constant(std::move(w))));
  return ad::add(bartlett_log_prob(f, p), jac);
}

// Recovers the Bartlett factor (plain values) from T.
BartlettFactor factor_from_T(Tape& tape, const arma::mat& T) {
  arma::vec c = arma::square(arma::vec(T.diag()));
  return {tape.constant(c), tape.constant(T)};
}

}  // namespace

BartlettParams BartlettParamValues::on(Tape& tape) const {
  return {tape.constant(alpha), tape.constant(beta), tape.constant(mu), tape.constant(sigma)};
}

// ---- GW ----------------------------------------------------------------------------------------

PsdSample gw_sample(const Var& L, int nu, const BartlettParams& p, random::Stream& s,
                    GammaMethod method) {
  const arma::uword P = L.n_rows();
  check_square(L, P, "L", "gw_sample");
  gw_columns(P, nu, p.alpha, "gw_sample");
  BartlettFactor bf = bartlett_sample(P, p, s, method);
  Var F = ad::matmul(L, bf.T);
  Var G = ad::matmul(F, F, false, true);
  return {G, F, bf};
}

Var gw_log_prob(const PsdSample& sample, const Var& L, int nu, const BartlettParams& p) {
  const arma::uword P = L.n_rows();
  check_square(L, P, "L", "gw_log_prob");
  const arma::uword m = gw_columns(P, nu, p.alpha, "gw_log_prob");
  if (sample.bartlett.T.n_rows() != P || sample.bartlett.T.n_cols() != m) {
    throw Error(fmt::format("distributions::gw_log_prob: T is {}x{}, need {}x{}",
                            sample.bartlett.T.n_rows(), sample.bartlett.T.n_cols(), P, m));
  }
  // - sum_{j<m} (P - j) log L_jj - sum_{j<P} min(j + 1, nu) log L_jj
  arma::vec w(P);
  for (arma::uword j = 0; j < P; ++j) {
    w[j] = -static_cast<double>(std::min<arma::uword>(j + 1, static_cast<arma::uword>(nu)));
    if (j < m) w[j] -= static_cast<double>(P - j);
  }
  return ad::add(common_terms(sample.bartlett, p), weighted_log_abs_diag(L, w));
}

double gw_log_prob_at(const arma::mat& G, const arma::mat& L, int nu,
                      const BartlettParamValues& p) {
  const arma::uword P = G.n_rows;
  if (nu < 1) throw Error(fmt::format("distributions::gw_log_prob_at: nu = {} < 1", nu));
  const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
  const arma::mat T = linalg::solve_lower(L, trapezoidal_factor(G, m));
  Tape tape;
  PsdSample s{tape.constant(G), tape.constant(L * T), factor_from_T(tape, T)};
  return gw_log_prob(s, tape.constant(L), nu, p.on(tape)).scalar();
}

// ---- A-GW and AB-GW ----------------------------------------------------------------------------

namespace {

// log Q for AB-GW at the parts; B_lower is the (already masked) lower-triangular B, or an
// invalid Var for the A-GW (B = I).
// logdet_a is log|det A| for the P x P matrix A.
Var abgw_log_prob_parts(const PsdSample& sample, arma::uword P, const Var& logdet_a,
                        const Var* B_lower, int nu, const BartlettParams& p, const char* where) {
  const arma::uword m = gw_columns(P, nu, p.alpha, where);
  const BartlettFactor& f = sample.bartlett;
  if (f.T.n_rows() != P || f.T.n_cols() != m || sample.F.n_rows() != P || sample.F.n_cols() != m) {
    throw Error(fmt::format("distributions::{}: T is {}x{} and F {}x{}, need {}x{}", where,
                            f.T.n_rows(), f.T.n_cols(), sample.F.n_rows(), sample.F.n_cols(), P,
                            m));
  }
  const double Pd = static_cast<double>(P), nud = static_cast<double>(nu);
  Var lp = common_terms(f, p);
  Var sum_log_b;  // sum_j log|B_jj| (invalid for the A-GW)
  if (B_lower) {
    check_square(*B_lower, m, "B", where);
    arma::vec wb(m, arma::fill::ones);
    sum_log_b = weighted_log_abs_diag(*B_lower, wb);
    arma::vec w(m);
    for (arma::uword j = 0; j < m; ++j) w[j] = -2.0 * static_cast<double>(P - j);
    lp = ad::add(lp, weighted_log_abs_diag(*B_lower, w));
  }
  if (m == P) {
    // (nu - P - 1)/2 * 2 log|det A| - nu log|det A|
    return ad::add(lp, ad::scale(logdet_a, -(Pd + 1.0)));
  }
  Var logdet_g11 = ad::scale(log_abs_det(ad::submat(sample.F, 0, 0, m - 1, m - 1)), 2.0);
  Var logdet_c11 = ad::sum(ad::log(f.c));
  if (B_lower) logdet_c11 = ad::add(logdet_c11, ad::scale(sum_log_b, 2.0));
  lp = ad::add(lp, ad::scale(ad::sub(logdet_g11, logdet_c11), 0.5 * (nud - Pd - 1.0)));
  return ad::add(lp, ad::scale(logdet_a, -nud));
}

}  // namespace

namespace {

// The A-GW / AB-GW draw for a P x P A that `apply_a` multiplies by: T from bartlett_sample,
// F = A T tril(B) (A T when B is null), G = F F^T.
template <class ApplyA>
PsdSample abgw_sample_with(arma::uword P, const Var* B, int nu, const BartlettParams& p,
                           random::Stream& s, GammaMethod method, const char* where,
                           ApplyA apply_a) {
  const arma::uword m = gw_columns(P, nu, p.alpha, where);
  if (B) check_square(*B, m, "B", where);
  BartlettFactor bf = bartlett_sample(P, p, s, method);
  Var F = apply_a(B ? ad::matmul(bf.T, ad::tril(*B)) : bf.T);
  Var G = ad::matmul(F, F, false, true);
  return {G, F, bf};
}

}  // namespace

PsdSample agw_sample(const Var& A, int nu, const BartlettParams& p, random::Stream& s,
                     GammaMethod method) {
  check_square(A, A.n_rows(), "A", "agw_sample");
  return abgw_sample_with(A.n_rows(), nullptr, nu, p, s, method, "agw_sample",
                          [&A](const Var& X) { return ad::matmul(A, X); });
}

PsdSample abgw_sample(const Var& A, const Var& B, int nu, const BartlettParams& p,
                      random::Stream& s, GammaMethod method) {
  check_square(A, A.n_rows(), "A", "abgw_sample");
  return abgw_sample_with(A.n_rows(), &B, nu, p, s, method, "abgw_sample",
                          [&A](const Var& X) { return ad::matmul(A, X); });
}

Var agw_log_prob(const PsdSample& sample, const Var& A, int nu, const BartlettParams& p) {
  check_square(A, A.n_rows(), "A", "agw_log_prob");
  return abgw_log_prob_parts(sample, A.n_rows(), log_abs_det(A), nullptr, nu, p, "agw_log_prob");
}

Var abgw_log_prob(const PsdSample& sample, const Var& A, const Var& B, int nu,
                  const BartlettParams& p) {
  check_square(A, A.n_rows(), "A", "abgw_log_prob");
  Var Bl = ad::tril(B);
  return abgw_log_prob_parts(sample, A.n_rows(), log_abs_det(A), &Bl, nu, p, "abgw_log_prob");
}

// ---- the factored forms A = L A' ----------------------------------------------------------------

FactoredA factor_a(const Var& L, const Var& A_prime) {
  const arma::uword P = A_prime.n_rows();
  check_square(A_prime, P, "A'", "factor_a");
  check_square(L, P, "L", "factor_a");
  return {L, A_prime, log_abs_det(A_prime)};
}

namespace {

// L (A' X) with L lower triangular: two products of P^2 cols flops each.
Var apply_factored(const FactoredA& A, const Var& X) {
  return ad::matmul(ad::tril(A.L), ad::matmul(A.A_prime, X));
}

// log|det A| = sum_j log|L_jj| + log|det A'|.
Var factored_logdet(const FactoredA& A) {
  return ad::add(weighted_log_abs_diag(A.L, arma::vec(A.L.n_rows(), arma::fill::ones)),
                 A.log_abs_det_A_prime);
}

}  // namespace

PsdSample agw_sample(const FactoredA& A, int nu, const BartlettParams& p, random::Stream& s,
                     GammaMethod method) {
  return abgw_sample_with(A.A_prime.n_rows(), nullptr, nu, p, s, method, "agw_sample",
                          [&A](const Var& X) { return apply_factored(A, X); });
}

PsdSample abgw_sample(const FactoredA& A, const Var& B, int nu, const BartlettParams& p,
                      random::Stream& s, GammaMethod method) {
  return abgw_sample_with(A.A_prime.n_rows(), &B, nu, p, s, method, "abgw_sample",
                          [&A](const Var& X) { return apply_factored(A, X); });
}

Var agw_log_prob(const PsdSample& sample, const FactoredA& A, int nu, const BartlettParams& p) {
  return abgw_log_prob_parts(sample, A.A_prime.n_rows(), factored_logdet(A), nullptr, nu, p,
                             "agw_log_prob");
}

Var abgw_log_prob(const PsdSample& sample, const FactoredA& A, const Var& B, int nu,
                  const BartlettParams& p) {
  Var Bl = ad::tril(B);
  return abgw_log_prob_parts(sample, A.A_prime.n_rows(), factored_logdet(A), &Bl, nu, p,
                             "abgw_log_prob");
}

BartlettFactor factor_at_fixed_mixing(const BartlettFactor& f, const Var& A_prime,
                                      const arma::mat& a_prime_inv, const Var* B) {
  const arma::uword P = f.T.n_rows(), m = f.T.n_cols();
  check_square(A_prime, P, "A'", "factor_at_fixed_mixing");
  if (a_prime_inv.n_rows != P || a_prime_inv.n_cols != P) {
    throw Error(fmt::format("distributions::factor_at_fixed_mixing: A'^{{-1}} is {}x{}, need {}x{}",
                            a_prime_inv.n_rows, a_prime_inv.n_cols, P, P));
  }
  Tape& tape = f.T.tape();
  // Y = A'_0^{-1} L^{-1} F = A'_0^{-1} A' T tril(B), whose lower-trapezoidal factor is T B_0 at
  // the constant B_0 (as abgw_log_prob_at recovers it from G).
  Var TB = f.T;
  arma::mat right;  // D B_0^{-1}: columns signed like diag(B_0), then B_0 undone
  if (B) {
    check_square(*B, m, "B", "factor_at_fixed_mixing");
    const Var Bl = ad::tril(*B);
    const arma::mat B0 = arma::trimatl(B->val());
    arma::mat B0_inv;
    if (!arma::inv(B0_inv, arma::trimatl(B0))) {
      throw Error("distributions::factor_at_fixed_mixing: B is singular");
    }
    right = arma::diagmat(arma::sign(arma::vec(B0.diag()))) * B0_inv;
    TB = ad::matmul(TB, Bl);
  }
  const Var Y = ad::matmul(tape.constant(a_prime_inv), ad::matmul(A_prime, TB));
  // Y = (Y_1; Y_2) = (W_1; W_2) Q^T with Q orthogonal: W_1 = chol(Y_1 Y_1^T),
  // W_2 = Y_2 Y_1^T W_1^{-T}; then T = W D B_0^{-1}.
  const Var Y1 = ad::submat(Y, 0, 0, m - 1, m - 1);
  Var W1 = ad::cholesky(ad::matmul(Y1, Y1, false, true), "A-GW factor at fixed A'");
  Var W2;
  if (P > m) {
    const Var Y2 = ad::submat(Y, m, 0, P - 1, m - 1);
    W2 = ad::transpose(ad::solve_lower(W1, ad::matmul(Y1, Y2, false, true)));
  }
  if (B) {
    const Var R = tape.constant(right);
    W1 = ad::matmul(W1, R);
    if (W2.valid()) W2 = ad::matmul(W2, R);
  }
  return {ad::square(ad::diag(W1)), W2.valid() ? ad::join_vert(W1, W2) : W1};
}

double abgw_log_prob_at(const arma::mat& G, const arma::mat& A, const arma::mat& B, int nu,
                        const BartlettParamValues& p) {
  const arma::uword P = G.n_rows;
  if (nu < 1) throw Error(fmt::format("distributions::abgw_log_prob_at: nu = {} < 1", nu));
  const arma::uword m = std::min<arma::uword>(P, static_cast<arma::uword>(nu));
  if (A.n_rows != P || A.n_cols != P || B.n_rows != m || B.n_cols != m) {
    throw Error(fmt::format("distributions::abgw_log_prob_at: G {}x{}, A {}x{}, B {}x{}", P,
                            G.n_cols, A.n_rows, A.n_cols, B.n_rows, B.n_cols));
  }
  const arma::mat Bl = arma::trimatl(B);
  arma::mat Ainv_G;
  if (!arma::solve(Ainv_G, A, G)) throw Error("distributions::abgw_log_prob_at: A is singular");
  arma::mat C;
  if (!arma::solve(C, A, Ainv_G.t())) throw Error("distributions::abgw_log_prob_at: A is singular");
  C = 0.5 * (C + C.t());  // A^{-1} G A^{-T}, symmetrised
  arma::mat TB = trapezoidal_factor(C, m);
  for (arma::uword j = 0; j < m; ++j) {
    if (Bl(j, j) < 0.0) TB.col(j) *= -1.0;  // T_jj > 0, so sign((T B)_jj) = sign(B_jj)
  }
  const arma::mat T = linalg::tri_solve(Bl, TB, linalg::Uplo::Lower, false, linalg::Side::Right);
  Tape tape;
  PsdSample s{tape.constant(G), tape.constant(A * TB), factor_from_T(tape, T)};
  return abgw_log_prob(s, tape.constant(A), tape.constant(B), nu, p.on(tape)).scalar();
}

}  // namespace dkp::distributions
