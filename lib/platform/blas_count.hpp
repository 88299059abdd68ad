// Reading the BLAS/LAPACK operation counts of libdkp_blas_count.so (bench/shim/blas_count.cpp),
// which `dkp bench model --flops` loads with LD_PRELOAD. Without the shim nothing is counted and
// blas_count() says so; dkp itself never depends on it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dkp::platform {

struct BlasCount {
  std::uint64_t calls = 0;  ///< outermost BLAS/LAPACK calls (all threads)
  double flops = 0.0;       ///< their nominal floating-point operations (bench/shim/blas_count.cpp)
  double seconds = 0.0;     ///< their wall time, summed over threads
};

/// BlasCount b - a (the work between two readings).
BlasCount operator-(const BlasCount& b, const BlasCount& a);
/// a += d: the work of both.
BlasCount& operator+=(BlasCount& a, const BlasCount& d);

/// The totals so far, or nullopt when the counting shim is not loaded.
std::optional<BlasCount> blas_count();

/// One routine's totals (its symbol, e.g. "cblas_dgemm" or "dpotrf_").
struct RoutineCount {
  std::string name;
  BlasCount count;
};

/// The totals so far of every routine the shim counts (zeros included), in the shim's order, or
/// an empty list when the shim is not loaded. They add up to blas_count().
std::vector<RoutineCount> blas_count_routines();

/// The shim's file name, "libdkp_blas_count.so" (built beside the dkp binary).
const char* blas_count_library();

}  // namespace dkp::platform
