// Helpers shared by the autodiff op tests: random test matrices and a seeded random contraction
// that turns a matrix-valued op into the scalar the gradient harness differentiates.
#pragma once

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

}  // namespace dkp::test
