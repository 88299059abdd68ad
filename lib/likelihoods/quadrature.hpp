// What the Gaussian-latent likelihoods (robust-max, probit) share: the standard normal's density
// and distribution function, and the Gauss-Hermite rule for expectations under a Gaussian.
#pragma once

#include <cmath>
#include <cstddef>

#include <armadillo>

namespace dkp::likelihoods {

/// Phi(z) = erfc(-z / sqrt 2) / 2, accurate in both tails.
inline double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / M_SQRT2);
}

/// phi(z), the standard normal density.
inline double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
}

/// Physicists' Gauss-Hermite rule: integral e^{-x^2} f(x) dx ~ sum_k w_k f(x_k), exact for
/// polynomials of degree < 2K (Golub-Welsch). Throws ConfigError for K = 0.
struct GaussHermite {
  arma::vec x;
  arma::vec w;
};
GaussHermite gauss_hermite(size_t points);

}  // namespace dkp::likelihoods
