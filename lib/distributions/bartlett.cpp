#include "distributions/bartlett.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "distributions/univariate.hpp"
#include "linalg/chol.hpp"
#include "linalg/triangular.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

namespace ad = autodiff;

namespace {

// Entries (i, j) with i - j >= k kept, the rest zeroed (k = 1: strictly lower; k = 0: lower).
// Works for rectangular matrices (arma::trimatl needs square ones).
arma::mat lower_part(const arma::mat& X, int k) {
  arma::mat Y(X.n_rows, X.n_cols, arma::fill::zeros);
  for (arma::uword j = 0; j < X.n_cols; ++j) {
    for (arma::uword i = j + k; i < X.n_rows; ++i) Y(i, j) = X(i, j);
  }
  return Y;
}

}  // namespace

BartlettParams detached(const BartlettParams& p) {
  Tape& t = p.alpha.tape();
  return {t.constant(p.alpha.val()), t.constant(p.beta.val()), t.constant(p.mu.val()),
          t.constant(p.sigma.val())};
}

arma::uword bartlett_columns(arma::uword P, double nu) {
  const double Pd = static_cast<double>(P);
  if (!(nu > 0.0) || !std::isfinite(nu)) {
    throw Error(fmt::format("distributions: degrees of freedom must be positive, got {}", nu));
  }
  if (nu > Pd - 1.0) return P;
  if (nu != std::floor(nu)) {
    throw Error(fmt::format(
        "distributions: degrees of freedom {} <= P - 1 = {} must be an integer (singular "
        "Wishart)",
        nu, Pd - 1.0));
  }
  return static_cast<arma::uword>(nu);
}

BartlettParams wishart_bartlett_params(Tape& tape, arma::uword P, double nu) {
  const arma::uword m = bartlett_columns(P, nu);
  arma::vec alpha(m);
  for (arma::uword j = 0; j < m; ++j) alpha[j] = 0.5 * (nu - static_cast<double>(j));
  return {tape.constant(alpha), tape.constant(0.5), tape.constant(0.0), tape.constant(1.0)};
}

Var bartlett_assemble(const Var& c, const Var& lower) {
  const arma::uword P = lower.n_rows(), m = lower.n_cols();
  if (c.n_rows() != m || c.n_cols() != 1 || m > P) {
    throw Error(
        fmt::format("distributions::bartlett_assemble: c is {}x{}, lower is {}x{}; need c "
                    "m x 1 and lower P x m with m <= P",
                    c.n_rows(), c.n_cols(), P, m));
  }
  arma::mat T = lower_part(lower.val(), 1);  // strictly lower part
  for (arma::uword j = 0; j < m; ++j) {
    if (!(c.val()[j] > 0.0)) {
      throw Error(fmt::format("distributions::bartlett_assemble: c[{}] = {} is not positive", j,
                              c.val()[j]));
    }
    T(j, j) = std::sqrt(c.val()[j]);
  }
  arma::vec d = T.diag();
  Var out = c.tape().record(std::move(T), {c, lower}, [c, lower, d](ad::Node* out) {
    return [c, lower, d, out] {
      const arma::mat& g = out->adj;
      if (c.needs_grad()) ad::accumulate(c, arma::vec(g.diag()) / (2.0 * d));
      if (lower.needs_grad()) ad::accumulate(lower, lower_part(g, 1));
    };
  });
  // Without a gradient for the strict lower triangle (the Wishart and inverse Wishart samplers'
  // constant normals), the backward above reads only the adjoint's diagonal.
  out.node()->adj_diag_only = !lower.needs_grad();
  return out;
}

BartlettFactor bartlett_sample(arma::uword P, const BartlettParams& p, random::Stream& s,
                               GammaMethod method) {
  const arma::uword m = p.alpha.n_rows();
  if (p.alpha.n_cols() != 1 || m == 0 || m > P) {
    throw Error(
        fmt::format("distributions::bartlett_sample: alpha is {}x{}; need m x 1 with "
                    "1 <= m <= P = {}",
                    p.alpha.n_rows(), p.alpha.n_cols(), P));
  }
  Tape& tape = p.alpha.tape();
  Var c = gamma_sample(p.alpha, p.beta, s, method);
  Var eps = tape.constant(random::normal_matrix(s, P, m));
  Var lower = ad::add(p.mu, ad::mul(p.sigma, eps));
  return {c, bartlett_assemble(c, lower)};
}

