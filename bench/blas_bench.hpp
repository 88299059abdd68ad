// What this machine's BLAS delivers on the shapes of a training step, one BLAS thread per
// calling thread (as the steps run: each thread of `--threads` makes its own single-threaded
// calls). Times, for T threads running the same kernel at once on their own matrices:
//   dgemm n x n x n for n = 100, 455 and 1000 (the machine's large-matrix rate);
//   dgemm 100 x 455 x 100 (a P x P factor times a P x B block on boston);
//   linalg::tri_solve with a 100 x 100 factor and 455 right-hand sides (L_K^{-1} K_it);
//   linalg::chol of a 100 x 100 matrix (K_ii).
// Prints, per kernel, the median time of one call and the GFlop/s of one thread and of all T
// together, so that a step's FLOP count can be set against what the machine can do.
#pragma once

#include <ostream>

namespace dkp::bench {

/// Runs each kernel `reps` timed times (after a warm-up call) on each of `threads` threads at
/// once and writes a table to `out`. Throws dkp::Error when reps or threads is below 1.
void run_blas_bench(std::ostream& out, int reps, int threads);

/// The machine's large-dgemm rate as a step would see it: `threads` threads at once, each calling
/// dgemm 1000 x 1000 x 1000 under the process's current BLAS thread setting, `reps` timed calls
/// each after a warm-up; the GFlop/s of all threads together at the median call time. The
/// reference of `dkp bench model --flops`'s share of peak.
double large_dgemm_rate(int reps, int threads);

}  // namespace dkp::bench
