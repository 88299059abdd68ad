// The compositional-uncertainty toy data (data/toy.hpp).
#include <doctest/doctest.h>

#include <cmath>

#include "data/toy.hpp"
#include "util/error.hpp"

using dkp::data::compositional_toy;
using dkp::data::compositional_toy_function;

TEST_CASE("compositional toy data: evenly spaced inputs on [-1, 1], sin(7 exp x) plus noise") {
  dkp::random::Stream a(3), b(3), c(4);
  const auto d = compositional_toy(50, 0.01, a);
  REQUIRE(d.X.n_rows == 50);
  REQUIRE(d.X.n_cols == 1);
  REQUIRE(d.y.n_elem == 50);
  CHECK(d.X(0, 0) == -1.0);
  CHECK(d.X(49, 0) == 1.0);
  CHECK(d.X(1, 0) - d.X(0, 0) == doctest::Approx(2.0 / 49.0));
  CHECK(compositional_toy_function(0.0) == doctest::Approx(std::sin(7.0)));
  // Same seed, same data; another seed, other noise on the same inputs.
  const auto e = compositional_toy(50, 0.01, b), f = compositional_toy(50, 0.01, c);
  CHECK(arma::approx_equal(d.y, e.y, "absdiff", 0.0));
  CHECK(!arma::approx_equal(d.y, f.y, "absdiff", 1e-6));
  dkp::random::Stream z(3);
  const auto clean = compositional_toy(7, 0.0, z);
  for (arma::uword i = 0; i < 7; ++i)
    CHECK(clean.y[i] == compositional_toy_function(clean.X(i, 0)));
}

TEST_CASE("compositional toy data: the noise has the given standard deviation") {
  const size_t n = 20000;
  const double sd = 0.5;
  dkp::random::Stream s(9);
  const auto d = compositional_toy(n, sd, s);
  arma::vec r(n);
  for (size_t i = 0; i < n; ++i) r[i] = d.y[i] - compositional_toy_function(d.X(i, 0));
  CHECK(std::abs(arma::mean(r)) < 4.0 * sd / std::sqrt(double(n)));
  CHECK(std::abs(arma::var(r) - sd * sd) < 4.0 * sd * sd * std::sqrt(2.0 / double(n - 1)));
}

TEST_CASE("compositional toy data: bad sizes and noise") {
  dkp::random::Stream s(1);
  CHECK_THROWS_AS(compositional_toy(1, 0.01, s), dkp::ConfigError);
  CHECK_THROWS_AS(compositional_toy(10, -0.1, s), dkp::ConfigError);
  CHECK_THROWS_AS(compositional_toy(10, std::nan(""), s), dkp::ConfigError);
}
