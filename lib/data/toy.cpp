#include "data/toy.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/sha256.hpp"

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

bool is_toy_dataset(const std::string& dataset) {
  return dataset == kToyDataset;
}

RegressionSplit toy_split(size_t split) {
  const random::Stream root(0);
  random::Stream train_rng = root.child("toy-data", 0), test_rng = root.child("toy-test", 0);
  const ToyData train = compositional_toy(kToyPoints, kToyNoiseStd, train_rng);
  const ToyData test = compositional_toy(kToyTestPoints, kToyNoiseStd, test_rng);
  RegressionSplit s;
  s.dataset = kToyDataset;
  s.split = split;
  s.X_train = train.X;
  s.y_train = train.y;
  s.X_test = test.X;
  s.y_test = test.y;
  s.x_stats.mean = arma::rowvec(1, arma::fill::zeros);
  s.x_stats.std = arma::rowvec(1, arma::fill::ones);
  return s;
}

std::string toy_sha256() {
  const RegressionSplit s = toy_split(0);
  std::string text;
  for (const arma::mat* m : {&s.X_train, &s.X_test})
    for (double v : *m) text += fmt::format("{:.17g}\n", v);
  for (const arma::vec* v : {&s.y_train, &s.y_test})
    for (double x : *v) text += fmt::format("{:.17g}\n", x);
  util::Sha256 h;
  h.update(text);
  return h.hex_digest();
}

}  // namespace dkp::data
