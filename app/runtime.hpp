// Process-level settings of the dkp binary: BLAS threads and allocator tuning (DESIGN.md
// section 7).
#pragma once

namespace dkp::cli {

/// Sets the number of OpenBLAS threads (1 by default: small matrices, runs parallelised by the
/// grid runner).
void set_blas_threads(int n);

/// Raises glibc's mmap and trim thresholds so that large temporaries in the training loop reuse
/// heap pages instead of mapping fresh ones on every step, and keeps one malloc arena for all
/// threads: the per-thread arenas of --threads > 1 grow and shrink their heaps with mprotect and
/// munmap on every step (the main arena keeps its pages), which made a 2-thread depth-5 GI-DGP
/// step on boston slower than a 1-thread one (130-170 ms against 85-110 ms; 65-68 ms with one
/// arena).
void tune_allocator();

}  // namespace dkp::cli
