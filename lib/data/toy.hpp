// The 1-D toy data set of the compositional-uncertainty paper (Ustyuzhaninov et al. 2020,
// section 5, Figure 5 and Table 1; notes/reference-implementations.md section 6):
// N = 50 noisy observations y = sin(7 exp(x)) + 0.01 eps of a function that is naturally a
// composition (a periodic function of a warped input), on x in [-1, 1], the range of the observed
// data the paper names. The inputs are evenly spaced (the reference notebook's spacing is not
// recorded in the notes: inferred).
#pragma once

#include <armadillo>

#include "random/stream.hpp"

namespace dkp::data {

struct ToyData {
  arma::mat X;  ///< N x 1 inputs, evenly spaced on [-1, 1]
  arma::vec y;  ///< N targets, sin(7 exp(x)) plus Gaussian noise of sd noise_std
};

/// `n` points (at least 2) with noise of standard deviation `noise_std` (>= 0) drawn from `rng`.
/// Throws ConfigError for fewer than 2 points or a negative or non-finite noise_std.
ToyData compositional_toy(size_t n, double noise_std, random::Stream& rng);

/// The noise-free function of the toy data, sin(7 exp(x)).
double compositional_toy_function(double x);

}  // namespace dkp::data
