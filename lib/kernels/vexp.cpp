#include "kernels/vexp.hpp"

#include <cmath>

#if defined(DKP_HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>

extern "C" __m256d _ZGVdN4v_exp(__m256d);   // glibc libmvec, AVX2 variants
extern "C" __m256d _ZGVdN4v_acos(__m256d);  // (acos since glibc 2.35)
extern "C" __m512d _ZGVeN8v_exp(__m512d);   // AVX-512 variants
extern "C" __m512d _ZGVeN8v_acos(__m512d);

namespace {

using Vec4 = __m256d (*)(__m256d);

// x[i] <- f(x[i]): four lanes through the libmvec function, the tail through the scalar one.
__attribute__((target("avx2,fma"))) void apply_avx2(Vec4 f4, double (*f1)(double), double* x,
                                                    std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, f4(_mm256_loadu_pd(x + i)));
  for (; i < n; ++i) x[i] = f1(x[i]);
}

using Vec8 = __m512d (*)(__m512d);

// The same, eight lanes at a time.
__attribute__((target("avx512f"))) void apply_avx512(Vec8 f8, double (*f1)(double), double* x,
                                                     std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(x + i, f8(_mm512_loadu_pd(x + i)));
  for (; i < n; ++i) x[i] = f1(x[i]);
}

bool cpu_has_avx512f() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

bool cpu_has_avx2_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

double scalar_exp(double v) {
  return std::exp(v);
}
double scalar_acos(double v) {
  return std::acos(v);
}

}  // namespace

namespace dkp::kernels {

bool vector_exp_available() {
  static const bool ok = cpu_has_avx2_fma();
  return ok;
}

bool vector_exp_avx512() {
  static const bool ok = cpu_has_avx512f();
  return ok;
}

namespace {

// x[i] <- f(x[i]) through the widest libmvec variant this CPU runs, else the scalar function.
void apply(Vec8 f8, Vec4 f4, double (*f1)(double), double* x, std::size_t n) {
  if (vector_exp_avx512()) {
    apply_avx512(f8, f1, x, n);
  } else if (vector_exp_available()) {
    apply_avx2(f4, f1, x, n);
  } else {
    for (std::size_t i = 0; i < n; ++i) x[i] = f1(x[i]);
  }
}

}  // namespace

void exp_inplace(double* x, std::size_t n) {
  apply(_ZGVeN8v_exp, _ZGVdN4v_exp, scalar_exp, x, n);
}

void acos_inplace(double* x, std::size_t n) {
  apply(_ZGVeN8v_acos, _ZGVdN4v_acos, scalar_acos, x, n);
}

}  // namespace dkp::kernels

#else

namespace dkp::kernels {

bool vector_exp_available() {
  return false;
}

bool vector_exp_avx512() {
  return false;
}

void exp_inplace(double* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

void acos_inplace(double* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = std::acos(x[i]);
}

}  // namespace dkp::kernels

#endif
