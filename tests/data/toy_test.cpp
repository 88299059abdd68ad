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

TEST_CASE("the toy dataset: its splits are trials of one data set, unstandardised") {
  using namespace dkp::data;
  CHECK(is_toy_dataset("toy"));
  CHECK(!is_toy_dataset("boston"));
  const RegressionSplit a = toy_split(0), b = toy_split(7);
  REQUIRE(a.X_train.n_rows == kToyPoints);
  REQUIRE(a.X_test.n_rows == 101);
  CHECK(b.split == 7);
  CHECK(arma::approx_equal(a.X_train, b.X_train, "absdiff", 0.0));
  CHECK(arma::approx_equal(a.y_train, b.y_train, "absdiff", 0.0));
  CHECK(arma::approx_equal(a.y_test, b.y_test, "absdiff", 0.0));
  // `dkp toy`'s data at its default seed, and test points that are not the training noise again.
  dkp::random::Stream rng = dkp::random::Stream(0).child("toy-data", 0);
  const ToyData d = compositional_toy(kToyPoints, kToyNoiseStd, rng);
  CHECK(arma::approx_equal(a.y_train, d.y, "absdiff", 0.0));
  CHECK(a.y_mean == 0.0);
  CHECK(a.y_std == 1.0);
  CHECK(arma::approx_equal(a.x_stats.transform(a.X_test), a.X_test, "absdiff", 0.0));
  const arma::vec r = a.y_test - arma::sin(7.0 * arma::exp(a.X_test.col(0)));
  CHECK(arma::stddev(r) < 3.0 * kToyNoiseStd);
  CHECK(arma::stddev(r) > 0.3 * kToyNoiseStd);
  // The fingerprint is fixed, and is that of the values.
  CHECK(toy_sha256() == toy_sha256());
  CHECK(toy_sha256().size() == 64);
}
