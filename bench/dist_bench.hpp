// Benchmark of the PSD-matrix distributions (issue 4, deliverable 6): one DWP-layer step per
// repetition for P = 100 and nu in {8, 16, 100},
//   L = chol(Psi)                                   (Psi = K / nu, a 100 x 100 SPD leaf)
//   G ~ Q = GW(L L^T, nu, ...) | A-GW(L A', ...) | AB-GW(L A', B, ...)   (AGW paper eq. 16)
//   ELBO term = log W(G; Psi, nu) - log Q(G)        (Wishart prior from the factor F)
//   backward to every parameter,
// and the DIWP step (inverse Wishart sample with real nu, log IW prior - log IW posterior at the
// sample). Prints median times (microseconds) of sample, log densities and backward.
// dkp runs it with one BLAS thread (OPENBLAS_NUM_THREADS=1 elsewhere) for stable numbers.
#pragma once

#include <ostream>

namespace dkp::bench {

/// Runs the benchmark with `reps` timed repetitions per row (after one warm-up) and writes a table
/// to `out`.
void run_dist_bench(std::ostream& out, int reps);

}  // namespace dkp::bench
