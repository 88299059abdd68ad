// Build identification: the library version, and the provenance stamped at build time by
// cmake/version.cmake: the git SHA of the source tree's commit and whether the work tree was
// modified against it (scripts/tree-diff.sh: `git diff HEAD` outside results/, with the untracked
// files of the build's sources).
#pragma once

namespace dkp {

const char* version_string();

/// The commit's short SHA (12 hex digits), with "-dirty" appended when the tree was modified (or
/// its state could not be read); "unknown" without git.
const char* git_sha();

enum class TreeState {
  clean,     ///< the work tree was the commit's
  modified,  ///< the work tree differed from its commit (tree_diff_sha256 identifies how)
  unknown,   ///< no git, no commit, or the changes could not be read
};
TreeState tree_state();
/// "clean", "modified", "unknown".
const char* to_string(TreeState s);

/// The SHA-256 of the patch scripts/tree-diff.sh prints for the work tree the binary was built
/// from (64 hex digits) when it was modified; "" otherwise.
const char* tree_diff_sha256();

/// For tests of what a modified tree may not do: DKP_TEST_MODIFIED_TREE=1 in the environment makes
/// a binary built from a clean tree behave as one built from a modified tree (tree_state()
/// modified, git_sha() with "-dirty", tree_diff_sha256() the SHA-256 of the empty patch,
/// e3b0c442...). It never makes a modified or unknown tree clean.
inline constexpr const char* kTestModifiedTreeEnv = "DKP_TEST_MODIFIED_TREE";

namespace build_stamp {
/// What cmake/version.cmake wrote (generated/version.cpp), without the test override.
const char* git_sha();
int tree_state();  ///< 0 clean, 1 modified, -1 unknown
const char* tree_diff_sha256();
}  // namespace build_stamp

}  // namespace dkp
