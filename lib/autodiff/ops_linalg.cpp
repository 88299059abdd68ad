#include "autodiff/ops_linalg.hpp"

#include <cblas.h>

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

// Adds g into v's adjoint, moving it in when the adjoint is not allocated yet (saves a zero fill
// and a pass over fresh memory for large right-hand sides).
void accumulate_move(const Var& v, arma::mat&& g) {
  if (!v.needs_grad()) return;
  Node* n = v.node();
  if (n->has_adj())
    n->adj += g;
  else
    n->adj = std::move(g);
}

// Zeroes the strict upper triangle in place: O(n^2), no temporaries.
void zero_strict_upper(arma::mat& M) {
  for (arma::uword j = 1; j < M.n_cols; ++j) {
    double* col = M.colptr(j);
    for (arma::uword i = 0; i < std::min(j, M.n_rows); ++i) col[i] = 0.0;
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

// In place: S <- sym(S) + jc tr(S) I, the symmetric adjoint w.r.t. A of an adjoint S w.r.t.
// A + c(A) I.
void symmetrise_with_jitter(arma::mat& S, double jc) {
  linalg::symmetric_sum_inplace(S, 0.5);
  if (jc != 0.0) S.diag() += jc * arma::trace(S);
}

}  // namespace

Var cholesky(const Var& A, const char* where, const linalg::JitterPolicy& policy,
             linalg::CholStats* stats) {
  check_square(A, "cholesky", where);
  linalg::CholResult r = linalg::chol_jittered(A.val(), where, policy, stats_sink(A, stats));
  const double jc = jitter_coef(r, A.n_rows());
  return A.tape().record(std::move(r.L), {A}, [A, jc](Node* out) {
    return [A, jc, out] {
      const arma::mat& L = out->val;
      const int n = int(L.n_rows);
      if (n == 0) return;
      // P = Phi(L^T Lbar) with Lbar the lower triangle of the output adjoint.
      arma::mat P = out->adj;
      zero_strict_upper(P);
      cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, n, n, 1.0,
                  L.memptr(), n, P.memptr(), n);
      zero_strict_upper(P);
      P.diag() *= 0.5;
      // S = L^{-T} P L^{-1}, then the symmetric part (both solves with L's leaf inverses).
      const auto leaves = linalg::tri_leaves(L, Uplo::Lower, L.n_rows);
      linalg::tri_solve_inplace(L, P, Uplo::Lower, true, Side::Left, leaves.get());
      linalg::tri_solve_inplace(L, P, Uplo::Lower, false, Side::Right, leaves.get());
      symmetrise_with_jitter(P, jc);
      accumulate_move(A, std::move(P));
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
      accumulate_move(B, std::move(Bbar));
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
      accumulate_move(A, std::move(S));
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
        accumulate_move(A, std::move(S));
      }
      accumulate_move(B, std::move(Bbar));
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
                             if (jc != 0.0) S.diag() += jc * arma::trace(S);
                             accumulate_move(A, std::move(S));
                           };
                         });
}

}  // namespace dkp::autodiff
