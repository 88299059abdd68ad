// The BLAS micro-benchmark runs (one repetition, one and two threads) and prints a row per kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "bench/blas_bench.hpp"
#include "util/error.hpp"

TEST_CASE("run_blas_bench runs with reps = 1 on one and two threads and reports every kernel") {
  for (int threads : {1, 2}) {
    std::ostringstream out;
    dkp::bench::run_blas_bench(out, 1, threads);
    const std::string s = out.str();
    CHECK(s.find("dgemm 1000 x 1000 x 1000") != std::string::npos);
    CHECK(s.find("dgemm 100 x 455 x 100") != std::string::npos);
    CHECK(s.find("tri_solve 100 x 100, 455 columns") != std::string::npos);
    CHECK(s.find("chol 100 x 100") != std::string::npos);
    CHECK(s.find(std::to_string(threads) + " thread(s) at once") != std::string::npos);
  }
  std::ostringstream out;
  CHECK_THROWS_AS(dkp::bench::run_blas_bench(out, 0, 1), dkp::Error);
  CHECK_THROWS_AS(dkp::bench::run_blas_bench(out, 1, 0), dkp::Error);
}

TEST_CASE("large_dgemm_rate: a finite positive rate, and bad arguments rejected") {
  // A rate, not a time: 2 * 1000^3 flops over a call of at least a microsecond can be no more
  // than 2e6 GFlop/s, and a working dgemm gives more than 0.01 GFlop/s on any machine.
  const double r = dkp::bench::large_dgemm_rate(1, 1);
  CHECK(std::isfinite(r));
  CHECK(r > 0.01);
  CHECK(r < 2e6);
  CHECK_THROWS_AS(dkp::bench::large_dgemm_rate(0, 1), dkp::Error);
  CHECK_THROWS_AS(dkp::bench::large_dgemm_rate(1, 0), dkp::Error);
}
