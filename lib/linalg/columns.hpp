// Column reductions of dense column-major blocks.
#pragma once

#include <armadillo>

namespace dkp::linalg {

/// out[j] = sum_i a(i, j)^2 for the rows x cols block at `a` (columns contiguous, leading
/// dimension `rows`). Each column is summed in row order, so the result is that of the plain
/// loop to the last bit; four columns run at a time, as four independent chains of additions
/// (a single chain is bound by the additions' latency).
void col_sumsq(const double* a, arma::uword rows, arma::uword cols, double* out);

}  // namespace dkp::linalg
