#include "report/provenance.hpp"

#include <fmt/format.h>

namespace dkp::report {

ProvenanceCounts& ProvenanceCounts::operator+=(const ProvenanceCounts& o) {
  cells += o.cells;
  modified += o.modified;
  unknown += o.unknown;
  verified += o.verified;
  modified_verified += o.modified_verified;
  mismatched += o.mismatched;
  return *this;
}

std::string provenance_line(const ProvenanceCounts& c, const std::string& cells) {
  std::string s = fmt::format(
      "{} of {} {} ran from a modified work tree; {} of them verified at a "
      "clean commit",
      c.modified, c.cells, cells, c.modified_verified);
  if (c.mismatched) {
    s += fmt::format("; {} did not reproduce at a clean commit (to be recomputed)", c.mismatched);
  }
  if (c.unknown) s += fmt::format("; {} record{} no commit", c.unknown, c.unknown == 1 ? "s" : "");
  return s;
}

}  // namespace dkp::report
