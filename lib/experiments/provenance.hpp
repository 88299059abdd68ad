// The provenance of a result store's cells (docs/reproduction-notes.md, "Provenance"):
//  - which binary computed a cell: manifest.json's (and result.json's) git_sha, tree_modified and
//    tree_diff_sha256 (util/version.hpp), and for a run resumed from a checkpoint the binaries of
//    the processes before it (trained_before_by);
//  - the guard that keeps runs of a binary built from a modified work tree out of the committed
//    store unless asked (`--allow-dirty` of `dkp grid run` and `dkp run`);
//  - verified.json, the record `dkp grid verify --record` leaves in a cell's directory: a binary
//    built from a clean commit reran the cell and compared it;
//  - the counts of a store's finished cells by provenance (report::ProvenanceCounts).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "experiments/verify.hpp"
#include "report/provenance.hpp"
#include "util/version.hpp"

namespace dkp::experiments {

/// The top directory of the git work tree whose results/runs holds `path`: `path` (made absolute
/// and canonical, as far as it exists) is <top>/results/runs or below it, <top> being the nearest
/// directory above it with a `.git` entry (a directory, or the file of a linked worktree).
/// nullopt for any other path: a scratch store.
std::optional<std::filesystem::path> committed_store_checkout(const std::filesystem::path& path);

/// Why a binary whose work tree was `tree` may not write cells into `path` ("" when it may): `path`
/// is in a committed store (committed_store_checkout), the tree is not clean and `allow_dirty`
/// is false. The message names `command` ("dkp grid run"), the store, this binary's git_sha and
/// the way on (a clean build, a scratch --results, or --allow-dirty).
std::string modified_tree_refusal(const std::filesystem::path& path, TreeState tree,
                                  bool allow_dirty, const std::string& command);

/// The file `dkp grid verify --record` writes into a verified cell's directory.
inline constexpr const char* kVerifiedFile = "verified.json";

enum class VerifyOutcome { bit_identical, within_tolerance, mismatch };
/// "bit-identical", "within tolerance", "mismatch" (verified.json's "outcome").
const char* to_string(VerifyOutcome o);

/// One verification of a cell, as verified.json records it.
struct Verification {
  VerifyOutcome outcome = VerifyOutcome::mismatch;
  std::string config_hash;
  std::string result_sha256;            ///< SHA-256 of the result.json that was verified
  std::string git_sha;                  ///< of the verifying binary
  TreeState tree = TreeState::unknown;  ///< of the verifying binary's work tree
  size_t compared = 0;                  ///< values compared
  std::string verified;                 ///< when (ISO 8601)
  bool passed() const { return outcome != VerifyOutcome::mismatch; }
  /// Passed, by a binary built from a clean commit.
  bool passed_clean() const { return passed() && tree == TreeState::clean; }
};

/// The verified.json text of a verdict (ok or mismatch; throws dkp::Error for a failed rerun,
/// which says nothing of the stored result): the cell's hash, the SHA-256 of the stored
/// result.json compared, the stored run's git_sha, the outcome, the mode (bit-identical expected
/// or the tolerance), the values compared, the largest difference within tolerance or every
/// mismatch with both values and |difference|, and the verifying binary: dkp version, git_sha,
/// tree state (util/version.hpp), CPU, BLAS kernels and threads, host and time.
std::string verification_json(const CellVerdict& verdict, const Tolerance& tolerance);

/// Writes verification_json into verdict.stored_dir / verified.json, atomically, replacing an
/// earlier record. Returns the file's path.
std::filesystem::path record_verification(const CellVerdict& verdict, const Tolerance& tolerance);

/// A run directory's verified.json; nullopt when there is none. Throws dkp::DataError naming the
/// file when it is malformed (not JSON, no or an unknown outcome).
std::optional<Verification> read_verification(const std::filesystem::path& run_dir);

/// How a finished cell came to be.
struct CellProvenance {
  enum class Tree { clean, modified, unknown };
  Tree tree = Tree::unknown;
  std::string git_sha;  ///< manifest.json's (else result.json's)
  /// verified.json, when it verified the cell's result.json as it is now (its result_sha256 and
  /// config_hash) and was written by a binary built from a clean commit.
  std::optional<Verification> verification;
  std::string note;  ///< why a verified.json there was not taken ("" when none was)
  bool verified_clean() const { return verification && verification->passed_clean(); }
  bool mismatched() const { return verification && !verification->passed(); }
};

/// The provenance of a finished cell's directory: modified when manifest.json's or result.json's
/// git_sha ends in "-dirty", or either says tree_modified true, or an earlier process of a
/// resumed run did (manifest.json's trained_before_by); else unknown when no git_sha names a
/// commit ("" or "unknown"); else clean. Files that are missing or malformed count as unknown.
CellProvenance read_cell_provenance(const std::filesystem::path& run_dir);

/// Adds one finished cell to `counts`.
void count_cell(const CellProvenance& cell, report::ProvenanceCounts& counts);

/// Counts the finished cells (finished_cell_problem "") of `run_dirs`, each hash once.
report::ProvenanceCounts count_provenance(const std::vector<std::filesystem::path>& run_dirs);
/// Counts every finished cell of a results root (store_run_dirs).
report::ProvenanceCounts count_store_provenance(const std::filesystem::path& results_root);

/// A short mark for `dkp grid status -v`: "" for a clean cell not verified, else e.g.
/// "[modified tree]", "[modified tree; verified bit-identical at 0123456789ab]",
/// "[verified within tolerance at ...]", "[MISMATCH at 0123456789ab: recompute it]",
/// "[no commit recorded]".
std::string provenance_mark(const CellProvenance& p);

}  // namespace dkp::experiments
