// util/arma_alloc: size classes, reuse of freed large blocks on the freeing thread, and Armadillo's
// matrices going through it (the build includes platform/arma_alloc.hpp before <armadillo>).
#include <doctest/doctest.h>

#include <malloc.h>

#include <armadillo>
#include <cstdint>
#include <thread>
#include <vector>

#include "platform/arma_alloc.hpp"

namespace u = dkp::platform;

TEST_CASE("size classes are an eighth of a power of two apart and round up by at most 12.5%") {
  CHECK(u::alloc_class_bytes(100) == 100);  // below the cached range: unchanged
  CHECK(u::alloc_class_bytes(u::kMinCachedBytes) == u::kMinCachedBytes);
  CHECK(u::alloc_class_bytes(u::kMinCachedBytes + 1) == u::kMinCachedBytes / 8 * 9);
  CHECK(u::alloc_class_bytes(100 * 455 * 8) == 393216);  // 364,000 bytes -> 12 x 2^15
  CHECK(u::alloc_class_bytes((std::size_t(1) << 20) - 1) == std::size_t(1) << 20);
  for (std::size_t n = u::kMinCachedBytes; n < (std::size_t(1) << 24); n = n * 21 / 20 + 7) {
    const std::size_t c = u::alloc_class_bytes(n);
    CHECK(c >= n);
    CHECK(double(c) <= 1.125 * double(n));
    CHECK(u::alloc_class_bytes(c) == c);  // a class size is its own class
  }
}

TEST_CASE("a freed large block is handed out again for its class on the same thread") {
  if (!u::alloc_cache_enabled()) {  // sanitizer build: every block goes back to malloc
    dkp_arma_free(dkp_arma_alloc(300000));
    CHECK(u::alloc_cached_bytes() == 0);
    return;
  }
  const std::size_t before = u::alloc_cached_bytes();
  void* a = dkp_arma_alloc(300000);
  REQUIRE(a != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 64 == 0);
  CHECK(malloc_usable_size(a) >= u::alloc_class_bytes(300000));
  dkp_arma_free(a);
  CHECK(u::alloc_cached_bytes() == before + u::alloc_class_bytes(300000));
  void* b = dkp_arma_alloc(u::alloc_class_bytes(300000) - 5);  // same class
  CHECK(b == a);
  CHECK(u::alloc_cached_bytes() == before);
  void* c = dkp_arma_alloc(2 * 300000);  // another class: a new block
  CHECK(c != a);
  dkp_arma_free(b);
  dkp_arma_free(c);
  dkp_arma_free(nullptr);
  // Small blocks are not cached.
  const std::size_t mid = u::alloc_cached_bytes();
  void* s = dkp_arma_alloc(1000);
  REQUIRE(s != nullptr);
  dkp_arma_free(s);
  CHECK(u::alloc_cached_bytes() == mid);
}

TEST_CASE("blocks freed on another thread go to that thread's cache; matrices use the cache") {
  if (!u::alloc_cache_enabled()) return;  // sanitizer build: no cache
  void* p = dkp_arma_alloc(200000);
  const std::size_t mine = u::alloc_cached_bytes();
  std::size_t theirs = 0;
  std::thread t([&] {
    dkp_arma_free(p);
    theirs = u::alloc_cached_bytes();
  });
  t.join();
  CHECK(theirs == u::alloc_class_bytes(200000));
  CHECK(u::alloc_cached_bytes() == mine);

  const std::size_t before = u::alloc_cached_bytes();
  double* first = nullptr;
  {
    arma::mat A(100, 455, arma::fill::value(1.5));
    first = A.memptr();
    CHECK(arma::accu(A) == doctest::Approx(1.5 * 45500));
  }
  CHECK(u::alloc_cached_bytes() == before + u::alloc_class_bytes(100 * 455 * 8));
  arma::mat B(455, 100, arma::fill::zeros);  // same number of elements: the same block
  CHECK(B.memptr() == first);
  CHECK(arma::accu(B) == 0.0);
}

TEST_CASE("a miss while the cache holds more than 16 MiB returns the cached blocks to malloc") {
  if (!u::alloc_cache_enabled()) return;  // sanitizer build: no cache
  const std::size_t mb = std::size_t(1) << 20;
  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) blocks.push_back(dkp_arma_alloc(mb));
  for (void* p : blocks) dkp_arma_free(p);
  REQUIRE(u::alloc_cached_bytes() >= 20 * mb);
  void* hit = dkp_arma_alloc(mb);  // a hit: nothing flushed
  CHECK(u::alloc_cached_bytes() >= 19 * mb);
  void* miss = dkp_arma_alloc(3 * mb);  // another class: everything goes back
  CHECK(u::alloc_cached_bytes() == 0);
  dkp_arma_free(hit);
  dkp_arma_free(miss);
  CHECK(u::alloc_cached_bytes() == mb + u::alloc_class_bytes(3 * mb));
  // A miss with little cached keeps the cache.
  void* small_miss = dkp_arma_alloc(5 * mb);
  CHECK(u::alloc_cached_bytes() == mb + u::alloc_class_bytes(3 * mb));
  dkp_arma_free(small_miss);
}
