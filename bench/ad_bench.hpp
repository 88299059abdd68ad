// Micro-benchmark of the autodiff tape (issue 3, deliverable 6; DESIGN.md section 7): forward and
// backward of a representative block,
//   L = chol(A) (100 x 100),  V = L^{-1} B,  X = L^{-T} V  (B 100 x 1000),
//   f = log det A + trace(V X^T),
// timed op by op with a tape and as the same computation in plain Armadillo/linalg calls (the
// same BLAS/LAPACK kernels, no tape). Prints median times, the ratios forward-with-tape / plain
// and backward / forward (targets <= 1.2 and <= 3), and minor page faults per repetition.
// dkp runs it with one BLAS thread (OPENBLAS_NUM_THREADS=1 elsewhere) for stable numbers.
#pragma once

#include <ostream>

namespace dkp::bench {

/// Runs the benchmark with `reps` timed repetitions (after two warm-up repetitions) and writes a
/// table to `out`.
void run_ad_bench(std::ostream& out, int reps);

}  // namespace dkp::bench
