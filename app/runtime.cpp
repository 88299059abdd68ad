#include "runtime.hpp"

#include <malloc.h>

extern "C" void openblas_set_num_threads(int num_threads);

namespace dkp::cli {

void set_blas_threads(int n) {
  openblas_set_num_threads(n < 1 ? 1 : n);
}

void tune_allocator() {
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  mallopt(M_ARENA_MAX, 2);
}

}  // namespace dkp::cli
