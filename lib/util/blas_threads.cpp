#include "util/blas_threads.hpp"

#include <filesystem>
#include <system_error>

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

int process_thread_count() {
  std::error_code ec;
  int count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec))
    ++count;
  return ec ? 0 : count;
}

}  // namespace dkp::util
