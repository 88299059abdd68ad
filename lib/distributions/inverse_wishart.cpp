#include "distributions/inverse_wishart.hpp"

#include <cblas.h>

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "distributions/gamma_op.hpp"
#include "linalg/triangular.hpp"
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

// The conditional's second half as one op:
//   Y = L^{-T} (A + E diag(sd)),  g_it = G Y,  g_tt = g_c + colsum(g_it o Y),
// for G (P x P, symmetric), L (lower), A (P x n), sd and g_c (n x 1) and the constant draws E
// (P x n).
// The composed ops pass over P x n blocks some fifteen times, forward and backward; this does
// the solve in panels of columns with the product by G and the column sums on each panel while
// it is in cache, and the adjoint likewise:
//   H = g_it_bar + Y diag(g_tt_bar),  G_bar = H Y^T,  Y_bar = G H + g_it diag(g_tt_bar),
//   R_bar = L^{-1} Y_bar,  L_bar = -tril(Y R_bar^T),  A_bar = R_bar,
//   sd_bar = colsum(E o R_bar),  g_c_bar = g_tt_bar.
std::pair<Var, Var> iw_conditional_finish(const Var& G, const Var& L, const Var& A, const Var& sd,
                                          const Var& g_c, arma::mat E) {
  const arma::uword P = A.n_rows(), n = A.n_cols();
  auto Y = std::make_shared<arma::mat>(P, n, arma::fill::none);
  auto Eh = std::make_shared<arma::mat>(std::move(E));
  const arma::mat& sdv = sd.val();
  arma::mat git(P, n, arma::fill::none);
  arma::mat gtt(n, 1, arma::fill::none);
  const arma::mat& Av = A.val();
  const arma::mat& Gv = G.val();
  const double* gc = g_c.val().memptr();
  const linalg::PanelFn fill = [&](arma::uword c0, arma::uword nc, double* panel) {
    for (arma::uword j = 0; j < nc; ++j) {
      const double sj = sdv[c0 + j];
      const double* a = Av.colptr(c0 + j);
      const double* e = Eh->colptr(c0 + j);
      double* r = panel + j * P;
      for (arma::uword i = 0; i < P; ++i) r[i] = a[i] + sj * e[i];
    }
  };
  const linalg::PanelFn done = [&](arma::uword c0, arma::uword nc, double* panel) {
    double* out = git.colptr(c0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(P), int(nc), int(P), 1.0,
                Gv.memptr(), int(P), panel, int(P), 0.0, out, int(P));
    for (arma::uword j = 0; j < nc; ++j) {
      const double* y = panel + j * P;
      const double* g = out + j * P;
      double q = 0.0;
      for (arma::uword i = 0; i < P; ++i) q += g[i] * y[i];
      gtt[c0 + j] = gc[c0 + j] + q;
    }
  };
  if (n > 0 && P > 0) linalg::tri_solve_panels(L.val(), *Y, linalg::Uplo::Lower, true, fill, done);
  Tape& tape = A.tape();
  return tape.record_pair(
      std::move(git), std::move(gtt), {G, L, A, sd, g_c},
      [G, L, A, sd, g_c, Y, Eh](ad::Node* out, ad::Node* out_tt) {
        return [G, L, A, sd, g_c, Y, Eh, out, out_tt] {
          const arma::uword P = Y->n_rows, n = Y->n_cols;
          if (n == 0 || P == 0) return;
          const arma::mat& Gb = out->adj;
          const arma::mat& git = out->val;
          const arma::mat& Gv = G.val();
          const arma::vec d =
              out_tt->has_adj() ? arma::vec(out_tt->adj) : arma::vec(n, arma::fill::zeros);
          arma::mat dG(P, P, arma::fill::zeros), dL(P, P, arma::fill::zeros);
          arma::mat X(P, n, arma::fill::none);  // R_bar = A_bar
          arma::mat H;                          // H's panel, sized by the first panel
          const bool need_G = G.needs_grad(), need_L = L.needs_grad();
          const linalg::PanelFn fill = [&](arma::uword c0, arma::uword nc, double* panel) {
            if (H.n_cols < nc) H.set_size(P, nc);
            const double* y = Y->colptr(c0);
            const double* gb = Gb.colptr(c0);
            for (arma::uword j = 0; j < nc; ++j) {
              const double dj = d[c0 + j];
              for (arma::uword i = 0; i < P; ++i) H[j * P + i] = gb[j * P + i] + dj * y[j * P + i];
            }
            if (need_G) {  // G_bar += H Y^T
              cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(P), int(P), int(nc), 1.0,
                          H.memptr(), int(P), y, int(P), 1.0, dG.memptr(), int(P));
            }
            // Y_bar = G H + g_it diag(d)
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(P), int(nc), int(P), 1.0,
                        Gv.memptr(), int(P), H.memptr(), int(P), 0.0, panel, int(P));
            const double* g = git.colptr(c0);
            for (arma::uword j = 0; j < nc; ++j) {
              const double dj = d[c0 + j];
              for (arma::uword i = 0; i < P; ++i) panel[j * P + i] += dj * g[j * P + i];
            }
          };
          arma::vec dsd(n, arma::fill::none);
          const linalg::PanelFn done = [&](arma::uword c0, arma::uword nc, double* panel) {
            if (need_L) {
              const arma::mat Yp(Y->colptr(c0), P, nc, false, true);
              const arma::mat Rb(panel, P, nc, false, true);
              linalg::add_tri_product(dL, linalg::Uplo::Lower, Yp, Rb, false, -1.0);
            }
            for (arma::uword j = 0; j < nc; ++j) {
              const double* e = Eh->colptr(c0 + j);
              const double* r = panel + j * P;
              double q = 0.0;
              for (arma::uword i = 0; i < P; ++i) q += e[i] * r[i];
              dsd[c0 + j] = q;
            }
          };
          linalg::tri_solve_panels(L.val(), X, linalg::Uplo::Lower, false, fill, done);
          if (need_G) ad::accumulate(G, std::move(dG));
          if (need_L) ad::accumulate(L, std::move(dL));
          ad::accumulate(A, std::move(X));
          ad::accumulate(sd, arma::mat(std::move(dsd)));
          ad::accumulate(g_c, arma::mat(d));
        };
      });
}

}  // namespace

