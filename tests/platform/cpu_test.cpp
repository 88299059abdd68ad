// platform::parse_cpuinfo and describe: fields of the first processor, the processor count, the
// widest vector extension among the flags, and what is left out when a field is missing.
#include <doctest/doctest.h>

#include <string>

#include "platform/cpu.hpp"

namespace {

// Two processors of a Zen 3 virtual machine as /proc/cpuinfo lists them (abridged).
const char* const kZen3 =
    "processor\t: 0\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 1\n"
    "model name\t: AMD EPYC\n"
    "flags\t\t: fpu sse sse2 avx fma avx2 bmi2\n"
    "\n"
    "processor\t: 1\n"
    "vendor_id\t: AuthenticAMD\n"
    "cpu family\t: 25\n"
    "model\t\t: 1\n"
    "model name\t: AMD EPYC\n"
    "flags\t\t: fpu sse sse2 avx fma avx2 bmi2\n";

}  // namespace

TEST_CASE("parse_cpuinfo reads the first processor's fields and counts the processors") {
  const dkp::platform::CpuInfo cpu = dkp::platform::parse_cpuinfo(kZen3);
  CHECK(cpu.model_name == "AMD EPYC");
  CHECK(cpu.family == 25);
  CHECK(cpu.model == 1);
  CHECK(cpu.logical == 2);
  CHECK(cpu.vector_isa == "AVX2");
  CHECK(dkp::platform::describe(cpu) == "AMD EPYC (family 25, model 1), 2 logical CPUs, AVX2");
}

TEST_CASE("parse_cpuinfo: the widest vector extension, and missing fields left out") {
  const dkp::platform::CpuInfo wide =
      dkp::platform::parse_cpuinfo("processor : 0\nflags : sse2 avx avx2 avx512f\n");
  CHECK(wide.vector_isa == "AVX-512");
  CHECK(wide.family == -1);
  CHECK(dkp::platform::describe(wide) == "1 logical CPU, AVX-512");
  // Flags are whole words: "avx512fp16" (in a constructed list) is not "avx512f".
  CHECK(dkp::platform::parse_cpuinfo("flags : sse2 avx2 avx512fp16\n").vector_isa == "AVX2");
  const dkp::platform::CpuInfo arm =
      dkp::platform::parse_cpuinfo("processor : 0\nBogoMIPS : 50.00\n");
  CHECK(arm.vector_isa.empty());
  CHECK(dkp::platform::describe(arm) == "1 logical CPU");
  CHECK(dkp::platform::describe(dkp::platform::parse_cpuinfo("")) == "unknown");
  // A malformed number is unknown, not a partial parse.
  CHECK(dkp::platform::parse_cpuinfo("cpu family : 2x\n").family == -1);
}

TEST_CASE("cpu_description of this machine names at least its processor count") {
  // Linux CI and development machines have /proc/cpuinfo with processor entries.
  const dkp::platform::CpuInfo cpu = dkp::platform::cpu_info();
  CHECK(cpu.logical >= 1);
  CHECK(dkp::platform::cpu_description() != "unknown");
}
