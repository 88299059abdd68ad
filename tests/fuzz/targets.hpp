// Fuzz targets: one per parser of what dkp reads from files a user or another machine may hand it
// (grid YAML, run specs, JSON, result.json, trace.csv, checkpoints, claims and explanations,
// reference CSVs, checksum lists, learning-rate schedules, sizes, Adam state, user datasets,
// manifests, the UCI data and index files, predict inputs, MNIST's IDX and Rectangle-Images'
// AMAT files).
// Each takes arbitrary bytes and must return or throw dkp::Error (a clear message); any other
// exception, a crash or a hang is a defect, and where a parser has an inverse the target checks
// that what it accepts writes back the same (FuzzFailure). Run by the deterministic driver of
// `make test` (fuzz_test.cpp) and, built with clang's libFuzzer, for as long as one likes
// (libfuzzer/entry.cpp, `make fuzz`; docs/cli.md).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dkp::fuzz {

/// A parser that accepted its input but broke a property it must keep (an inverse that does not
/// give the text back).
struct FuzzFailure : std::logic_error {
  using std::logic_error::logic_error;
};

struct Target {
  std::string name;
  /// Repository files (relative to the source tree) whose contents seed the corpus.
  std::vector<std::string> seed_files;
  /// Seeds given inline (small valid and near-valid inputs).
  std::vector<std::string> seeds;
  /// Runs the parser on `input`; `scratch` is a directory the target may write into.
  void (*run)(std::string_view input, const std::filesystem::path& scratch);
};

const std::vector<Target>& targets();

/// A target's seed corpus: its inline seeds, then the repository files it names (read from the
/// source tree; dkp::Error naming a file that cannot be read). Both drivers start from it.
std::vector<std::string> seed_corpus(const Target& t);

/// The target named `name`, or nullptr.
const Target* find_target(const std::string& name);

}  // namespace dkp::fuzz
