// Parallel loops over a persistent worker pool (the Monte Carlo groups of training steps and
// predictions, the trials of dkp toy, the points of classification metrics).
#pragma once

#include <cstddef>
#include <functional>

namespace dkp::platform {

/// Runs f(0), ..., f(n - 1), each on its own thread (f(0) on the caller's). Waits for all, then
/// rethrows the exception of the lowest index that threw, if any.
void parallel_for(size_t n, const std::function<void(size_t)>& f);

}  // namespace dkp::platform
