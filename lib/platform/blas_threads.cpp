#include "platform/blas_threads.hpp"

extern "C" void openblas_set_num_threads(int num_threads);
// Exported by OpenBLAS's pthread build (its fork handler uses it), absent from the serial one:
// a weak reference resolves to null there.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
// OpenBLAS's reports of itself, weak for the same reason.
extern "C" char* openblas_get_corename(void) __attribute__((weak));
extern "C" char* openblas_get_config(void) __attribute__((weak));

namespace dkp::platform {

void set_blas_threads(int n) {
  const int threads = n < 1 ? 1 : n;
  openblas_set_num_threads(threads);
  if (threads == 1 && blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

std::string blas_core() {
  const char* s = openblas_get_corename != nullptr ? openblas_get_corename() : nullptr;
  return s != nullptr ? std::string(s) : std::string("unknown");
}

std::string blas_config() {
  const char* s = openblas_get_config != nullptr ? openblas_get_config() : nullptr;
  return s != nullptr ? std::string(s) : std::string("unknown");
}

}  // namespace dkp::platform
