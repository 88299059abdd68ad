#include "data/toy.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::data {

double compositional_toy_function(double x) {
  return std::sin(7.0 * std::exp(x));
}

ToyData compositional_toy(size_t n, double noise_std, random::Stream& rng) {
  if (n < 2) throw ConfigError(fmt::format("toy data: {} points (need at least 2)", n));
  if (!std::isfinite(noise_std) || noise_std < 0.0) {
    throw ConfigError(fmt::format("toy data: noise standard deviation {} (need >= 0)", noise_std));
  }
  ToyData d;
  d.X = arma::linspace(-1.0, 1.0, n);
  const arma::mat eps = random::normal_matrix(rng, n, 1);
  d.y.set_size(n);
  for (size_t i = 0; i < n; ++i)
    d.y[i] = compositional_toy_function(d.X(i, 0)) + noise_std * eps(i, 0);
  return d;
}

}  // namespace dkp::data
