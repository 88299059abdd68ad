#include "autodiff/ops_linalg.hpp"

#include <cblas.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "linalg/symmetric.hpp"
#include "util/error.hpp"

namespace dkp::autodiff {

namespace {

using linalg::Side;
using linalg::Uplo;

void check_square(const Var& A, const char* op, const char* where) {
  if (A.n_rows() != A.n_cols()) {
    throw Error(fmt::format("autodiff::{} ('{}'): {}x{} matrix is not square", op, where,
                            A.n_rows(), A.n_cols()));
  }
}

// Coefficient of the jitter's dependence on A: A -> A + jc tr(A) I (0 when no jitter was added or
// the jitter scale did not depend on A).
double jitter_coef(const linalg::CholResult& r, arma::uword n) {
  return (r.jitter_rel > 0.0 && r.scaled_by_mean_diag) ? r.jitter_rel / double(n) : 0.0;
}

// The caller's counters, or else the tape's (Tape::chol_stats).
linalg::CholStats* stats_sink(const Var& A, linalg::CholStats* stats) {
  return stats ? stats : &A.tape().chol_stats();
}

// In place: S <- S + jc tr(S) I, the adjoint w.r.t. A of a symmetric adjoint S w.r.t.
// A + jc tr(A) I (the jitter's own dependence on A; nothing when jc = 0).
void add_jitter_term(arma::mat& S, double jc) {
  if (jc != 0.0) S.diag() += jc * arma::trace(S);
}

// In place: S <- sym(S) + jc tr(S) I, the symmetric adjoint w.r.t. A of an adjoint S w.r.t.
// A + c(A) I.
void symmetrise_with_jitter(arma::mat& S, double jc) {
  linalg::symmetric_sum_inplace(S, 0.5);
  add_jitter_term(S, jc);
}

}  // namespace

Var cholesky(const Var& A, const char* where, const linalg::JitterPolicy& policy,
             linalg::CholStats* stats, linalg::CholAdjoint how) {
  check_square(A, "cholesky", where);
  linalg::CholResult r = linalg::chol_jittered(A.val(), where, policy, stats_sink(A, stats));
  const double jc = jitter_coef(r, A.n_rows());
  return A.tape().record(std::move(r.L), {A}, [A, jc, how](Node* out) {
    return [A, jc, how, out] {
      const arma::mat& L = out->val;
      if (L.n_rows == 0) return;
      arma::mat S = linalg::chol_adjoint(L, out->adj, how);
      add_jitter_term(S, jc);
      accumulate(A, std::move(S));
    };
  });
}

Var tri_solve(const Var& T, const Var& B, linalg::Uplo uplo, bool trans, linalg::Side side) {
  const bool left = side == Side::Left;
  if (T.n_rows() != T.n_cols() || (left ? B.n_rows() : B.n_cols()) != T.n_rows()) {
    throw Error(
        fmt::format("autodiff::tri_solve: {} side with a {}x{} triangular factor and a "
                    "{}x{} right-hand side",
                    left ? "left" : "right", T.n_rows(), T.n_cols(), B.n_rows(), B.n_cols()));
  }
  // T's leaf inverses serve this solve and the adjoint's (same right-hand-side count).
  std::shared_ptr<const linalg::TriLeaves> leaves =
      linalg::tri_leaves(T.val(), uplo, left ? B.n_cols() : B.n_rows());
  arma::mat X = linalg::tri_solve(T.val(), B.val(), uplo, trans, side, leaves.get());
  return T.tape().record(std::move(X), {T, B}, [T, B, uplo, trans, side, left, leaves](Node* out) {
    return [T, B, uplo, trans, side, left, leaves, out] {
      const arma::mat& X = out->val;
      // Bbar = op(T)^{-T} Xbar (left) or Xbar op(T)^{-T} (right).
      arma::mat Bbar = linalg::tri_solve(T.val(), out->adj, uplo, !trans, side, leaves.get());
      if (T.needs_grad()) {
        // Tbar = -(op(T)bar or its transpose), confined to the triangle that was read:
        //   left:  -Bbar X^T (T) or -X Bbar^T (T^T);  right: -X^T Bbar (T) or -Bbar^T X (T^T).
        // Only that triangle is computed (about half the flops of the full product), and only
        // its diagonal blocks when T's diagonal alone is used (Node::adj_diag_only: the same
        // dgemm calls for those blocks, so the same diagonal).
        arma::mat& Tbar = T.node()->adj_ref();
        const arma::mat& P = left == trans ? X : Bbar;
        const arma::mat& Q = left == trans ? Bbar : X;
        linalg::add_tri_product(Tbar, uplo, P, Q, !left, -1.0, T.node()->adj_diag_only);
      }
      accumulate(B, std::move(Bbar));
    };
  });
}

Var solve_lower(const Var& L, const Var& B, bool trans) {
  return tri_solve(L, B, Uplo::Lower, trans, Side::Left);
}

Var solve_upper(const Var& U, const Var& B, bool trans) {
  return tri_solve(U, B, Uplo::Upper, trans, Side::Left);
}

Var chol_solve(const Var& L, const Var& B) {
  return solve_lower(L, solve_lower(L, B), true);
}

Var gram_scaled(const Var& V, double alpha) {
  const arma::uword n = V.n_rows(), k = V.n_cols();
  arma::mat C(n, n, arma::fill::zeros);
  if (n > 0 && k > 0) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, int(n), int(k), alpha, V.val().memptr(),
                int(n), 0.0, C.memptr(), int(n));
  }
  // The upper triangle from the lower one: exactly symmetric.
  for (arma::uword j = 1; j < n; ++j) {
    for (arma::uword i = 0; i < j; ++i) C(i, j) = C(j, i);
  }
  return V.tape().record(std::move(C), {V}, [V, alpha](Node* out) {
    return [V, alpha, out] {
      if (!V.needs_grad()) return;
      // d(alpha V V^T) = alpha (dV V^T + V dV^T): Vbar = alpha (G + G^T) V, one dgemm on the
      // symmetrised adjoint (matmul's backward would make two, G V and G^T V).
      const arma::mat S = linalg::symmetric_sum(out->adj, alpha);
      arma::mat g(V.n_rows(), V.n_cols());
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(g.n_rows), int(g.n_cols),
                  int(S.n_cols), 1.0, S.memptr(), int(std::max<arma::uword>(1, S.n_rows)),
                  V.val().memptr(), int(std::max<arma::uword>(1, V.n_rows())), 0.0, g.memptr(),
                  int(std::max<arma::uword>(1, g.n_rows)));
      accumulate(V, std::move(g));
    };
  });
}

