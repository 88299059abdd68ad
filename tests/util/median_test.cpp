// util::median: odd and even counts, unsorted input, empty input.
#include <doctest/doctest.h>

#include "util/median.hpp"

TEST_CASE("median of odd and even counts, in any order, and of nothing") {
  CHECK(dkp::util::median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(dkp::util::median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  CHECK(dkp::util::median({7.0}) == 7.0);
  CHECK(dkp::util::median({}) == 0.0);
}
