// platform::set_blas_threads(1) leaves no OpenBLAS worker threads behind, and BLAS still works,
// also after more threads are asked for again; blas_coretype_advice, the kernels to suggest.

#include <doctest/doctest.h>

#include <armadillo>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "platform/blas_threads.hpp"

namespace {

// Threads of this process (the entries of /proc/self/task; 0 where that is unavailable).
int process_thread_count() {
  std::error_code ec;
  int count = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end;
       it.increment(ec))
    ++count;
  return ec ? 0 : count;
}

}  // namespace

TEST_CASE("set_blas_threads(1): no OpenBLAS worker threads remain, and products stay correct") {
  const int before = process_thread_count();
  REQUIRE(before >= 1);
  dkp::platform::set_blas_threads(1);
  // This test binary starts no threads of its own, so only the main thread is left (OpenBLAS's
  // pthread build had started one worker per further core when it was loaded).
  CHECK(process_thread_count() == 1);
  arma::mat A(300, 200), B(200, 100);
  for (arma::uword i = 0; i < A.n_elem; ++i) A[i] = double(i % 17) - 8.0;
  for (arma::uword i = 0; i < B.n_elem; ++i) B[i] = double(i % 13) - 6.0;
  auto naive = [&](arma::uword r, arma::uword c) {
    double s = 0.0;
    for (arma::uword k = 0; k < A.n_cols; ++k) s += A(r, k) * B(k, c);
    return s;
  };
  const arma::mat C1 = A * B;
  CHECK(C1(7, 3) == naive(7, 3));
  CHECK(C1(299, 99) == naive(299, 99));
  // More threads again (the pool restarts on demand), then back to one.
  dkp::platform::set_blas_threads(2);
  const arma::mat C2 = A * B;
  CHECK(arma::approx_equal(C1, C2, "absdiff", 0.0));
  dkp::platform::set_blas_threads(1);
  CHECK(process_thread_count() == 1);
}

TEST_CASE("ScopedBlasThreads: n BLAS threads for its lifetime, then one") {
  dkp::platform::set_blas_threads(1);
  REQUIRE(dkp::platform::blas_threads() == 1);
  {
    const dkp::platform::ScopedBlasThreads two(2);
    CHECK(dkp::platform::blas_threads() == 2);
  }
  CHECK(dkp::platform::blas_threads() == 1);
  CHECK(process_thread_count() == 1);
}

TEST_CASE("blas_core and blas_config describe the loaded OpenBLAS") {
  const std::string core = dkp::platform::blas_core();
  const std::string config = dkp::platform::blas_config();
  CHECK(!core.empty());
  CHECK(core != "unknown");
  CHECK(config.rfind("OpenBLAS", 0) == 0);  // the project links OpenBLAS (Makefile, CMakeLists)
  // A DYNAMIC_ARCH OpenBLAS uses the kernels that $OPENBLAS_CORETYPE names, when it names one.
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced != nullptr && config.find("DYNAMIC_ARCH") != std::string::npos) {
    std::string a = forced, b = core;
    for (auto& c : a) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (auto& c : b) c = char(std::tolower(static_cast<unsigned char>(c)));
    CHECK(a == b);
  }
}

TEST_CASE("blas_coretype_advice: only OpenBLAS's generic fallback on an AVX2 or AVX-512 CPU") {
  using dkp::platform::blas_coretype_advice;
  CHECK(blas_coretype_advice("Prescott", "AVX-512", false) == "SkylakeX");
  CHECK(blas_coretype_advice("Prescott", "AVX2", false) == "Haswell");
  // Nothing better to suggest on an older CPU, and nothing when the kernels match the CPU.
  CHECK(blas_coretype_advice("Prescott", "AVX", false).empty());
  CHECK(blas_coretype_advice("Prescott", "", false).empty());
  CHECK(blas_coretype_advice("Cooperlake", "AVX-512", false).empty());
  CHECK(blas_coretype_advice("Zen", "AVX2", false).empty());
  CHECK(blas_coretype_advice("unknown", "AVX-512", false).empty());
  // A user who set $OPENBLAS_CORETYPE (even to Prescott) means it.
  CHECK(blas_coretype_advice("Prescott", "AVX-512", true).empty());
}
