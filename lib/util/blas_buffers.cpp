#include "util/blas_buffers.hpp"

#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

// Everything here is constant-initialised: OpenBLAS's load-time constructor takes and gives back
// a buffer before main, before any dynamic initialisation of ours has run.
constexpr int kSlots = 256;

struct Slot {
  std::atomic<void*> buffer{nullptr};
  std::atomic<bool> used{false};
  std::atomic<unsigned long> owner{0};  // the owning thread's token; 0: none
};

Slot g_slots[kSlots];
std::atomic<int> g_count{0};  // slots [0, g_count) have buffers
std::mutex g_make;            // making a buffer or adopting one
std::atomic<unsigned long> g_next_token{1};
std::atomic<std::size_t> g_takes{0}, g_mapped{0}, g_adopted{0};

[[noreturn]] void fatal(const char* what) {
  std::fprintf(stderr, "dkp: OpenBLAS work buffers: %s\n", what);
  std::abort();
}

// A thread's slots lose their owner when it exits, so that another thread can adopt them.
struct Disown {
  unsigned long token;
  ~Disown() {
    const int n = g_count.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
      unsigned long mine = token;
      g_slots[i].owner.compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
    }
  }
};

thread_local unsigned long t_token = 0;

unsigned long my_token() {
  if (t_token == 0) {
    t_token = g_next_token.fetch_add(1, std::memory_order_relaxed);
    static thread_local Disown disown{t_token};
    (void)disown;
  }
  return t_token;
}

bool take(Slot& s) {
  bool expected = false;
  return s.used.compare_exchange_strong(expected, true, std::memory_order_acquire);
}

void* handed_out(Slot& s) {
  g_takes.fetch_add(1, std::memory_order_relaxed);
  return s.buffer.load(std::memory_order_relaxed);
}

}  // namespace

extern "C" void* blas_memory_alloc(int /*procpos*/) {
  const unsigned long token = my_token();
  // This thread's own buffers: no lock.
  int n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    Slot& s = g_slots[i];
    if (s.owner.load(std::memory_order_relaxed) == token && take(s)) return handed_out(s);
  }
  // All in use (or none yet): adopt a buffer without an owner, or make one.
  const std::lock_guard<std::mutex> lock(g_make);
  n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    Slot& s = g_slots[i];
    unsigned long none = 0;
    if (s.owner.load(std::memory_order_relaxed) != 0 || !take(s)) continue;
    if (!s.owner.compare_exchange_strong(none, token, std::memory_order_acq_rel)) {
      s.used.store(false, std::memory_order_release);  // owned meanwhile: not ours
      continue;
    }
    g_adopted.fetch_add(1, std::memory_order_relaxed);
    return handed_out(s);
  }
  if (n == kSlots) fatal("more than 256 buffers in use at once");
  void* p = mmap(nullptr, dkp::util::kBlasBufferBytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) fatal("cannot map a buffer");
  Slot& s = g_slots[n];
  s.buffer.store(p, std::memory_order_relaxed);
  s.used.store(true, std::memory_order_relaxed);
  s.owner.store(token, std::memory_order_relaxed);
  g_count.store(n + 1, std::memory_order_release);
  g_mapped.fetch_add(1, std::memory_order_relaxed);
  return handed_out(s);
}

extern "C" void blas_memory_free(void* buffer) {
  const int n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (g_slots[i].buffer.load(std::memory_order_relaxed) == buffer) {
      g_slots[i].used.store(false, std::memory_order_release);
      return;
    }
  }
  fatal("a buffer given back that was not handed out");
}

namespace dkp::util {

BlasBufferStats blas_buffer_stats() {
  return {g_takes.load(std::memory_order_relaxed), g_mapped.load(std::memory_order_relaxed),
          g_adopted.load(std::memory_order_relaxed)};
}

}  // namespace dkp::util
