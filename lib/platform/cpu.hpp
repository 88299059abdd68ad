// The processor a run or a benchmark ran on, from /proc/cpuinfo. Results depend on it at
// round-off (through OpenBLAS's kernels for it) and step times by 3x between the development
// machines (docs/performance.md, machines and BLAS kernels), so run manifests and benchmarks record
// it beside the BLAS kernels.
#pragma once

#include <string>
#include <string_view>

namespace dkp::platform {

struct CpuInfo {
  std::string model_name;  ///< "model name" of the first processor ("" when absent)
  int family = -1;         ///< "cpu family" (-1 when absent)
  int model = -1;          ///< "model" (-1 when absent)
  int logical = 0;         ///< processor entries
  std::string vector_isa;  ///< widest of "AVX-512", "AVX2", "AVX", "SSE2" in the flags, or ""
};

/// Parses the text of /proc/cpuinfo (x86 layout: "key<tabs>: value" lines, a blank line between
/// processors). Fields it does not find keep their defaults.
CpuInfo parse_cpuinfo(std::string_view text);

/// parse_cpuinfo of this machine's /proc/cpuinfo (defaults when it cannot be read).
CpuInfo cpu_info();

/// "AMD EPYC (family 25, model 1), 2 logical CPUs, AVX2"; the parts that are unknown are left
/// out, and "unknown" when nothing is known.
std::string describe(const CpuInfo& cpu);

/// describe(cpu_info()).
std::string cpu_description();

}  // namespace dkp::platform
