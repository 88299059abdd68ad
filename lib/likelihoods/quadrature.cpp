#include "likelihoods/quadrature.hpp"

#include <cmath>

#include "util/error.hpp"

namespace dkp::likelihoods {

GaussHermite gauss_hermite(size_t points) {
  if (points == 0) throw ConfigError("Gauss-Hermite quadrature needs at least 1 point");
  // Golub-Welsch: the nodes are the eigenvalues of the Jacobi matrix of the Hermite
  // polynomials, the weights sqrt(pi) times the squared first components of its eigenvectors.
  arma::mat J(points, points, arma::fill::zeros);
  for (size_t k = 1; k < points; ++k) J(k, k - 1) = J(k - 1, k) = std::sqrt(double(k) / 2.0);
  arma::vec x;
  arma::mat V;
  if (!arma::eig_sym(x, V, J)) throw Error("Gauss-Hermite: eigen-decomposition failed");
  GaussHermite gh;
  gh.x = x;
  gh.w = std::sqrt(M_PI) * arma::square(V.row(0).t());
  return gh;
}

}  // namespace dkp::likelihoods
