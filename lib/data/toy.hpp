// The 1-D toy data set of the compositional-uncertainty paper (Ustyuzhaninov et al. 2020,
// section 5, Figure 5 and Table 1; notes/reference-implementations.md section 6):
// N = 50 noisy observations y = sin(7 exp(x)) + 0.01 eps of a function that is naturally a
// composition (a periodic function of a warped input), on x in [-1, 1], the range of the observed
// data the paper names. The inputs are evenly spaced (the reference notebook's spacing is not
// recorded in the notes: inferred).
#pragma once

#include <armadillo>
#include <string>

#include "data/standardise.hpp"
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

/// The toy as a dataset of the grids and `dkp run` (`--dataset toy`): the paper's one data set,
/// whose "splits" are its trials. Every split has the same data (the paper fits its 10 trials
/// to one data set with different initialisations); a run on split k draws its randomness from
/// its seed's stream child (posterior, k) (experiments::run_stream), as `dkp toy` does.
inline constexpr const char* kToyDataset = "toy";
/// Whether `dataset` names the toy.
bool is_toy_dataset(const std::string& dataset);
/// Its number of splits (trials): 10, as the paper's Table 1.
inline constexpr int kToyTrials = 10;
/// The toy's points and noise (the paper's N = 50, noise standard deviation 0.01; the model's
/// fixed likelihood noise is the same, models::CdgpConfig::noise_std).
inline constexpr size_t kToyPoints = 50;
inline constexpr double kToyNoiseStd = 0.01;
/// Its test points (toy_split).
inline constexpr size_t kToyTestPoints = 101;

/// The toy dataset: the training data are compositional_toy(kToyPoints, kToyNoiseStd) from
/// Stream(0).child("toy-data", 0) (`dkp toy`'s data at its default seed); the test data are
/// kToyTestPoints more noisy points, evenly spaced on [-1, 1], from Stream(0).child("toy-test", 0).
/// Neither is standardised (identity statistics): the model's noise is in the data's units.
RegressionSplit toy_split(size_t split);
/// The fingerprint of the toy data (a run's data_sha256): the SHA-256 of their values printed
/// to 17 significant digits, so a change of the generator changes it.
std::string toy_sha256();

}  // namespace dkp::data
