// Training checkpoints (DESIGN.md section 6): step, parameters and Adam state, written atomically
// in an exact text form (hexadecimal floating point, training/exact_io.hpp). The run's random
// streams are derived from (seed, purpose, step), so no engine state needs saving.
#pragma once

#include <filesystem>

#include "training/adam.hpp"

namespace dkp::training {

struct Checkpoint {
  uint64_t step = 0;
  ParameterSet params;
  AdamState adam;
};

/// Writes the checkpoint atomically (temporary file + rename).
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& ck);

/// Reads a checkpoint. `expected` gives the model's parameter names and shapes; a checkpoint of a
/// different model (missing/extra names or other shapes) is a dkp::DataError naming the
/// difference.
Checkpoint load_checkpoint(const std::filesystem::path& path, const ParameterSet& expected);

}  // namespace dkp::training
