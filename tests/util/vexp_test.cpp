// util::exp_inplace agrees with std::exp to a few ulp, including the scalar tail and edge values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "util/vexp.hpp"

TEST_CASE("exp_inplace matches std::exp within 4 ulp") {
  std::vector<double> x;
  for (int i = 0; i <= 2003; ++i) x.push_back(-60.0 + 0.0617 * i);  // [-60, 63.6], odd length
  x.push_back(0.0);
  x.push_back(-800.0);  // underflows to 0
  std::vector<double> y = x;
  dkp::util::exp_inplace(y.data(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp(x[i]);
    const double ulp = std::nextafter(ref, std::numeric_limits<double>::infinity()) - ref;
    CHECK(std::abs(y[i] - ref) <= 4 * ulp);
  }
  CHECK(y[y.size() - 2] == 1.0);
  double nan = std::numeric_limits<double>::quiet_NaN();
  dkp::util::exp_inplace(&nan, 1);
  CHECK(std::isnan(nan));
  dkp::util::exp_inplace(nullptr, 0);
}
