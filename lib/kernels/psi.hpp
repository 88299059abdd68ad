// Expected squared-exponential kernel statistics under Gaussian inputs (the "psi statistics" of
// Titsias & Lawrence 2010, used by the approximate-EP DGP of Bui et al. 2016 to propagate moments
// through a GP layer; DSVI report section 3.2). For the ARD kernel
//   k(x, z) = h exp(-1/2 sum_q (x_q - z_q)^2 / a_q),   a_q = lengthscale_q^2,
// and an input x_n ~ N(mu_n, diag(v_n)):
//   Psi1_nm  = E k(x_n, z_m)
//            = h prod_q (1 + v_nq / a_q)^(-1/2) exp(-1/2 sum_q (mu_nq - z_mq)^2 / (a_q + v_nq)),
//   Psi2_nij = E k(z_i, x_n) k(x_n, z_j)
//            = h^2 prod_q (1 + 2 v_nq / a_q)^(-1/2)
//              exp(-sum_q [(z_iq - z_jq)^2 / (4 a_q) + (mu_nq - zbar_ijq)^2 / (a_q + 2 v_nq)]),
// with zbar_ij = (z_i + z_j) / 2. With v = 0 they are k(x_n, z_m) and k(x_n, z_i) k(x_n, z_j).
// Both are fused autodiff ops with closed-form adjoints (each has a finite-difference test).
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::kernels {

using autodiff::Var;

/// Psi1 (B x M) for input means mu and variances v (B x D each; v >= 0), inducing inputs Z
/// (M x D), squared lengthscales a (1 x D, positive) and variance h (1 x 1, positive).
/// @throws dkp::Error on mismatched shapes, a non-positive a or h, or a negative variance
Var psi1(const Var& mu, const Var& v, const Var& Z, const Var& a, const Var& h);

/// The contraction e_n = sum_ij G_ij Psi2_nij (B x 1) with an M x M matrix G, without forming
/// the B x M x M tensor (memory O(M^2); the adjoint recomputes Psi2 instead of storing it).
/// @throws dkp::Error as psi1, or when G is not M x M
Var psi2_contract(const Var& mu, const Var& v, const Var& Z, const Var& a, const Var& h,
                  const Var& G);

}  // namespace dkp::kernels
