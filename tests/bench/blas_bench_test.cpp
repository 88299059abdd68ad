// The BLAS micro-benchmark runs (one repetition, one and two threads) and prints a row per kernel.
#include <doctest/doctest.h>

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
