// The provenance of a result store's finished cells in plain numbers, for the results page and
// `dkp grid status`: how many ran from a binary built from a modified work tree (git_sha ending in
// -dirty, or tree_modified true), and how many of those a binary built from a clean commit has
// verified since (`dkp grid verify --record`). lib/experiments/provenance.hpp counts a store.
#pragma once

#include <cstddef>
#include <string>

namespace dkp::report {

struct ProvenanceCounts {
  size_t cells = 0;              ///< finished cells, each once
  size_t modified = 0;           ///< ran from a modified work tree
  size_t unknown = 0;            ///< record no commit (git_sha missing or "unknown"), not modified
  size_t verified = 0;           ///< verified at a clean commit, passing (bit-identical or within
                                 ///< tolerance), whatever their own tree
  size_t modified_verified = 0;  ///< of `modified`: verified at a clean commit, passing
  size_t mismatched = 0;  ///< their recorded verification did not reproduce them: to be recomputed
  size_t clean() const { return cells - modified - unknown; }
  ProvenanceCounts& operator+=(const ProvenanceCounts& o);
};

/// "105 of 356 committed cells ran from a modified work tree; 12 of them verified at a clean
/// commit", then, when not zero, "; 1 did not reproduce at a clean commit (to be recomputed)" and
/// "; 2 record no commit". `cells` names the cells counted ("committed cells", "done cells").
std::string provenance_line(const ProvenanceCounts& c,
                            const std::string& cells = "committed cells");

}  // namespace dkp::report
