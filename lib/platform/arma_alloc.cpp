#include "platform/arma_alloc.hpp"

#include <malloc.h>

#include <array>
#include <bit>
#include <cstdlib>
#include <vector>

namespace {

using dkp::platform::kMaxCachedBytes;
using dkp::platform::kMinCachedBytes;

constexpr unsigned kMinExp = 16;  // 2^16 = kMinCachedBytes
constexpr unsigned kMaxExp = 47;  // larger blocks are not cached
constexpr std::size_t kClasses = (kMaxExp - kMinExp + 1) * 8;
static_assert(kMinCachedBytes == std::size_t(1) << kMinExp);

struct Class {
  std::size_t index = 0, bytes = 0;
};

// The class of a request: the smallest m 2^(e-3) (m in 8..15) at or above it.
Class class_at_or_above(std::size_t n) {
  unsigned e = unsigned(std::bit_width(n)) - 1;  // 2^e <= n < 2^(e+1)
  const std::size_t step = std::size_t(1) << (e - 3);
  std::size_t m = (n + step - 1) / step;  // 8..16
  if (m == 16) {
    ++e;
    m = 8;
  }
  return {(e - kMinExp) * 8 + (m - 8), m << (e - 3)};
}

// The class a block of usable size u can serve: the largest m 2^(e-3) at or below it.
Class class_at_or_below(std::size_t u) {
  const unsigned e = unsigned(std::bit_width(u)) - 1;
  const std::size_t m = u >> (e - 3);  // 8..15
  return {(e - kMinExp) * 8 + (m - 8), m << (e - 3)};
}

// Cached bytes above which a miss empties the cache.
constexpr std::size_t kFlushBytes = std::size_t(16) << 20;

struct Cache {
  std::array<std::vector<void*>, kClasses> free_blocks;
  std::size_t bytes = 0;
  void flush() {
    for (auto& list : free_blocks) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    bytes = 0;
  }
  ~Cache();
};

// The calling thread's cache. t_cache is trivially destructible, so it can still be read while
// the thread exits (a matrix freed by another thread-local's destructor after the cache is gone
// goes straight to free).
thread_local Cache* t_cache = nullptr;
thread_local bool t_cache_gone = false;

Cache* cache() {
  if (!dkp::platform::alloc_cache_enabled()) return nullptr;  // sanitizer build
  if (t_cache != nullptr || t_cache_gone) return t_cache;
  static thread_local Cache c;
  t_cache = &c;
  return t_cache;
}

Cache::~Cache() {
  t_cache = nullptr;
  t_cache_gone = true;
  flush();
}

}  // namespace

void* dkp_arma_alloc(std::size_t bytes) noexcept {
  if (bytes < kMinCachedBytes) {
    void* p = nullptr;
    const std::size_t align = bytes >= 1024 ? 32 : 16;  // as Armadillo's own posix_memalign
    return posix_memalign(&p, align, bytes) == 0 ? p : nullptr;
  }
  if (std::bit_width(bytes) > kMaxExp) return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  const Class c = class_at_or_above(bytes);
  if (Cache* k = cache()) {
    std::vector<void*>& list = k->free_blocks[c.index];
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      k->bytes -= c.bytes;
      return p;
    }
    // A miss while the cache holds much memory: the shapes have changed (prediction after
    // training, another batch size), so the cached blocks go back to malloc, which can reuse
    // their pages for the new shapes instead of touching fresh memory.
    if (k->bytes > kFlushBytes) k->flush();
  }
  return std::aligned_alloc(64, c.bytes);  // c.bytes is a multiple of 2^13
}

void dkp_arma_free(void* p) noexcept {
  if (p == nullptr) return;
  const std::size_t usable = malloc_usable_size(p);
  if (usable < kMinCachedBytes || std::bit_width(usable) > kMaxExp) {
    std::free(p);
    return;
  }
  // Any block of usable size >= a class's size can serve that class; a block allocated for class
  // c has usable size in [c, next class), so it returns to c.
  const Class c = class_at_or_below(usable);
  Cache* k = cache();
  if (k == nullptr || k->bytes + c.bytes > kMaxCachedBytes) {
    std::free(p);
    return;
  }
  try {
    k->free_blocks[c.index].push_back(p);
    k->bytes += c.bytes;
  } catch (...) {
    std::free(p);
  }
}

namespace dkp::platform {

bool alloc_cache_enabled() {
#ifdef DKP_NO_BLOCK_CACHE
  return false;
#else
  return true;
#endif
}

std::size_t alloc_class_bytes(std::size_t bytes) {
  return bytes < kMinCachedBytes ? bytes : class_at_or_above(bytes).bytes;
}

std::size_t alloc_cached_bytes() {
  const Cache* k = cache();
  return k ? k->bytes : 0;
}

}  // namespace dkp::platform
