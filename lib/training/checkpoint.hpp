// Training checkpoints (DESIGN.md section 6): step, parameters and Adam state, written atomically
// in an exact text form (hexadecimal floating point, training/exact_io.hpp). The run's random
// streams are derived from (seed, purpose, step), so no engine state needs saving.
//
// A checkpoint carries its identity (format v2): the configuration hash and the data fingerprint
// of the run that wrote it (dkp run: RunSpec::hash() and the manifest's data_sha256), and, on its
// last line, the SHA-256 of everything before that line, so that a checkpoint of another run, of
// other data, or one changed or damaged after it was written is recognised before it is resumed.
//
//   dkp-checkpoint v2
//   config_hash <16 hex | ->
//   data_sha256 <64 hex | ->
//   step <n>
//   count <k>
//   param <name> <rows> <cols> <values...>      (k lines)
//   adam
//   <Adam state>
//   end-checkpoint
//   sha256 <64 hex: SHA-256 of the bytes above this line>
//
// Checkpoints written before v2 ("dkp-checkpoint v1": no identity lines, no sha256 line) still
// load; whoever resumes one must establish its identity otherwise (dkp run: the run directory's
// manifest.json).
#pragma once

#include <filesystem>
#include <string>

#include "training/adam.hpp"

namespace dkp::training {

/// Whose checkpoint it is. Empty fields: unknown (a v1 checkpoint, or a caller that set none).
struct CheckpointIdentity {
  std::string config_hash;  ///< the run's configuration hash (experiments::RunSpec::hash)
  std::string data_sha256;  ///< the fingerprint of the data files it trains on
  bool empty() const { return config_hash.empty() && data_sha256.empty(); }
};

struct Checkpoint {
  uint64_t step = 0;
  ParameterSet params;
  AdamState adam;
  CheckpointIdentity identity;
};

/// What a checkpoint file says about itself, read without the model (read_checkpoint_header).
struct CheckpointHeader {
  int version = 0;              ///< 1 (legacy: no identity, no checksum) or 2
  CheckpointIdentity identity;  ///< empty for version 1
  uint64_t step = 0;
  bool checksum_ok = true;      ///< version 2: the sha256 line matches the contents (1: true)
  std::string checksum_stored;  ///< version 2: the sha256 line's value ("" when missing)
  std::string checksum_actual;  ///< version 2: the SHA-256 of the contents
  bool legacy() const { return version < 2; }
};

/// Writes the checkpoint atomically (temporary file + rename), format v2 with ck.identity.
void save_checkpoint(const std::filesystem::path& path, const Checkpoint& ck);

/// Reads a checkpoint's version, identity and step, and checks its checksum (the result says
/// whether it matched; a missing sha256 line of a v2 file, e.g. a truncated file, is a mismatch).
/// Throws dkp::DataError naming the file when it cannot be read or is not a checkpoint.
CheckpointHeader read_checkpoint_header(const std::filesystem::path& path);

/// Reads a checkpoint (v1 or v2). `expected` gives the model's parameter names and shapes; a
/// checkpoint of a different model (missing/extra names or other shapes) is a dkp::DataError
/// naming the difference, and so is a v2 checkpoint whose checksum does not match its contents.
Checkpoint load_checkpoint(const std::filesystem::path& path, const ParameterSet& expected);

}  // namespace dkp::training
