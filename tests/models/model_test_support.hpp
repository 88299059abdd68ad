// Data shared by the model tests: a tiny seeded regression problem.
#pragma once

#include <armadillo>
#include <cstdint>

#include "random/stream.hpp"

namespace dkp::test {

struct Tiny {
  arma::mat X;
  arma::vec y;
};

/// n points with d standard-normal features; y = sin(x_0) + 0.1 noise.
inline Tiny tiny_data(size_t n, size_t d, uint64_t seed) {
  random::Stream s(seed);
  Tiny t;
  t.X = random::normal_matrix(s, n, d);
  t.y = arma::sin(t.X.col(0)) + 0.1 * random::normal_matrix(s, n, 1);
  return t;
}

}  // namespace dkp::test
