// Vectorised exponential and arc cosine for the kernel hot paths (SE kernel matrices: P x B
// exponentials per layer and Monte Carlo sample; the ReLU arc-cosine kernel: as many arc cosines).
#pragma once

#include <cstddef>

namespace dkp::kernels {

/// x[i] <- exp(x[i]) for i < n. On x86-64 with AVX2 and FMA, and when the build found glibc's
/// libmvec, four lanes at a time through libmvec's _ZGVdN4v_exp (documented accuracy within
/// 4 ulp; measured here at most 3 ulp from std::exp on [-50, 0], some 6x faster); otherwise
/// std::exp element by element.
void exp_inplace(double* x, std::size_t n);

/// x[i] <- acos(x[i]) for i < n, the same way through libmvec's _ZGVdN4v_acos (glibc >= 2.35);
/// std::acos otherwise.
void acos_inplace(double* x, std::size_t n);

/// True when exp_inplace and acos_inplace use the vector path on this machine.
bool vector_exp_available();

/// True when that path is libmvec's AVX-512 variant (_ZGVeN8v_exp, _ZGVeN8v_acos: eight lanes),
/// taken on CPUs with AVX-512F; the AVX2 one otherwise.
bool vector_exp_avx512();

}  // namespace dkp::kernels
