// report/provenance: the line that counts a store's cells by provenance, and its place on the
// results page (summary_markdown with counts; without them the page is as before).
#include <doctest/doctest.h>

#include <string>

#include "report/provenance.hpp"
#include "report/summary.hpp"

using namespace dkp::report;

TEST_CASE(
    "provenance line: modified cells, those verified, mismatches and cells without a commit") {
  ProvenanceCounts c;
  c.cells = 356;
  c.modified = 105;
  CHECK(provenance_line(c) ==
        "105 of 356 committed cells ran from a modified work tree; 0 of them verified at a clean "
        "commit");
  CHECK(c.clean() == 251);
  c.modified_verified = 12;
  c.verified = 14;
  c.mismatched = 1;
  c.unknown = 1;
  CHECK(provenance_line(c, "done cells") ==
        "105 of 356 done cells ran from a modified work tree; 12 of them verified at a clean "
        "commit; 1 did not reproduce at a clean commit (to be recomputed); 1 records no commit");
  ProvenanceCounts sum;
  sum += c;
  sum += c;
  CHECK(sum.cells == 712);
  CHECK(sum.modified_verified == 24);
  CHECK(sum.clean() == 2 * c.clean());
}

TEST_CASE("summary page: the provenance line under the scoreboard when counts are given") {
  const std::string plain = summary_markdown({}, {});
  CHECK(plain.find("Provenance") == std::string::npos);
  ProvenanceCounts c;
  c.cells = 3;
  c.modified = 2;
  c.modified_verified = 1;
  c.verified = 1;
  const std::string page = summary_markdown({}, {}, {}, nullptr, &c);
  CHECK(page.find("**Provenance:** 2 of 3 committed cells ran from a modified work tree; 1 of "
                  "them verified at a clean commit.\n") != std::string::npos);
  CHECK(page.find("**Overall:") < page.find("**Provenance:**"));
}
