// Vectorised exponential for the kernel hot paths (SE kernel matrices: P x B exponentials per
// layer and Monte Carlo sample).
#pragma once

#include <cstddef>

namespace dkp::util {

/// x[i] <- exp(x[i]) for i < n. On x86-64 with AVX2 and FMA, and when the build found glibc's
/// libmvec, four lanes at a time through libmvec's _ZGVdN4v_exp (documented accuracy within
/// 4 ulp; measured here at most 3 ulp from std::exp on [-50, 0], some 6x faster); otherwise
/// std::exp element by element.
void exp_inplace(double* x, std::size_t n);

/// True when exp_inplace uses the vector path on this machine.
bool vector_exp_available();

}  // namespace dkp::util