Var sq_norm_tri_t_inv(const Var& T, const Var& L) {
  const arma::uword n = L.n_rows();
  if (L.n_cols() != n || T.n_rows() != n || T.n_cols() != n) {
    throw Error(fmt::format("autodiff::sq_norm_tri_t_inv: T {}x{}, L {}x{}", T.n_rows(), T.n_cols(),
                            L.n_rows(), L.n_cols()));
  }
  // L^{-1} (lower, dtrtri) and M = T^T L^{-1}, both kept for the adjoint.
  auto Linv = std::make_shared<const arma::mat>(linalg::tri_inverse(L.val(), Uplo::Lower));
  auto M = std::make_shared<const arma::mat>(linalg::lower_t_times_lower(T.val(), *Linv));
  arma::mat v(1, 1);
  v(0, 0) = arma::accu(arma::square(*M));
  return T.tape().record(std::move(v), {T, L}, [T, L, Linv, M](Node* out) {
    return [T, L, Linv, M, out] {
      const double g = out->adj(0, 0);
      if (T.needs_grad()) {
        // Tbar = 2 g tril(L^{-1} M^T): d||M||^2 = 2 tr(M^T dT^T L^{-1}).
        arma::mat& Tbar = T.node()->adj_ref();
        if (T.node()->adj_diag_only) {
          // (L^{-1} M^T)_kk = sum_j (L^{-1})_kj M_kj: row sums of the elementwise product.
          Tbar.diag() += 2.0 * g * arma::vec(arma::sum(*Linv % *M, 1));
        } else {
          linalg::add_tri_product(Tbar, Uplo::Lower, *Linv, *M, false, 2.0 * g);
        }
      }
      if (L.needs_grad()) {
        const arma::uword n = M->n_rows;
        // dM = -M dL L^{-1}: d||M||^2 = -2 tr(L^{-1} M^T M dL), so Lbar = -2 g tril(M^T M L^{-T}).
        const int ni = int(n);
        arma::mat S(n, n);
        cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, ni, ni, -2.0 * g, M->memptr(), ni, 0.0,
                    S.memptr(), ni);
        for (arma::uword j = 1; j < n; ++j) {
          for (arma::uword i = 0; i < j; ++i) S(i, j) = S(j, i);
        }
        accumulate(L, linalg::tril_times_lower_t(S, *Linv));
      }
    };
  });
}

