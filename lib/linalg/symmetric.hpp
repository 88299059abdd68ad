// In-place symmetrisation of square matrices, used by the adjoints of ops whose input is
// symmetric (a Cholesky factorisation, a Gram matrix C^T C, a kernel matrix k(X, X)).
#pragma once

#include <armadillo>

namespace dkp::linalg {

/// S <- scale (S + S^T), in place and without a transposed temporary (16 x 16 tiles, so the
/// strided reads of the upper triangle stay in cache). The diagonal becomes 2 scale S_ii.
/// @throws dkp::Error if S is not square
void symmetric_sum_inplace(arma::mat& S, double scale = 1.0);

/// scale (A + A^T) as a new matrix.
arma::mat symmetric_sum(const arma::mat& A, double scale = 1.0);

}  // namespace dkp::linalg
