// The autodiff micro-benchmark runs (one repetition) and prints its table.
#include <doctest/doctest.h>

#include <sstream>

#include "bench/ad_bench.hpp"
#include "util/error.hpp"

TEST_CASE("run_ad_bench runs with reps = 1 and reports the ratios") {
  std::ostringstream out;
  dkp::bench::run_ad_bench(out, 1);
  const std::string s = out.str();
  CHECK(s.find("cholesky 100x100") != std::string::npos);
  CHECK(s.find("forward with tape / plain") != std::string::npos);
  CHECK(s.find("backward / forward") != std::string::npos);
  CHECK_THROWS_AS(dkp::bench::run_ad_bench(out, 0), dkp::Error);
}
