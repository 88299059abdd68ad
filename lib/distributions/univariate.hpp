// Elementwise log densities of univariate distributions as autodiff expressions (deliverable 1).
// Each returns a matrix of the broadcast shape of its arguments (1x1 arguments broadcast); sum it,
// or mask it, as needed. Parameters are on the constrained scale; the caller owns the transform.
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::distributions {

using autodiff::Var;

/// log N(x; mu, sigma^2) = -log(2 pi)/2 - log sigma - (x - mu)^2 / (2 sigma^2), elementwise.
Var normal_log_prob(const Var& x, const Var& mu, const Var& sigma);

/// sum_{(i,j): mask_ij != 0} log N(x_ij; mu_ij, sigma_ij^2) as one fused node (1x1). mu and sigma
/// have x's shape or are 1x1; mask is a constant 0/1 matrix of x's shape. Equals
/// sum(mask % normal_log_prob(x, mu, sigma)) but records one node instead of ten (the Bartlett
/// densities apply it to P x m matrices). Adjoints: xbar = -g mask z / sigma, mubar = -xbar,
/// sigmabar = g mask (z^2 - 1) / sigma, z = (x - mu) / sigma.
Var masked_normal_log_prob_sum(const Var& x, const Var& mu, const Var& sigma,
                               const arma::mat& mask);

/// log Gamma(x; alpha, beta) (shape alpha, rate beta)
///   = alpha log beta - lgamma(alpha) + (alpha - 1) log x - beta x, elementwise.
Var gamma_log_prob(const Var& x, const Var& alpha, const Var& beta);

/// log InverseGamma(x; alpha, beta) (shape alpha, scale beta)
///   = alpha log beta - lgamma(alpha) - (alpha + 1) log x - beta / x, elementwise.
Var inverse_gamma_log_prob(const Var& x, const Var& alpha, const Var& beta);

}  // namespace dkp::distributions
