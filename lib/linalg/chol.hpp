// The one checked Cholesky factorisation of the project (DESIGN.md section 4, practices.md
// Practice 7), and what is computed from a factor: log-determinants, solves and inverses.
//
//   arma::mat L = linalg::chol(K, "layer 2 K_uu", policy, &stats);   // K = L L^T, L lower
//
// When LAPACK's dpotrf fails, the factorisation is retried on A + c I with a bounded, logged
// jitter schedule c = r * mean(diag(A)), r = initial, initial * growth, ... (max_retries tries;
// 1e-8 .. 1e-4 by default). Every retry is logged with spdlog::warn and counted in the CholStats
// the caller passes in (there is no hidden global counter: callers aggregate their stats and
// report them in the run metrics). When the schedule is exhausted, or the input has NaN/Inf
// entries (which no jitter can fix), a NotPsdError names the caller, the size, min(diag), NaN/Inf
// presence and the jitter tried, followed by the usual remedies.
#pragma once

#include <armadillo>
#include <string>
#include <vector>

#include "util/error.hpp"

namespace dkp::linalg {

/// Jitter schedule of chol(): relative jitter initial * growth^k for k = 0 .. max_retries-1,
/// scaled by mean(diag(A)) (by 1 when that mean is not positive).
struct JitterPolicy {
  double initial = 1e-8;  ///< first relative jitter
  double growth = 10.0;   ///< factor between successive retries
  int max_retries = 5;    ///< 0: no jitter, fail at once
};

/// Counters of chol() calls; pass one in and aggregate (merge) in the caller.
struct CholStats {
  size_t factorisations = 0;   ///< successful factorisations
  size_t jittered = 0;         ///< of which needed jitter
  size_t retries = 0;          ///< jittered attempts in total (successful or not)
  size_t failures = 0;         ///< calls that threw NotPsdError
  double max_jitter_rel = 0.;  ///< largest relative jitter that was needed
  double max_jitter_abs = 0.;  ///< largest absolute jitter that was needed

  void merge(const CholStats& o);
};

/// A matrix that is not (numerically) positive definite even after the jitter schedule.
class NotPsdError : public Error {
 public:
  NotPsdError(std::string where, arma::uword n, double min_diag, double mean_diag, bool has_nan,
              bool has_inf, std::vector<double> jitter_tried);

  const std::string& where() const { return where_; }
  arma::uword size() const { return n_; }  ///< the matrix is size() x size()
  double min_diag() const { return min_diag_; }
  double mean_diag() const { return mean_diag_; }
  bool has_nan() const { return has_nan_; }
  bool has_inf() const { return has_inf_; }
  /// Absolute jitter values added to the diagonal, in the order tried (empty for NaN/Inf input).
  const std::vector<double>& jitter_tried() const { return jitter_tried_; }

 private:
  std::string where_;
  arma::uword n_;
  double min_diag_, mean_diag_;
  bool has_nan_, has_inf_;
  std::vector<double> jitter_tried_;
};

/// A factorisation and the jitter it needed: A + jitter I = L L^T.
struct CholResult {
  arma::mat L;
  double jitter = 0.0;      ///< absolute jitter added to the diagonal (0: none)
  double jitter_rel = 0.0;  ///< the same relative to the diagonal scale (jitter = rel * scale)
  /// True when the scale was mean(diag(A)) (it is 1 when that mean is not positive): the jitter
  /// then depends on A, jitter = jitter_rel * tr(A) / n, which exact adjoints account for.
  bool scaled_by_mean_diag = false;
  int retries = 0;  ///< jittered attempts made
};

/// Lower Cholesky factor of a symmetric matrix with the jitter schedule above.
/// @param where names the caller in log lines and errors (e.g. "layer 1 K_uu")
/// @throws dkp::Error if A is not square or not symmetric (relative tolerance 1e-8)
/// @throws NotPsdError if A has NaN/Inf entries or the schedule is exhausted
CholResult chol_jittered(const arma::mat& A, const char* where, const JitterPolicy& policy = {},
                         CholStats* stats = nullptr);

/// Lower factor L with A (+ jitter I) = L L^T; see chol_jittered.
arma::mat chol(const arma::mat& A, const char* where, const JitterPolicy& policy = {},
               CholStats* stats = nullptr);

/// log det(A) = 2 sum_i log L_ii from the lower factor of A.
double logdet_chol(const arma::mat& L);

/// A^{-1} B from the lower factor of A (two triangular solves).
arma::mat chol_solve(const arma::mat& L, const arma::mat& B);

/// A^{-1} (symmetric) from the lower factor of A (LAPACK dpotri).
arma::mat chol_inverse(const arma::mat& L);

/// How chol_adjoint computes A's adjoint. Both give the same matrix up to round-off.
enum class CholAdjoint {
  /// Phi(L^T Lbar) by one dtrmm on the whole square, then L^{-T} (.) L^{-1} by two triangular
  /// solves and the symmetric part: about 3 n^3 flops. The default of autodiff::cholesky; the
  /// stored result cells were made with it, so it stays as it is, to the last bit.
  Solves,
  /// Phi(L^T Lbar) by dtrmm calls on its lower triangle only (n^3 / 3 flops), then the symmetric
  /// congruence L^{-T} sym(.) L^{-1} by LAPACK's dsygst (n^3 flops) on the index-reversed matrix
  /// (dsygst forms inv(L) A inv(L)^T for a lower L; J L^T J is lower for the reversal J):
  /// about 4 n^3 / 3 flops in all. Faster from n of about 1000; at a few hundred dsygst's
  /// unblocked diagonal blocks make it slower than Solves.
  Congruence,
};

/// The adjoint of a symmetric A given the adjoint Lbar of its lower Cholesky factor L (only
/// Lbar's lower triangle is read): sym(L^{-T} Phi(L^T Lbar) L^{-1}), Phi keeping the lower
/// triangle and halving the diagonal (Murray 2016, "Differentiation of the Cholesky
/// decomposition"). Symmetric; a jitter term, if any, is the caller's.
/// @throws dkp::Error on mismatched sizes or a dsygst failure
arma::mat chol_adjoint(const arma::mat& L, arma::mat Lbar, CholAdjoint how = CholAdjoint::Solves);

}  // namespace dkp::linalg