PsdSample inverse_wishart_sample(const Var& L, const Var& nu, random::Stream& s, GammaMethod method,
                                 IwParts parts) {
  check_args(L, nu, "inverse_wishart_sample");
  const arma::uword P = L.n_rows();
  Tape& tape = L.tape();
  arma::vec offs(P);
  for (arma::uword j = 0; j < P; ++j) offs[j] = -0.5 * static_cast<double>(j);
  // alpha_j = (nu - j)/2 (0-based), a function of nu for the reparameterised gradient.
  Var alpha = ad::add(tape.constant(std::move(offs)), ad::scale(nu, 0.5));
  BartlettParams p{alpha, tape.constant(0.5), tape.constant(0.0), tape.constant(1.0)};
  BartlettFactor bf = bartlett_sample(P, p, s, method);
  if (parts == IwParts::Bartlett) return {Var(), Var(), bf};
  // F = L T^{-T}: solve X T^T = L from the right.
  Var F = ad::tri_solve(bf.T, L, linalg::Uplo::Lower, /*trans=*/true, linalg::Side::Right);
  if (parts == IwParts::Factor) return {Var(), F, bf};
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

IWConditionalSample inverse_wishart_conditional_sample(const Var& G_ii, const Var& L_ii,
                                                       const Var& K_it, const Var& k_tt,
                                                       const Var& nu_joint, random::Stream& s,
                                                       GammaMethod method, const Var& scale) {
  const arma::uword Pi = G_ii.n_rows(), n = K_it.n_cols();
  if (G_ii.n_cols() != Pi || L_ii.n_rows() != Pi || L_ii.n_cols() != Pi || K_it.n_rows() != Pi ||
      k_tt.n_rows() != n || k_tt.n_cols() != 1 || nu_joint.val().n_elem != 1 ||
      (scale.valid() && scale.val().n_elem != 1)) {
    throw Error(fmt::format(
        "distributions::inverse_wishart_conditional_sample: G_ii {}x{}, L_ii {}x{}, K_it {}x{}, "
        "k_tt {}x{} (need n x 1), nu {}x{}, scale {}",
        G_ii.n_rows(), G_ii.n_cols(), L_ii.n_rows(), L_ii.n_cols(), K_it.n_rows(), n, k_tt.n_rows(),
        k_tt.n_cols(), nu_joint.n_rows(), nu_joint.n_cols(),
        scale.valid() ? fmt::format("{}x{}", scale.n_rows(), scale.n_cols()) : "none"));
  }
  // Psi = c K (c = scale, or 1), K_ii = L L^T. With A = L^{-1} k_it:
  //   psi_tt.i = c (k_tt - ||A||^2) column-wise, and, as Psi_ii^{-1} psi_it = K_ii^{-1} k_it,
  //   G_ii^{-1} g_it = L^{-T} (A + E diag(sqrt(g_tt.i / c))),  E ~ N(0, 1),
  // i.e. N(Psi_ii^{-1} psi_it, g_tt.i Psi_ii^{-1}) per column. The scale c only touches n-vectors
  // (no P_i x n block is scaled); the second solve is fused with the product by G_ii
  // (iw_conditional_finish).
  const Var A = ad::solve_lower(L_ii, K_it);
  Var psi_c = ad::sub(k_tt, ad::col_sumsq(A));  // psi_tt.i, n x 1
  if (scale.valid()) psi_c = ad::mul(scale, psi_c);
  const Var shape = ad::repmat(ad::scale(nu_joint, 0.5), n, 1);
  const Var g_c = inverse_gamma_sample(shape, ad::scale(psi_c, 0.5), s, method);  // g_tt.i
  const Var sd = ad::sqrt(scale.valid() ? ad::div(g_c, scale) : g_c);
  auto [g_it, g_tt] =
      iw_conditional_finish(G_ii, L_ii, A, sd, g_c, random::normal_matrix(s, Pi, n));
  return {g_it, g_tt, g_c};
}

}  // namespace dkp::distributions
