#include "platform/blas_buffers.hpp"

#include <dlfcn.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

// OpenBLAS's report of itself ("OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..."), weak: absent from
// another BLAS.
extern "C" char* openblas_get_config(void) __attribute__((weak));

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

// Which buffers OpenBLAS gets, decided once, at its first call (OpenBLAS's load-time
// constructor, before main): ours when its version is one this replacement was written for and
// DKP_BLAS_BUFFERS is not "openblas"; otherwise its own, found behind ours with
// dlsym(RTLD_NEXT). Constant-initialised, like everything here.
using AllocFn = void* (*)(int);
using FreeFn = void (*)(void*);
std::atomic<int> g_mode{0};  // 0: undecided, 1: ours, 2: OpenBLAS's own
AllocFn g_real_alloc = nullptr;
FreeFn g_real_free = nullptr;
const char* g_reason = "";

int decide_mode() {
  int mode = g_mode.load(std::memory_order_acquire);
  if (mode != 0) return mode;
  static std::mutex decide;
  const std::lock_guard<std::mutex> lock(decide);
  mode = g_mode.load(std::memory_order_relaxed);
  if (mode != 0) return mode;
  const char* env = std::getenv("DKP_BLAS_BUFFERS");
  const char* config = openblas_get_config != nullptr ? openblas_get_config() : nullptr;
  bool ours = true;
  if (env != nullptr && std::strcmp(env, "openblas") == 0) {
    ours = false;
    g_reason = "DKP_BLAS_BUFFERS=openblas";
  } else if (!dkp::platform::blas_buffers_cover(config != nullptr ? config : "")) {
    ours = false;
    g_reason = "an OpenBLAS version the replacement was not written for";
  }
  if (!ours) {
    g_real_alloc = reinterpret_cast<AllocFn>(dlsym(RTLD_NEXT, "blas_memory_alloc"));
    g_real_free = reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "blas_memory_free"));
    if (g_real_alloc == nullptr || g_real_free == nullptr) {
      ours = true;  // nothing behind ours to fall back to: ours is the only buffer table
      g_reason = "OpenBLAS's own functions not found";
    }
  }
  mode = ours ? 1 : 2;
  g_mode.store(mode, std::memory_order_release);
  return mode;
}

}  // namespace

extern "C" void* blas_memory_alloc(int procpos) {
  if (decide_mode() == 2) return g_real_alloc(procpos);
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
  void* p = mmap(nullptr, dkp::platform::kBlasBufferBytes, PROT_READ | PROT_WRITE,
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
  if (decide_mode() == 2) return g_real_free(buffer);
  const int n = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    if (g_slots[i].buffer.load(std::memory_order_relaxed) == buffer) {
      g_slots[i].used.store(false, std::memory_order_release);
      return;
    }
  }
  fatal("a buffer given back that was not handed out");
}

namespace dkp::platform {

bool blas_buffers_cover(const std::string& openblas_config) {
  // Written against OpenBLAS 0.3.21 (Debian 12): blas_memory_alloc(int) / blas_memory_free(void*)
  // called through the PLT, buffers of at most BUFFER_SIZE. Other versions fall back.
  static constexpr const char* kCovered[] = {"OpenBLAS 0.3.21 "};
  for (const char* v : kCovered) {
    if (openblas_config.rfind(v, 0) == 0) return true;
  }
  return false;
}

std::string blas_buffers_mode() {
  return decide_mode() == 1 ? std::string("dkp's per-thread buffers")
                            : std::string("OpenBLAS's own (") + g_reason + ")";
}

BlasBufferStats blas_buffer_stats() {
  return {g_takes.load(std::memory_order_relaxed), g_mapped.load(std::memory_order_relaxed),
          g_adopted.load(std::memory_order_relaxed)};
}

}  // namespace dkp::platform