Var times_iw_factor(const Var& Xi, const Var& Xt, const Var& L, const Var& T) {
  const arma::uword n = L.n_rows(), mi = Xi.n_rows(), mt = Xt.n_rows(), m = mi + mt;
  if (L.n_cols() != n || T.n_rows() != n || T.n_cols() != n || Xi.n_cols() != n ||
      Xt.n_cols() != n) {
    throw Error(fmt::format("autodiff::times_iw_factor: Xi {}x{}, Xt {}x{}, L {}x{}, T {}x{}", mi,
                            Xi.n_cols(), mt, Xt.n_cols(), n, L.n_cols(), T.n_rows(), T.n_cols()));
  }
  auto X = std::make_shared<const arma::mat>(arma::join_vert(Xi.val(), Xt.val()));
  // Y = (X L) T^{-T}: dtrmm, then the right solve Y T^T = X L on the m x n product. T's leaf
  // inverses serve this solve and the adjoint's (same right-hand-side count).
  arma::mat Y = *X;
  if (m > 0 && n > 0) {
    cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, int(m), int(n),
                1.0, L.val().memptr(), int(n), Y.memptr(), int(m));
  }
  std::shared_ptr<const linalg::TriLeaves> leaves = linalg::tri_leaves(T.val(), Uplo::Lower, m);
  linalg::tri_solve_inplace(T.val(), Y, Uplo::Lower, /*trans=*/true, Side::Right, leaves.get());
  return T.tape().record(std::move(Y), {Xi, Xt, L, T}, [Xi, Xt, L, T, X, leaves](Node* out) {
    return [Xi, Xt, L, T, X, leaves, out] {
      const arma::mat& Y = out->val;
      const arma::uword n = L.n_rows(), mi = Xi.n_rows(), m = Y.n_rows;
      // R = Ybar T^{-1}. F = L T^{-T} has the adjoint Fbar = X^T Ybar, and
      //   Lbar = Fbar T^{-1} = X^T R,   Tbar = -tril(Lbar^T F) = -tril(R^T X F) = -tril(R^T Y),
      // so the n x n Fbar (and its n^3-flop solve) is never formed.
      const arma::mat R = linalg::tri_solve(T.val(), out->adj, Uplo::Lower, /*trans=*/false,
                                            Side::Right, leaves.get());
      // Xbar = Ybar F^T = R L^T, block by block for the inputs that need it.
      const auto x_adjoint = [&](const Var& Xp, arma::uword r0, arma::uword r1) {
        if (!Xp.needs_grad() || r1 == r0) return;
        arma::mat g = R.rows(r0, r1 - 1);
        cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, int(g.n_rows),
                    int(n), 1.0, L.val().memptr(), int(n), g.memptr(), int(g.n_rows));
        accumulate(Xp, std::move(g));
      };
      x_adjoint(Xi, 0, mi);
      x_adjoint(Xt, mi, m);
      // Lbar = tril(X^T R): only L's lower triangle is read.
      if (L.needs_grad())
        linalg::add_tri_product(L.node()->adj_ref(), Uplo::Lower, *X, R, true, 1.0);
      if (T.needs_grad()) {
        arma::mat& Tbar = T.node()->adj_ref();
        if (T.node()->adj_diag_only) {
          // (R^T Y)_kk = sum_i R_ik Y_ik: column sums of the elementwise product.
          Tbar.diag() -= arma::vec(arma::sum(R % Y, 0).t());
        } else {
          linalg::add_tri_product(Tbar, Uplo::Lower, R, Y, true, -1.0);
        }
      }
    };
  });
}

