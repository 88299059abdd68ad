#include "platform/blas_count.hpp"

#include <dlfcn.h>

namespace dkp::platform {

BlasCount operator-(const BlasCount& b, const BlasCount& a) {
  return {b.calls - a.calls, b.flops - a.flops, b.seconds - a.seconds};
}

BlasCount& operator+=(BlasCount& a, const BlasCount& d) {
  a.calls += d.calls;
  a.flops += d.flops;
  a.seconds += d.seconds;
  return a;
}

std::optional<BlasCount> blas_count() {
  using Read = void (*)(std::uint64_t*, std::uint64_t*, std::uint64_t*);
  static const Read read = reinterpret_cast<Read>(dlsym(RTLD_DEFAULT, "dkp_blas_count_read"));
  if (read == nullptr) return std::nullopt;
  std::uint64_t calls = 0, flops = 0, ns = 0;
  read(&calls, &flops, &ns);
  return BlasCount{calls, double(flops), double(ns) * 1e-9};
}

std::vector<RoutineCount> blas_count_routines() {
  using Read = const char* (*)(int, std::uint64_t*, std::uint64_t*, std::uint64_t*);
  static const Read read = reinterpret_cast<Read>(dlsym(RTLD_DEFAULT, "dkp_blas_count_routine"));
  std::vector<RoutineCount> out;
  if (read == nullptr) return out;
  std::uint64_t calls = 0, flops = 0, ns = 0;
  for (int i = 0; const char* name = read(i, &calls, &flops, &ns); ++i) {
    out.push_back({name, {calls, double(flops), double(ns) * 1e-9}});
  }
  return out;
}

const char* blas_count_library() {
  return "libdkp_blas_count.so";
}

}  // namespace dkp::platform
