// util::parse_double and util::parse_integer: the whole string or nothing.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "util/parse.hpp"

using dkp::util::parse_double;

TEST_CASE("parse_double takes the whole string as a number") {
  CHECK(parse_double("1.5").value() == 1.5);
  CHECK(parse_double("-2e-3").value() == -2e-3);
  CHECK(parse_double("0x1.8p1").value() == 3.0);
  CHECK(parse_double("0.1").value() == 0.1);  // the nearest double, as the compiler reads it
  CHECK(parse_double("4.9406564584124654e-324").value() ==
        std::numeric_limits<double>::denorm_min());  // underflow: the nearest subnormal
  CHECK(parse_double("1e-400").value() == 0.0);
  CHECK(std::isinf(parse_double("inf").value()));
  CHECK(std::isnan(parse_double("nan").value()));
}

TEST_CASE("parse_double rejects empty, partial and out-of-range text") {
  CHECK_FALSE(parse_double(""));
  CHECK_FALSE(parse_double("1.5x"));
  CHECK_FALSE(parse_double("1.5 "));
  CHECK_FALSE(parse_double("abc"));
  CHECK_FALSE(parse_double("1e999"));
  CHECK_FALSE(parse_double("-1e999"));
  // A view into a longer buffer stops at its own end.
  const std::string_view longer = "2.25,7";
  CHECK(parse_double(longer.substr(0, 4)).value() == 2.25);
}

TEST_CASE("parse_integer takes the whole string as a base-10 integer") {
  using dkp::util::parse_integer;
  CHECK(parse_integer("42").value() == 42);
  CHECK(parse_integer("-7").value() == -7);
  CHECK(parse_integer("9223372036854775807").value() == 9223372036854775807LL);
  CHECK_FALSE(parse_integer(""));
  CHECK_FALSE(parse_integer("1.5"));
  CHECK_FALSE(parse_integer("1e3"));
  CHECK_FALSE(parse_integer("12 "));
  CHECK_FALSE(parse_integer("0x10"));
  CHECK_FALSE(parse_integer("9223372036854775808"));  // out of range
  const std::string_view longer = "123,4";
  CHECK(parse_integer(longer.substr(0, 3)).value() == 123);
}

TEST_CASE("log_level_request reads --quiet and --log-level before the options are parsed") {
  using dkp::util::log_level_request;
  using V = std::vector<std::string>;
  CHECK_FALSE(log_level_request(V{}));
  CHECK_FALSE(log_level_request(V{"--dataset", "boston", "--steps", "10"}));
  CHECK(log_level_request(V{"--log-level", "error"}).value() == "error");
  CHECK(log_level_request(V{"--dataset", "yacht", "--log-level=off"}).value() == "off");
  // --quiet wins wherever it stands, as in the command's parser.
  CHECK(log_level_request(V{"--log-level", "error", "-q"}).value() == "warn");
  CHECK(log_level_request(V{"--quiet", "--log-level", "trace"}).value() == "warn");
  // A value is returned unchecked; a trailing --log-level without one, or options after "--",
  // ask for nothing.
  CHECK(log_level_request(V{"--log-level", "loud"}).value() == "loud");
  CHECK_FALSE(log_level_request(V{"--log-level"}));
  CHECK_FALSE(log_level_request(V{"--", "--quiet"}));
  // An option's value that merely starts like the option is not it.
  CHECK_FALSE(log_level_request(V{"--log-levels", "x"}));
}
