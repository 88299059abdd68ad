// libFuzzer's entry for the fuzz targets (../targets.hpp): built by CMake's DKP_FUZZ option with
// clang (`make fuzz`, docs/cli.md), the target chosen by $DKP_FUZZ_TARGET. An input the target
// refuses with a dkp::Error is fine; any other exception aborts, which libFuzzer reports with the
// input, as it does a crash (AddressSanitizer and UndefinedBehaviorSanitizer are on).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "../targets.hpp"
#include "util/error.hpp"

namespace {

const dkp::fuzz::Target& target() {
  static const dkp::fuzz::Target* t = [] {
    const char* name = std::getenv("DKP_FUZZ_TARGET");
    const dkp::fuzz::Target* found = name ? dkp::fuzz::find_target(name) : nullptr;
    if (!found) {
      std::fprintf(stderr, "set DKP_FUZZ_TARGET to one of:");
      for (const auto& x : dkp::fuzz::targets()) std::fprintf(stderr, " %s", x.name.c_str());
      std::fprintf(stderr, "\n");
      std::exit(2);
    }
    return found;
  }();
  return *t;
}

}  // namespace

// Before fuzzing, the target's seeds (targets.hpp: inline, and the repository files it names)
// are written into the directory $DKP_FUZZ_SEEDS when that is set (`make fuzz` sets it to the
// target's corpus), so libFuzzer starts from valid inputs rather than from nothing.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("DKP_FUZZ_SEEDS");
  if (!dir) return 0;
  const auto& t = target();
  std::filesystem::create_directories(dir);
  int k = 0;
  for (const auto& bytes : dkp::fuzz::seed_corpus(t)) {
    std::ofstream(std::filesystem::path(dir) / ("seed-" + std::to_string(k++)), std::ios::binary)
        << bytes;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("dkp-fuzz-" + std::to_string(getpid()));
  try {
    target().run(std::string_view(reinterpret_cast<const char*>(data), size), scratch);
  } catch (const dkp::Error&) {
  }
  return 0;
}
