// Kernels on Gram matrices (DKP paper sec. 4.1, eqs. 13-17; DESIGN.md section 2), on the blocks
// that doubly-stochastic inference needs, so that the cost is linear in the batch size B:
//   ii  P x P   the Gram/kernel block of the inducing points,
//   it  P x B   inducing against train/test points,
//   tt  B x 1   the diagonal of the train/test block (the B x B block is never formed).
// A kernel K(G) maps Gram blocks to kernel blocks of the same shapes.
//
//  * Isotropic squared exponential via squared distances R_ij = G_ii - 2 G_ij + G_jj (eq. 17):
//      K_ij = h exp(-R_ij / (2 l^2)),  h = exp(log_variance), l = exp(log_lengthscale)
//    (bayesfunc's SqExpKernelGram, notes/reference-implementations.md section 2, with the height
//    parameterised by its log variance as in models/gi_dgp).
//  * ReLU arc-cosine kernel (Cho & Saul 2009, order 1) scaled by 2 so that the diagonal is kept
//    (bayesfunc's ReluKernelGram, notes section 2): with cos t = G_ij / sqrt(G_ii G_jj),
//      K_ij = (sqrt(G_ii G_jj - G_ij^2) + (pi - t) G_ij) / pi = 2 E[relu(w.x) relu(w.y)], w ~ N(0,
//      I)
//    (for G = X X^T), and K_ii = G_ii. It has no parameters.
//  * The input layer (DKP paper sec. 7: "a learned bias and scale for each input feature"):
//    X' = X diag(exp(log_scale)) + 1 bias^T, then G = X' X'^T / N0 (eq. 5a).
//
// Jitter: `jitter` is added as K + eps I on the full (inducing + train/test) matrix, i.e. to the
// diagonal of ii and to tt, so that Schur complements k_tt - k_ti K_ii^{-1} k_it stay >= eps.
// For the SE kernel eps = jitter * h (relative to the kernel variance, bayesfunc master's
// h (exp(-d^2/2) + 1e-6 I)); for the ReLU kernel eps = jitter (absolute, as bayesfunc's + 1e-6).
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::kernels {

using autodiff::Var;

/// Gram or kernel blocks of one Monte Carlo sample.
struct GramBlocks {
  Var ii;  ///< P x P
  Var it;  ///< P x B
  Var tt;  ///< B x 1, the diagonal of the B x B block
};

/// X' = X.each_row() % exp(log_scale) + bias; X is n x d, log_scale and bias are 1 x d.
Var scale_shift_features(const Var& X, const Var& log_scale, const Var& bias);

/// Gram blocks of the features (rows of Fi: P inducing points; rows of Ft: B points):
///   ii = Fi Fi^T / nu, it = Fi Ft^T / nu, tt = rowsum(Ft % Ft) / nu.
GramBlocks features_to_gram(const Var& Fi, const Var& Ft, double nu);

/// h exp(-(a_i + b_j - 2 C_ij) / (2 l^2)) as one fused op, l = exp(log_ell) and h both 1 x 1,
/// h > 0: C is n x m, a is n x 1 (the diagonal of the left points' Gram), b is m x 1.
/// R = a_i + b_j - 2 C_ij is clamped at 0 (it is >= 0 in exact arithmetic); log h goes inside
/// the (vectorised) exponential. With G = adjoint % K and w = 1 / (2 l^2):
///   Cbar = 2 w G, abar = -w rowsum(G), bbar = -w colsum(G)^T,
///   log_ell bar = 2 w sum(G % R), hbar = sum(G) / h.
Var se_scaled_from_gram(const Var& h, const Var& C, const Var& a, const Var& b, const Var& log_ell);

/// The same kernel of a symmetric Gram block with itself, a = b = diag(C), plus h jitter on the
/// diagonal: h (exp(-R_ij / (2 l^2)) + jitter [i == j]), n x n. Only C's strict lower triangle
/// and diagonal are read (half the exponentials); the result is exactly symmetric with
/// h (1 + jitter) on the diagonal. The adjoint w.r.t. C is symmetric (S = G + G^T):
///   Cbar = w (S - diag(rowsum S)), log_ell bar = 2 w sum_{i > j} S_ij R_ij, hbar = sum(S) / 2h,
/// the derivative of K as a function of a symmetric C (C_ij and C_ji move together).
Var se_scaled_sym_from_gram(const Var& h, const Var& C, const Var& log_ell, double jitter);

/// The ReLU arc-cosine kernel (scaled to keep the diagonal, see above) of an n x m Gram block C
/// with the diagonals a (n x 1) of the left and b (m x 1) of the right points, as one fused op.
/// cos t is clamped to [-1, 1]. Adjoints in closed form, finite even at t = 0 (r = sqrt(a b -
/// C^2)):
///   dK/dC = (pi - t) / pi,  dK/da = r / (2 pi a),  dK/db = r / (2 pi b).
/// Requires a, b > 0.
Var arccos_relu(const Var& C, const Var& a, const Var& b);

/// Isotropic SE kernel blocks K(G) (see above), eps = jitter * h on the diagonal of ii and on tt.
GramBlocks se_gram(const GramBlocks& G, const Var& log_lengthscale, const Var& log_variance,
                   double jitter);

/// ReLU arc-cosine kernel blocks K(G) (see above): ii with its diagonal equal to diag(G_ii),
/// tt = g_tt; plus eps = jitter on the diagonal of ii and on tt.
GramBlocks relu_gram(const GramBlocks& G, double jitter);

}  // namespace dkp::kernels
