// libFuzzer's entry for the fuzz targets (../targets.hpp): built by CMake's DKP_FUZZ option with
// clang (`make fuzz`, docs/cli.md), the target chosen by $DKP_FUZZ_TARGET. An input the target
// refuses with a dkp::Error is fine; any other exception aborts, which libFuzzer reports with the
// input, as it does a crash (AddressSanitizer and UndefinedBehaviorSanitizer are on).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("dkp-fuzz-" + std::to_string(getpid()));
  try {
    target().run(std::string_view(reinterpret_cast<const char*>(data), size), scratch);
  } catch (const dkp::Error&) {
  }
  return 0;
}
