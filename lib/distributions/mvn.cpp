#include "distributions/mvn.hpp"

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

namespace ad = autodiff;

namespace {
constexpr double kLog2Pi = 1.83787706640934548356;
}  // namespace

Var mvn_log_prob(const Var& X, const Var& M, const Var& L) {
  const arma::uword P = X.n_rows(), n = X.n_cols();
  if (L.n_rows() != P || L.n_cols() != P || M.n_rows() != P ||
      (M.n_cols() != n && M.n_cols() != 1)) {
    throw Error(fmt::format("distributions::mvn_log_prob: X is {}x{}, M {}x{}, L {}x{}", P, n,
                            M.n_rows(), M.n_cols(), L.n_rows(), L.n_cols()));
  }
  Var D = (M.n_cols() == n) ? ad::sub(X, M) : ad::add_each_col(X, ad::neg(M));
  Var Z = ad::solve_lower(L, D);
  Var quad = ad::scale(ad::sum(ad::square(Z)), -0.5);
  Var logdet = ad::scale(ad::logdet_chol(L), -0.5 * static_cast<double>(n));
  return ad::add_scalar(ad::add(quad, logdet), -0.5 * static_cast<double>(n * P) * kLog2Pi);
}

Var matrix_normal_sample(const Var& M, const Var& L_row, const Var& L_col, random::Stream& s) {
  const arma::uword n = M.n_rows(), p = M.n_cols();
  if (L_row.n_rows() != n || L_row.n_cols() != n || L_col.n_rows() != p || L_col.n_cols() != p) {
    throw Error(
        fmt::format("distributions::matrix_normal_sample: M is {}x{}, L_row {}x{}, L_col "
                    "{}x{}",
                    n, p, L_row.n_rows(), L_row.n_cols(), L_col.n_rows(), L_col.n_cols()));
  }
  Var E = M.tape().constant(random::normal_matrix(s, n, p));
  return ad::add(M, ad::matmul(ad::matmul(L_row, E), L_col, false, true));
}

Var matrix_normal_sample(const Var& M, const Var& L_row, random::Stream& s) {
  const arma::uword n = M.n_rows(), p = M.n_cols();
  if (L_row.n_rows() != n || L_row.n_cols() != n) {
    throw Error(fmt::format("distributions::matrix_normal_sample: M is {}x{}, L_row {}x{}", n, p,
                            L_row.n_rows(), L_row.n_cols()));
  }
  Var E = M.tape().constant(random::normal_matrix(s, n, p));
  return ad::add(M, ad::matmul(L_row, E));
}

Var rowwise_normal_sample(const Var& M, const Var& sd, random::Stream& s) {
  const arma::uword n = M.n_rows(), p = M.n_cols();
  if (sd.n_rows() != n || sd.n_cols() != 1) {
    throw Error(fmt::format("distributions::rowwise_normal_sample: M is {}x{}, sd {}x{}", n, p,
                            sd.n_rows(), sd.n_cols()));
  }
  return ad::add_scaled_noise(M, random::normal_matrix(s, n, p), sd);
}

}  // namespace dkp::distributions
