// Error messages printed safely (util/error.hpp): a damaged file's bytes quoted in a message
// cannot reach the terminal as control sequences.
#include <doctest/doctest.h>

#include "util/error.hpp"

TEST_CASE("printable_message: control bytes and broken UTF-8 escaped, text kept") {
  using dkp::printable_message;
  CHECK(printable_message("plain: 'x', line 3\n\ttab") == "plain: 'x', line 3\n\ttab");
  CHECK(printable_message("esc \x1b[2J here") == "esc \\x1b[2J here");
  CHECK(printable_message(std::string("nul \0 bell \x07", 12)) == "nul \\x00 bell \\x07");
  CHECK(printable_message("del \x7f cr \r") == "del \\x7f cr \\x0d");
  CHECK(printable_message("caf\xc3\xa9 \xe2\x80\x94 ok") == "caf\xc3\xa9 \xe2\x80\x94 ok");
  CHECK(printable_message("bad \xff \xc3") == "bad \\xff \\xc3");
  CHECK(printable_message("overlong \xc0\xaf") == "overlong \\xc0\\xaf");
  CHECK(printable_message("c1 \xc2\x9b") == "c1 \\xc2\\x9b");  // U+009B, the 8-bit CSI
}
