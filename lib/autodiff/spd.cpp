#include "autodiff/spd.hpp"

#include <cmath>

#include <fmt/format.h>

#include "linalg/chol.hpp"
#include "linalg/symmetric.hpp"
#include "util/error.hpp"

namespace dkp::autodiff {

namespace {

void check_square(const arma::mat& U) {
  if (U.n_rows != U.n_cols) {
    throw Error(fmt::format("autodiff::spd_from_unconstrained: {}x{} matrix is not square",
                            U.n_rows, U.n_cols));
  }
}

double softplus(double x) {
  return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double sigmoid(double x) {
  return x >= 0.0 ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x) / (1.0 + std::exp(x));
}

}  // namespace

arma::mat spd_factor_from_unconstrained(const arma::mat& U) {
  check_square(U);
  arma::mat L = arma::trimatl(U);
  for (arma::uword i = 0; i < L.n_rows; ++i) L(i, i) = softplus(U(i, i));
  return L;
}

arma::mat spd_from_unconstrained(const arma::mat& U, double eps) {
  const arma::mat L = spd_factor_from_unconstrained(U);
  arma::mat A = L * L.t();
  A.diag() += eps;
  return arma::symmatl(A);
}

arma::mat unconstrained_from_spd(const arma::mat& A, double eps) {
  arma::mat B = A;
  B.diag() -= eps;
  arma::mat U = linalg::chol(B, "unconstrained_from_spd");
  for (arma::uword i = 0; i < U.n_rows; ++i) U(i, i) = std::log(std::expm1(U(i, i)));
  return U;
}

Var spd_from_unconstrained(const Var& U, double eps) {
  arma::mat L = spd_factor_from_unconstrained(U.val());
  arma::mat A = L * L.t();
  A.diag() += eps;
  A = arma::symmatl(A);
  return U.tape().record(std::move(A), {U}, [U, L = std::move(L)](Node* out) mutable {
    return [U, L = std::move(L), out] {
      arma::mat Lbar = linalg::symmetric_sum(out->adj) * L;
      Lbar = arma::trimatl(Lbar);
      for (arma::uword i = 0; i < Lbar.n_rows; ++i) Lbar(i, i) *= sigmoid(U.val()(i, i));
      accumulate(U, Lbar);
    };
  });
}

}  // namespace dkp::autodiff
