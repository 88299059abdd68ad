#include "util/vexp.hpp"

#include <cmath>

#if defined(DKP_HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>

extern "C" __m256d _ZGVdN4v_exp(__m256d);  // glibc libmvec, AVX2 variant

namespace {

__attribute__((target("avx2,fma"))) void exp_avx2(double* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, _ZGVdN4v_exp(_mm256_loadu_pd(x + i)));
  for (; i < n; ++i) x[i] = std::exp(x[i]);
}

bool cpu_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

}  // namespace

namespace dkp::util {

bool vector_exp_available() {
  static const bool ok = cpu_has_avx2_fma();
  return ok;
}

void exp_inplace(double* x, std::size_t n) {
  if (vector_exp_available()) {
    exp_avx2(x, n);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

}  // namespace dkp::util

#else

namespace dkp::util {

bool vector_exp_available() {
  return false;
}

void exp_inplace(double* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

}  // namespace dkp::util

#endif
