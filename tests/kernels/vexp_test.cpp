// kernels::exp_inplace agrees with std::exp to a few ulp, including the scalar tail and edge
// values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/vexp.hpp"

TEST_CASE("exp_inplace matches std::exp within 4 ulp") {
  std::vector<double> x;
  for (int i = 0; i <= 2003; ++i) x.push_back(-60.0 + 0.0617 * i);  // [-60, 63.6], odd length
  x.push_back(0.0);
  x.push_back(-800.0);  // underflows to 0
  std::vector<double> y = x;
  dkp::kernels::exp_inplace(y.data(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp(x[i]);
    const double ulp = std::nextafter(ref, std::numeric_limits<double>::infinity()) - ref;
    CHECK(std::abs(y[i] - ref) <= 4 * ulp);
  }
  CHECK(y[y.size() - 2] == 1.0);
  double nan = std::numeric_limits<double>::quiet_NaN();
  dkp::kernels::exp_inplace(&nan, 1);
  CHECK(std::isnan(nan));
  dkp::kernels::exp_inplace(nullptr, 0);
}

TEST_CASE("acos_inplace matches std::acos within 4 ulp on [-1, 1]") {
  std::vector<double> x;
  for (int i = 0; i <= 4001; ++i) x.push_back(-1.0 + 2.0 * i / 4001.0);  // odd length: scalar tail
  for (double d : {1e-16, 1e-12, 1e-8, 1e-4}) {  // near +-1, where the ReLU kernel's t -> 0, pi
    x.push_back(1.0 - d);
    x.push_back(-1.0 + d);
  }
  x.push_back(0.0);
  std::vector<double> y = x;
  dkp::kernels::acos_inplace(y.data(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::acos(x[i]);
    const double ulp = std::nextafter(ref, std::numeric_limits<double>::infinity()) - ref;
    CHECK(std::abs(y[i] - ref) <= 4 * ulp);
  }
  CHECK(y.back() == doctest::Approx(M_PI / 2).epsilon(1e-15));
  double out_of_range = 1.5;
  dkp::kernels::acos_inplace(&out_of_range, 1);
  CHECK(std::isnan(out_of_range));
}
