#include "util/blas_threads.hpp"

extern "C" void openblas_set_num_threads(int num_threads);
// Exported by OpenBLAS's pthread build (its fork handler uses it), absent from the serial one:
// a weak reference resolves to null there.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));

namespace dkp::util {

void set_blas_threads(int n) {
  const int threads = n < 1 ? 1 : n;
  openblas_set_num_threads(threads);
  if (threads == 1 && blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

}  // namespace dkp::util
