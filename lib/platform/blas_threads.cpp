#include "platform/blas_threads.hpp"

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "platform/cpu.hpp"

extern "C" void openblas_set_num_threads(int num_threads);
// Exported by OpenBLAS's pthread build (its fork handler uses it), absent from the serial one:
// a weak reference resolves to null there.
extern "C" int blas_thread_shutdown_(void) __attribute__((weak));
// OpenBLAS's reports of itself, weak for the same reason.
extern "C" char* openblas_get_corename(void) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));
extern "C" char* openblas_get_config(void) __attribute__((weak));

namespace dkp::platform {

void set_blas_threads(int n) {
  const int threads = n < 1 ? 1 : n;
  openblas_set_num_threads(threads);
  if (threads == 1 && blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

int blas_threads() {
  return openblas_get_num_threads != nullptr ? openblas_get_num_threads() : 1;
}

std::string blas_core() {
  const char* s = openblas_get_corename != nullptr ? openblas_get_corename() : nullptr;
  return s != nullptr ? std::string(s) : std::string("unknown");
}

namespace {

// Set and not empty: what OpenBLAS itself takes as a request.
bool coretype_requested() {
  const char* v = std::getenv("OPENBLAS_CORETYPE");
  return v != nullptr && *v != '\0';
}

}  // namespace

std::string blas_coretype_advice(const std::string& core, const std::string& vector_isa,
                                 bool coretype_set) {
  if (coretype_set || core != "Prescott") return "";
  if (vector_isa == "AVX-512") return "SkylakeX";
  if (vector_isa == "AVX2") return "Haswell";
  return "";
}

void warn_generic_blas_kernels() {
  const CpuInfo cpu = cpu_info();
  const std::string advice =
      blas_coretype_advice(blas_core(), cpu.vector_isa, coretype_requested());
  if (advice.empty()) return;
  spdlog::warn(
      "OpenBLAS runs its generic Prescott kernels on this {} CPU ({}), 3x slower on large "
      "matrices; set OPENBLAS_CORETYPE={} to use its {} kernels (docs/performance.md)",
      cpu.vector_isa, describe(cpu), advice, cpu.vector_isa);
}

std::string blas_config() {
  const char* s = openblas_get_config != nullptr ? openblas_get_config() : nullptr;
  return s != nullptr ? std::string(s) : std::string("unknown");
}

}  // namespace dkp::platform
