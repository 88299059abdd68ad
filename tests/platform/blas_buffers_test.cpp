// util/blas_buffers: OpenBLAS's level-3 calls take their work buffers from us, a thread gets its
// own buffers back (not whichever is free), any thread may give a buffer back, and an exited
// thread's buffers are adopted instead of mapping new ones.
#include <doctest/doctest.h>

#include <cblas.h>

#include <armadillo>
#include <cstdlib>
#include <string>
#include <thread>

#include "platform/blas_buffers.hpp"
#include "random/stream.hpp"

namespace u = dkp::platform;

TEST_CASE("OpenBLAS's level-3 calls take their work buffers from util/blas_buffers") {
  // 300 x 300 x 300 is beyond OpenBLAS's small-matrix path, so the call packs into a buffer.
  dkp::random::Stream s(31);
  const arma::mat A = dkp::random::normal_matrix(s, 300, 300);
  const arma::mat B = dkp::random::normal_matrix(s, 300, 300);
  arma::mat C(300, 300, arma::fill::zeros);
  const u::BlasBufferStats before = u::blas_buffer_stats();
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 300, 300, 300, 1.0, A.memptr(), 300,
              B.memptr(), 300, 0.0, C.memptr(), 300);
  CHECK(u::blas_buffer_stats().takes > before.takes);  // fails if the executable's definitions
                                                       // are not the ones OpenBLAS calls
  CHECK(arma::approx_equal(C, A * B, "reldiff", 1e-12));
}

TEST_CASE("a thread gets its own buffer back, and a nested take gets another") {
  void* a = blas_memory_alloc(0);
  REQUIRE(a != nullptr);
  blas_memory_free(a);
  CHECK(blas_memory_alloc(0) == a);  // the same buffer again
  void* nested = blas_memory_alloc(0);
  CHECK(nested != a);
  blas_memory_free(nested);
  blas_memory_free(a);
  CHECK(blas_memory_alloc(0) == a);  // the first of its own, not the other
  blas_memory_free(a);
}

TEST_CASE("two threads keep their own buffers while both are free") {
  // OpenBLAS's own table hands out the first free buffer to whoever asks: the second thread would
  // get the first thread's buffer whenever the first is not using it.
  void* mine = blas_memory_alloc(0);
  void* theirs = nullptr;
  std::thread t([&] {
    theirs = blas_memory_alloc(0);  // while `mine` is in use: another buffer
    blas_memory_free(theirs);
  });
  t.join();
  CHECK(theirs != mine);
  blas_memory_free(mine);
  // Both free now; this thread gets its own back, not the other's.
  void* again = blas_memory_alloc(0);
  CHECK(again == mine);
  blas_memory_free(again);
}

TEST_CASE("any thread may give a buffer back, and an exited thread's buffers are adopted") {
  void* a = blas_memory_alloc(0);
  std::thread([a] { blas_memory_free(a); }).join();  // given back by another thread
  CHECK(blas_memory_alloc(0) == a);
  blas_memory_free(a);

  void* made = nullptr;
  std::thread([&] {
    made = blas_memory_alloc(0);
    blas_memory_free(made);
  }).join();  // the thread exits: its buffer loses its owner
  const u::BlasBufferStats before = u::blas_buffer_stats();
  void* adopted = nullptr;
  std::thread([&] {
    adopted = blas_memory_alloc(0);
    blas_memory_free(adopted);
  }).join();
  const u::BlasBufferStats after = u::blas_buffer_stats();
  CHECK(after.mapped == before.mapped);  // no new buffer
  CHECK(after.adopted == before.adopted + 1);
  CHECK(adopted != a);  // this thread's buffer stays this thread's
}

TEST_CASE("blas buffers guard: the OpenBLAS versions the replacement covers") {
  CHECK(u::blas_buffers_cover("OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY Haswell"));
  CHECK_FALSE(u::blas_buffers_cover("OpenBLAS 0.3.26 DYNAMIC_ARCH NO_AFFINITY Zen"));
  CHECK_FALSE(u::blas_buffers_cover("OpenBLAS 0.3.210 DYNAMIC_ARCH"));
  CHECK_FALSE(u::blas_buffers_cover("OpenBLAS 0.3.2 DYNAMIC_ARCH"));
  CHECK_FALSE(u::blas_buffers_cover(""));
}

// Both paths: run normally (ours, on the covered OpenBLAS of the build machine), and as CTest
// platform_blas_fallback with DKP_BLAS_BUFFERS=openblas (OpenBLAS's own functions serve every
// call).
TEST_CASE("blas buffers guard: ours on the covered OpenBLAS, OpenBLAS's own when asked") {
  const char* env = std::getenv("DKP_BLAS_BUFFERS");
  const bool fallback = env != nullptr && std::string(env) == "openblas";
  dkp::random::Stream s(37);
  const arma::mat A = dkp::random::normal_matrix(s, 300, 300);
  const arma::mat B = dkp::random::normal_matrix(s, 300, 300);
  arma::mat C(300, 300, arma::fill::zeros);
  const u::BlasBufferStats before = u::blas_buffer_stats();
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 300, 300, 300, 1.0, A.memptr(), 300,
              B.memptr(), 300, 0.0, C.memptr(), 300);
  CHECK(arma::approx_equal(C, A * B, "reldiff", 1e-12));
  if (fallback) {
    CHECK(u::blas_buffers_mode() == "OpenBLAS's own (DKP_BLAS_BUFFERS=openblas)");
    CHECK(u::blas_buffer_stats().takes == before.takes);  // none of ours handed out
  } else {
    CHECK(u::blas_buffers_mode() == "dkp's per-thread buffers");
    CHECK(u::blas_buffer_stats().takes > before.takes);
  }
}
