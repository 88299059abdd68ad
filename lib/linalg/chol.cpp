#include "linalg/chol.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "linalg/symmetric.hpp"
#include "linalg/triangular.hpp"

extern "C" {
// LAPACK: inverse of an SPD matrix from its Cholesky factor (the trailing argument is the
// Fortran hidden length of `uplo`).
void dpotri_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t uplo_len);
// LAPACK: reduction of a symmetric-definite generalised eigenproblem to standard form; with
// itype 1 and uplo "L", A <- inv(L) A inv(L)^T on A's lower triangle.
void dsygst_(const int* itype, const char* uplo, const int* n, double* a, const int* lda,
             const double* b, const int* ldb, int* info, size_t uplo_len);
}

namespace dkp::linalg {

namespace {

constexpr const char* kHints =
    "Hints: standardise the inputs and outputs; lower the learning rate; check the data for NaNs "
    "and constant columns.";

std::string describe_failure(const std::string& where, arma::uword n, double min_diag,
                             double mean_diag, bool has_nan, bool has_inf,
                             const std::vector<double>& jitter) {
  std::string msg =
      fmt::format("Cholesky factorisation failed in '{}': the {}x{} matrix ", where, n, n);
  if (has_nan || has_inf) {
    msg += fmt::format("contains {} (no jitter tried; jitter cannot repair non-finite entries)",
                       has_nan && has_inf ? "NaN and Inf" : (has_nan ? "NaN" : "Inf"));
  } else {
    msg += "is not positive definite";
  }
  msg +=
      fmt::format(" [min diagonal {:.6g}, mean diagonal {:.6g}, NaN present: {}, Inf present: {}",
                  min_diag, mean_diag, has_nan ? "yes" : "no", has_inf ? "yes" : "no");
  if (!jitter.empty()) {
    msg += fmt::format(", jitter tried: {} values from {:.3g} to {:.3g}", jitter.size(),
                       jitter.front(), jitter.back());
  } else if (!has_nan && !has_inf) {
    msg += ", jitter disabled";
  }
  msg += "]. ";
  msg += kHints;
  return msg;
}

// Relative asymmetry test on the strict lower triangle against the upper one.
bool is_symmetric(const arma::mat& A, double scale) {
  const double tol = 1e-8 * std::max(scale, 1e-300);
  // The strict lower triangle against its mirror image.
  return for_each_strict_lower_tiled(A.n_rows, [&A, tol](arma::uword i, arma::uword j) {
    return std::abs(A.at(i, j) - A.at(j, i)) <= tol;
  });
}

}  // namespace

void CholStats::merge(const CholStats& o) {
  factorisations += o.factorisations;
  jittered += o.jittered;
  retries += o.retries;
  failures += o.failures;
  max_jitter_rel = std::max(max_jitter_rel, o.max_jitter_rel);
  max_jitter_abs = std::max(max_jitter_abs, o.max_jitter_abs);
}

NotPsdError::NotPsdError(std::string where, arma::uword n, double min_diag, double mean_diag,
                         bool has_nan, bool has_inf, std::vector<double> jitter_tried)
    : Error(describe_failure(where, n, min_diag, mean_diag, has_nan, has_inf, jitter_tried)),
      where_(std::move(where)),
      n_(n),
      min_diag_(min_diag),
      mean_diag_(mean_diag),
      has_nan_(has_nan),
      has_inf_(has_inf),
      jitter_tried_(std::move(jitter_tried)) {}

CholResult chol_jittered(const arma::mat& A, const char* where, const JitterPolicy& policy,
                         CholStats* stats) {
  if (A.n_rows != A.n_cols) {
    throw Error(
        fmt::format("linalg::chol in '{}': {}x{} matrix is not square", where, A.n_rows, A.n_cols));
  }
  const arma::uword n = A.n_rows;
  CholResult res;
  if (n == 0) {
    if (stats) ++stats->factorisations;
    return res;
  }
  const arma::vec d = A.diag();
  const double min_diag = d.min(), mean_diag = arma::mean(d);
  if (!A.is_finite()) {
    const bool has_nan = A.has_nan();
    const bool has_inf = A.has_inf();
    if (stats) ++stats->failures;
    throw NotPsdError(where, n, min_diag, mean_diag, has_nan, has_inf, {});
  }
  if (!is_symmetric(A, arma::abs(d).max())) {
    throw Error(
        fmt::format("linalg::chol in '{}': {}x{} matrix is not symmetric (relative "
                    "tolerance 1e-8)",
                    where, n, n));
  }

  if (arma::chol(res.L, A, "lower")) {
    if (stats) ++stats->factorisations;
    return res;
  }

  const double scale = mean_diag > 0.0 ? mean_diag : 1.0;
  std::vector<double> tried;
  double rel = policy.initial;
  arma::mat Aj = A;
  for (int k = 0; k < policy.max_retries; ++k, rel *= policy.growth) {
    const double jitter = rel * scale;
    spdlog::warn(
        "chol '{}': {}x{} matrix not positive definite (min diagonal {:.3g}); retry {}/{} with "
        "jitter {:.1e} x mean diagonal = {:.3g}",
        where, n, n, min_diag, k + 1, policy.max_retries, rel, jitter);
    tried.push_back(jitter);
    ++res.retries;
    Aj.diag() = d + jitter;
    if (arma::chol(res.L, Aj, "lower")) {
      res.jitter = jitter;
      res.jitter_rel = rel;
      res.scaled_by_mean_diag = mean_diag > 0.0;
      if (stats) {
        ++stats->factorisations;
        ++stats->jittered;
        stats->retries += size_t(res.retries);
        stats->max_jitter_rel = std::max(stats->max_jitter_rel, rel);
        stats->max_jitter_abs = std::max(stats->max_jitter_abs, jitter);
      }
      return res;
    }
  }
  if (stats) {
    stats->retries += size_t(res.retries);
    ++stats->failures;
  }
  throw NotPsdError(where, n, min_diag, mean_diag, false, false, std::move(tried));
}

arma::mat chol(const arma::mat& A, const char* where, const JitterPolicy& policy,
               CholStats* stats) {
  return chol_jittered(A, where, policy, stats).L;
}

double logdet_chol(const arma::mat& L) {
  if (L.n_rows != L.n_cols) {
    throw Error(
        fmt::format("linalg::logdet_chol: factor is {}x{}, not square", L.n_rows, L.n_cols));
  }
  return 2.0 * arma::accu(arma::log(L.diag()));
}

arma::mat chol_solve(const arma::mat& L, const arma::mat& B) {
  arma::mat X = B;
  const auto leaves = tri_leaves(L, Uplo::Lower, X.n_cols);
  tri_solve_inplace(L, X, Uplo::Lower, false, Side::Left, leaves.get());
  tri_solve_inplace(L, X, Uplo::Lower, true, Side::Left, leaves.get());
  return X;
}

arma::mat chol_inverse(const arma::mat& L) {
  if (L.n_rows != L.n_cols) {
    throw Error(
        fmt::format("linalg::chol_inverse: factor is {}x{}, not square", L.n_rows, L.n_cols));
  }
  arma::mat X = L;
  if (X.n_elem == 0) return X;
  const int n = int(X.n_rows);
  int info = 0;
  const char uplo = 'L';
  dpotri_(&uplo, &n, X.memptr(), &n, &info, 1);
  if (info != 0) {
    throw Error(
        fmt::format("linalg::chol_inverse: singular {}x{} factor (dpotri info {})", n, n, info));
  }
  return arma::symmatl(X);
}

namespace {

void zero_strict_upper(arma::mat& M) {
  for (arma::uword j = 1; j < M.n_cols; ++j) std::fill_n(M.colptr(j), std::min(j, M.n_rows), 0.0);
}

// Width of the column blocks of Phi(L^T Lbar) in the congruence adjoint: one dtrmm each, on the
// block's rows from its diagonal down (12 calls for n = 3072).
constexpr arma::uword kPhiBlock = 256;

// Square tiles of the index-reversing copies below (two 64 x 64 tiles of doubles fit in L1).
constexpr arma::uword kTile = 64;

// Calls f(i, j) for every entry of an n x n matrix, tile by tile (i fastest within a column of
// a tile), or only for i >= j when `lower`.
template <class F>
void for_each_tiled(arma::uword n, bool lower, F&& f) {
  for (arma::uword jb = 0; jb < n; jb += kTile) {
    for (arma::uword ib = lower ? jb : 0; ib < n; ib += kTile) {
      const arma::uword je = std::min(n, jb + kTile), ie = std::min(n, ib + kTile);
      for (arma::uword j = jb; j < je; ++j) {
        for (arma::uword i = lower ? std::max(ib, j) : ib; i < ie; ++i) f(i, j);
      }
    }
  }
}

// alpha J X^T J: Y(i, j) = alpha X(n-1-j, n-1-i), tiled (flipud(fliplr(X.t())) took 4x as long
// on n = 3072).
arma::mat reversed_transpose(const arma::mat& X, double alpha) {
  const arma::uword n = X.n_rows, m = n - 1;
  arma::mat Y(n, n);
  for_each_tiled(n, false,
                 [&](arma::uword i, arma::uword j) { Y(i, j) = alpha * X(m - j, m - i); });
  return Y;
}

// The symmetric S whose reversal J S J has the lower triangle of A: S(i, j) = S(j, i) =
// A(n-1-j, n-1-i) for i >= j.
arma::mat symmetric_from_reversed_lower(const arma::mat& A) {
  const arma::uword n = A.n_rows, m = n - 1;
  arma::mat S(n, n);
  for_each_tiled(n, true,
                 [&](arma::uword i, arma::uword j) { S(i, j) = S(j, i) = A(m - j, m - i); });
  return S;
}

}  // namespace

arma::mat chol_adjoint(const arma::mat& L, arma::mat Lbar, CholAdjoint how) {
  if (L.n_rows != L.n_cols || Lbar.n_rows != L.n_rows || Lbar.n_cols != L.n_cols) {
    throw Error(fmt::format("linalg::chol_adjoint: factor {}x{}, adjoint {}x{}", L.n_rows, L.n_cols,
                            Lbar.n_rows, Lbar.n_cols));
  }
  const int n = int(L.n_rows);
  arma::mat& P = Lbar;
  if (n == 0) return P;
  zero_strict_upper(P);
  if (how == CholAdjoint::Solves) {
    // P = Phi(L^T Lbar).
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, n, n, 1.0,
                L.memptr(), n, P.memptr(), n);
    zero_strict_upper(P);
    P.diag() *= 0.5;
    // S = L^{-T} P L^{-1}, then the symmetric part (both solves with L's leaf inverses).
    const auto leaves = tri_leaves(L, Uplo::Lower, L.n_rows);
    tri_solve_inplace(L, P, Uplo::Lower, true, Side::Left, leaves.get());
    tri_solve_inplace(L, P, Uplo::Lower, false, Side::Right, leaves.get());
    symmetric_sum_inplace(P, 0.5);
    return P;
  }
  // The lower triangle of L^T Lbar, block column by block column: rows j0.. of columns
  // j0 .. j0 + b - 1 are L[j0:, j0:]^T Lbar[j0:, j0:j0+b] (Lbar is zero above its diagonal).
  for (arma::uword j0 = 0; j0 < L.n_rows; j0 += kPhiBlock) {
    const arma::uword b = std::min(kPhiBlock, L.n_rows - j0), m = L.n_rows - j0;
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, int(m), int(b), 1.0,
                L.colptr(j0) + j0, n, P.colptr(j0) + j0, n);
  }
  zero_strict_upper(P);
  // M = sym(Phi(.)) = (P + P^T) / 2 with Phi's halved diagonal: M_ij = P_ij / 2 for i >= j, so
  // sym(L^{-T} Phi L^{-1}) = L^{-T} M L^{-1}. Reversed: A = J M J, whose lower triangle
  // A(i, j) = P(n-1-j, n-1-i) / 2 is what dsygst reads, and B = J L^T J (lower).
  arma::mat A = reversed_transpose(P, 0.5);
  const arma::mat B = reversed_transpose(L, 1.0);
  const int itype = 1;
  int info = 0;
  dsygst_(&itype, "L", &n, A.memptr(), &n, B.memptr(), &n, &info, 1);
  if (info != 0) throw Error(fmt::format("linalg::chol_adjoint: dsygst info {} (n = {})", info, n));
  // A's lower triangle is that of J S J.
  return symmetric_from_reversed_lower(A);
}

}  // namespace dkp::linalg
