// Helpers shared by the autodiff op tests: random test matrices and a seeded random contraction
// that turns a matrix-valued op into the scalar the gradient harness differentiates.
#pragma once

#include <vector>

#include <doctest/doctest.h>
#include <armadillo>

#include "autodiff/gradcheck.hpp"
#include "autodiff/tape.hpp"
#include "test_support.hpp"

namespace dkp::test {

/// Uniform entries in [lo, hi) from Armadillo's generator (seeded by the test runner).
inline arma::mat randm(arma::uword r, arma::uword c, double lo = -1.0, double hi = 1.0) {
  return lo + (hi - lo) * arma::randu(r, c);
}

/// sum(W % y) with fixed random weights W that depend on the test seed and y's shape.
inline autodiff::Var contract(const autodiff::Var& y) {
  return autodiff::random_contraction(y, seed() + 1000 * y.n_rows() + y.n_cols());
}

/// The same contraction of a plain matrix.
inline double contract(const arma::mat& y) {
  autodiff::Tape t;
  return contract(t.constant(y)).scalar();
}

/// A fused op against the composition of ops it replaces, both as scalar functions of `inputs`:
/// values equal to relative `value_eps`, every gradient of the composition nonzero, and the
/// gradients equal to `grad_eps` (1 + max |composed gradient|). Returns the fused gradients.
inline std::vector<arma::mat> expect_fused_matches(const autodiff::ScalarFunction& fused,
                                                   const autodiff::ScalarFunction& composed,
                                                   const std::vector<arma::mat>& inputs,
                                                   double value_eps, double grad_eps) {
  CHECK(autodiff::evaluate(fused, inputs) ==
        doctest::Approx(autodiff::evaluate(composed, inputs)).epsilon(value_eps));
  const auto gf = autodiff::gradients(fused, inputs), gc = autodiff::gradients(composed, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    CAPTURE(i);
    CHECK(arma::norm(gc[i], "inf") > 0.0);
    CHECK(arma::approx_equal(gf[i], gc[i], "absdiff", grad_eps * (1.0 + arma::abs(gc[i]).max())));
  }
  return gf;
}

}  // namespace dkp::test
