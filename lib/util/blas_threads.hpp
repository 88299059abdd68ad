// OpenBLAS's thread count for the process (DESIGN.md section 7: one BLAS thread; the models'
// matrices are small, and parallelism comes from the Monte Carlo sample groups and the grid
// runner).
#pragma once

namespace dkp::util {

/// Sets the number of OpenBLAS threads (n < 1 counts as 1). With one thread, also stops the
/// worker threads that OpenBLAS's pthread build starts when the library is loaded, before main:
/// they busy-wait for work for about 0.1 s, and on a 2-core machine one of them halves the speed
/// of our own second thread for that time (a two-thread NNGP bench step measured 3.6 against
/// 2.0 ms in 4 runs of 8). A later request for more threads restarts them.
void set_blas_threads(int n);

}  // namespace dkp::util
