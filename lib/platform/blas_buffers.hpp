// OpenBLAS's work buffers, one set per thread (definitions of blas_memory_alloc and
// blas_memory_free, which take the place of OpenBLAS's own).
//
// Why. OpenBLAS 0.3.21's pthread build (Debian's) packs the operands of every level-3 call into a
// work buffer that it takes from one process-wide table: under a global lock, the first free
// buffer, whichever thread asks. With our two Monte Carlo sample groups on two threads, each
// group's calls then get whichever buffer the other left free, so the packed panels move between
// the cores' caches and the lock is contended (boston's global-inducing DGP at depth 5: each
// group took 27.5-29.4 ms of a two-thread step, against 25.8-26.0 for the same work in two
// single-thread processes at the same time; docs/performance.md, the OpenBLAS buffer replacement).
// OpenBLAS calls the two functions through its PLT, so the executable's definitions (exported with
// --export-dynamic-symbol, see CMakeLists.txt) replace them: a thread keeps the buffers it made and
// gets them back without a lock, so its packed panels stay in its own core's cache. Results do not
// change (the arithmetic is OpenBLAS's; only where it packs).
//
// How. Buffers live in a fixed table of slots. A thread owns the slots it made; it takes the first
// of them not in use (a compare-and-swap on the slot's flag), and makes a new one (an anonymous
// mapping of kBlasBufferBytes, reserved, not touched) when all are in use, as in a nested call.
// A buffer may be given back by any thread. When a thread exits, its slots lose their owner and
// the next thread that needs a buffer adopts one of them instead of mapping a new one.
//
// Guard. The replacement relies on OpenBLAS internals (the two functions' signatures, that they
// are called through the PLT, the buffer size), so it is used only with the OpenBLAS versions it
// was written for (blas_buffers_cover); with any other, or with DKP_BLAS_BUFFERS=openblas in the
// environment, OpenBLAS's own functions (found with dlsym(RTLD_NEXT)) serve every call, and
// blas_buffers_mode() says so (dkp --version prints it).
#pragma once

#include <cstddef>
#include <string>

namespace dkp::platform {

/// Bytes reserved per buffer: OpenBLAS's BUFFER_SIZE is 32 MiB on x86-64 (32 << BUFFERSIZE when
/// built with BUFFERSIZE); the mapping is reserved without backing, so only touched pages count.
inline constexpr std::size_t kBlasBufferBytes = std::size_t(256) << 20;

/// Counts since the process started, for tests and diagnostics.
struct BlasBufferStats {
  std::size_t takes = 0;    ///< buffers handed out (OpenBLAS's level-3 calls, mostly)
  std::size_t mapped = 0;   ///< buffers made (mappings of kBlasBufferBytes)
  std::size_t adopted = 0;  ///< buffers taken over from a thread that had exited
};
BlasBufferStats blas_buffer_stats();

/// Whether the replacement covers the OpenBLAS whose openblas_get_config() text this is (it
/// starts "OpenBLAS <version> "): 0.3.21 only.
bool blas_buffers_cover(const std::string& openblas_config);

/// "dkp's per-thread buffers", or "OpenBLAS's own (<why>)" when the guard fell back.
std::string blas_buffers_mode();

}  // namespace dkp::platform

extern "C" {
/// OpenBLAS's work-buffer allocation, replaced (above). `procpos` is OpenBLAS's caller code
/// (0 level 3, 1 level 2, 2 its own threads); it makes no difference here.
void* blas_memory_alloc(int procpos);
/// Gives back a buffer of blas_memory_alloc's, from any thread. A pointer that is not one of ours
/// is a fatal error (OpenBLAS never frees what it did not take from us).
void blas_memory_free(void* buffer);
}
