// OpenBLAS's thread count for the process (DESIGN.md section 7: one BLAS thread; the models'
// matrices are small, and parallelism comes from the Monte Carlo sample groups and the grid
// runner; --blas-threads, through ScopedBlasThreads, for the few models of large matrices).
#pragma once

#include <string>

namespace dkp::platform {

/// Sets the number of OpenBLAS threads (n < 1 counts as 1). With one thread, also stops the
/// worker threads that OpenBLAS's pthread build starts when the library is loaded, before main:
/// they busy-wait for work for about 0.1 s, and on a 2-core machine one of them halves the speed
/// of our own second thread for that time (a two-thread NNGP bench step measured 3.6 against
/// 2.0 ms in 4 runs of 8). A later request for more threads restarts them.
void set_blas_threads(int n);

/// OpenBLAS's current thread count (1 when the BLAS is not OpenBLAS's threaded build).
int blas_threads();

/// Runs OpenBLAS with n threads for its lifetime (n > 1: --blas-threads, for models whose step is
/// a few large matrix products, where --threads has no samples to share), then back to one.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int n) { set_blas_threads(n); }
  ~ScopedBlasThreads() { set_blas_threads(1); }
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;
};

/// The kernel set OpenBLAS chose when it was loaded ("Haswell", "Cooperlake", ...: from the CPU,
/// or from $OPENBLAS_CORETYPE when set), or "unknown" when the BLAS is not OpenBLAS. Results
/// depend on it at round-off and timings by up to 2x (docs/performance.md), so runs and benchmarks
/// record it.
std::string blas_core();

/// The $OPENBLAS_CORETYPE value to suggest when OpenBLAS runs its generic x86-64 kernels
/// ("Prescott", its fallback for a CPU model its version does not know: Debian 12's 0.3.21 on
/// Intel family 6 model 207, for one) on a CPU whose widest vector extension `vector_isa`
/// (CpuInfo::vector_isa) is "AVX-512" ("SkylakeX") or "AVX2" ("Haswell"); "" otherwise, and
/// always when the variable is set (a user who sets it means it). The generic kernels made the
/// CIFAR-10 DIWP's step 3x slower (docs/performance.md, machines and BLAS kernels).
std::string blas_coretype_advice(const std::string& core, const std::string& vector_isa,
                                 bool coretype_set);

/// Logs blas_coretype_advice for this process as a warning, when there is one.
void warn_generic_blas_kernels();

/// OpenBLAS's build configuration ("OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."), or "unknown".
std::string blas_config();

}  // namespace dkp::platform