Var bartlett_log_prob(const BartlettFactor& f, const BartlettParams& p) {
  const arma::uword P = f.T.n_rows(), m = f.T.n_cols();
  Var lp_gamma = ad::sum(gamma_log_prob(f.c, p.alpha, p.beta));
  Var lp_normal = masked_normal_log_prob_sum(f.T, p.mu, p.sigma, lower_part(arma::ones(P, m), 1));
  return ad::add(lp_gamma, lp_normal);
}

Var weighted_log_abs_diag(const Var& X, const arma::vec& w) {
  const arma::uword k = w.n_elem;
  if (k > X.n_rows() || k > X.n_cols()) {
    throw Error(fmt::format("distributions::weighted_log_abs_diag: {} weights for a {}x{} matrix",
                            k, X.n_rows(), X.n_cols()));
  }
  double v = 0.0;
  for (arma::uword j = 0; j < k; ++j) {
    if (w[j] != 0.0) v += w[j] * std::log(std::abs(X.val()(j, j)));
  }
  return X.tape().record(arma::mat(1, 1, arma::fill::value(v)), {X}, [X, w](ad::Node* out) {
    return [X, w, out] {
      const double g = out->adj[0];
      arma::mat gx(X.n_rows(), X.n_cols(), arma::fill::zeros);
      for (arma::uword j = 0; j < w.n_elem; ++j) gx(j, j) = g * w[j] / X.val()(j, j);
      ad::accumulate(X, gx);
    };
  });
}

Var log_abs_det(const Var& X) {
  if (X.n_rows() != X.n_cols()) {
    throw Error(fmt::format("distributions::log_abs_det: matrix is {}x{}, not square", X.n_rows(),
                            X.n_cols()));
  }
  arma::mat Lf, Uf, Pm;
  if (!arma::lu(Lf, Uf, Pm, X.val())) {
    throw Error(fmt::format("distributions::log_abs_det: LU factorisation of a {}x{} matrix failed",
                            X.n_rows(), X.n_cols()));
  }
  double v = 0.0;
  for (arma::uword j = 0; j < Uf.n_rows; ++j) {
    const double u = Uf(j, j);
    if (!(u != 0.0) || !std::isfinite(u)) {
      throw Error(fmt::format("distributions::log_abs_det: {}x{} matrix is singular (U[{}] = {})",
                              X.n_rows(), X.n_cols(), j, u));
    }
    v += std::log(std::abs(u));
  }
  return X.tape().record(arma::mat(1, 1, arma::fill::value(v)), {X}, [X](ad::Node* out) {
    return [X, out] {
      // X^{-T} via solve(X^T, I); the forward LU is not kept (the backward pass is O(n^3) anyway).
      arma::mat inv_t;
      if (!arma::solve(inv_t, X.val().t(), arma::eye(X.n_rows(), X.n_rows()))) {
        throw Error("distributions::log_abs_det: backward solve failed");
      }
      ad::accumulate(X, out->adj[0] * inv_t);
    };
  });
}

arma::mat trapezoidal_factor(const arma::mat& G, arma::uword m) {
  const arma::uword P = G.n_rows;
  if (G.n_cols != P || m == 0 || m > P) {
    throw Error(fmt::format("distributions::trapezoidal_factor: G is {}x{}, m = {}", G.n_rows,
                            G.n_cols, m));
  }
  arma::mat Lam(P, m, arma::fill::zeros);
  const arma::mat G11 = arma::symmatl(G.submat(0, 0, m - 1, m - 1));
  const arma::mat L11 = linalg::chol(G11, "distributions::trapezoidal_factor G[:m,:m]",
                                     linalg::JitterPolicy{.max_retries = 0});
  Lam.rows(0, m - 1) = L11;
  if (m < P) {
    // Lambda_21 = G_21 L11^{-T}: solve X L11^T = G_21 from the right.
    Lam.rows(m, P - 1) = linalg::tri_solve(L11, G.submat(m, 0, P - 1, m - 1), linalg::Uplo::Lower,
                                           /*trans=*/true, linalg::Side::Right);
  }
  return Lam;
}

}  // namespace dkp::distributions
