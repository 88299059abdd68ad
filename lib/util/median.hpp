// The median of a sample of timings (the benchmarks' summary statistic).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dkp::util {

/// The middle value of v (the mean of the two middle values for an even count); 0 when empty.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

}  // namespace dkp::util
