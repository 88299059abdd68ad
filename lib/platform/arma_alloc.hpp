// Armadillo's heap memory, through a per-thread cache of large blocks.
//
// The build includes this header before every other (CMakeLists.txt: -include on dkp_lib, public,
// so every target that links it gets it too), which routes Armadillo's heap allocations through
// dkp_arma_alloc / dkp_arma_free (ARMA_ALIEN_MEM_ALLOC_FUNCTION / ARMA_ALIEN_MEM_FREE_FUNCTION).
//
// Why: a training step builds a tape of many P x B matrices (100 x 455 doubles, 364 KB, on boston)
// and frees them all at the end of the step, on every thread that evaluates Monte Carlo samples.
// With glibc's malloc shared by the threads (one arena), the threads wait on its lock; with one
// arena per thread, a worker's heaps (64 MB each) are unmapped when they empty at the end of a
// step and faulted in again at the next. Here blocks of at least 64 KiB are kept when freed, in
// size classes an eighth of a power of two apart, on the freeing thread, and handed out again to
// requests of that class on the same thread; smaller blocks go to malloc as before.
//
// Bounds: a thread keeps at most kMaxCachedBytes (beyond that, blocks go back to malloc); what it
// keeps is its own peak working set, freed when the thread exits. A request that finds its class
// empty while the thread keeps more than 16 MiB returns everything kept to malloc first: the
// shapes have changed (a prediction after training steps), and malloc can reuse those pages for
// the new ones (without this, the first prediction after training touched fresh memory: 12 against
// 6.5 ms for the boston DSVI depth-2 prediction). Blocks are 64-byte aligned.
#pragma once

#include <cstddef>

void* dkp_arma_alloc(std::size_t bytes) noexcept;
void dkp_arma_free(void* p) noexcept;

#define ARMA_ALIEN_MEM_ALLOC_FUNCTION dkp_arma_alloc
#define ARMA_ALIEN_MEM_FREE_FUNCTION dkp_arma_free

namespace dkp::platform {

/// Blocks of this many bytes or more are cached.
inline constexpr std::size_t kMinCachedBytes = std::size_t(64) << 10;
/// Upper bound on the bytes one thread keeps.
inline constexpr std::size_t kMaxCachedBytes = std::size_t(2) << 30;

/// The size class a request of `bytes` (>= kMinCachedBytes) is rounded up to: m 2^(e-3) with
/// m in 8..15, at most 12.5% above the request.
std::size_t alloc_class_bytes(std::size_t bytes);

/// Bytes the calling thread's cache holds now (for tests and diagnostics).
std::size_t alloc_cached_bytes();

/// False in a sanitizer build (CMake DKP_SANITIZE): every block then goes to malloc and back, so
/// that AddressSanitizer sees each allocation and free.
bool alloc_cache_enabled();

}  // namespace dkp::platform