Var logdet_chol(const Var& L) {
  if (L.n_rows() != L.n_cols()) {
    throw Error(
        fmt::format("autodiff::logdet_chol: factor is {}x{}, not square", L.n_rows(), L.n_cols()));
  }
  const double v = 2.0 * arma::accu(arma::log(L.val().diag()));
  return L.tape().record(arma::mat(1, 1, arma::fill::value(v)), {L}, [L](Node* out) {
    return [L, out] { L.node()->adj_ref().diag() += (2.0 * out->adj[0]) / L.val().diag(); };
  });
}

Var spd_inverse(const Var& A, const char* where, const linalg::JitterPolicy& policy,
                linalg::CholStats* stats) {
  check_square(A, "spd_inverse", where);
  const linalg::CholResult r = linalg::chol_jittered(A.val(), where, policy, stats_sink(A, stats));
  const double jc = jitter_coef(r, A.n_rows());
  return A.tape().record(linalg::chol_inverse(r.L), {A}, [A, jc](Node* out) {
    return [A, jc, out] {
      const arma::mat& Ainv = out->val;
      const arma::mat G = linalg::symmetric_sum(out->adj, -0.5);
      arma::mat S = Ainv * G * Ainv;  // symmetric up to round-off; symmetrised below
      symmetrise_with_jitter(S, jc);
      accumulate(A, std::move(S));
    };
  });
}

Var spd_solve(const Var& A, const Var& B, const char* where, const linalg::JitterPolicy& policy,
              linalg::CholStats* stats) {
  check_square(A, "spd_solve", where);
  if (B.n_rows() != A.n_rows()) {
    throw Error(fmt::format("autodiff::spd_solve ('{}'): {}x{} matrix and {}x{} right-hand side",
                            where, A.n_rows(), A.n_cols(), B.n_rows(), B.n_cols()));
  }
  linalg::CholResult r = linalg::chol_jittered(A.val(), where, policy, stats_sink(A, stats));
  const double jc = jitter_coef(r, A.n_rows());
  arma::mat X = linalg::chol_solve(r.L, B.val());
  return A.tape().record(std::move(X), {A, B}, [A, B, jc, L = std::move(r.L)](Node* out) mutable {
    return [A, B, jc, L = std::move(L), out] {
      arma::mat Bbar = linalg::chol_solve(L, out->adj);
      if (A.needs_grad()) {
        arma::mat S = Bbar * out->val.t();
        S *= -1.0;
        symmetrise_with_jitter(S, jc);
        accumulate(A, std::move(S));
      }
      accumulate(B, std::move(Bbar));
    };
  });
}

Var logdet_spd(const Var& A, const char* where, const linalg::JitterPolicy& policy,
               linalg::CholStats* stats) {
  check_square(A, "logdet_spd", where);
  linalg::CholResult r = linalg::chol_jittered(A.val(), where, policy, stats_sink(A, stats));
  const double jc = jitter_coef(r, A.n_rows());
  const double v = linalg::logdet_chol(r.L);
  return A.tape().record(arma::mat(1, 1, arma::fill::value(v)), {A},
                         [A, jc, L = std::move(r.L)](Node* out) mutable {
                           return [A, jc, L = std::move(L), out] {
                             arma::mat S = linalg::chol_inverse(L);
                             S *= out->adj[0];
                             add_jitter_term(S, jc);
                             accumulate(A, std::move(S));
                           };
                         });
}

}  // namespace dkp::autodiff
