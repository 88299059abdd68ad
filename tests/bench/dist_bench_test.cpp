// Smoke test of the distributions benchmark (one repetition; set DKP_DIST_BENCH_REPS for timings).
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "bench/dist_bench.hpp"

TEST_CASE("run_dist_bench runs every row and prints a table") {
  const char* env = std::getenv("DKP_DIST_BENCH_REPS");
  const int reps = env ? std::atoi(env) : 1;
  std::ostringstream out;
  dkp::bench::run_dist_bench(out, reps);
  const std::string s = out.str();
  for (const char* row : {"GW ", "A-GW ", "AB-GW ", "IW "}) CHECK(s.find(row) != std::string::npos);
  if (env) std::cout << s;
}
