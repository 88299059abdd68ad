// Process-level settings of the dkp binary: BLAS threads and allocator tuning (DESIGN.md
// section 7).
#pragma once

namespace dkp::cli {

/// Sets the number of OpenBLAS threads (1 by default: small matrices, runs parallelised by the
/// grid runner).
void set_blas_threads(int n);

/// Raises glibc's mmap and trim thresholds so that large temporaries in the training loop reuse
/// heap pages instead of mapping fresh ones on every step.
void tune_allocator();

}  // namespace dkp::cli
