#include "util/process.hpp"

#include <malloc.h>

namespace dkp::util {

void tune_allocator() {
  mallopt(M_MMAP_THRESHOLD, 512 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  mallopt(M_ARENA_MAX, 2);
}

}  // namespace dkp::util
