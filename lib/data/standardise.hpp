// Standardisation with training-set statistics (DESIGN.md section 5): mean and standard deviation
// with the N-1 denominator; a zero standard deviation is replaced by 1. The statistics are kept so
// that predictions and metrics can be mapped back to original units.
#pragma once

#include <armadillo>

#include "data/uci.hpp"

namespace dkp::data {

/// Column-wise affine standardisation z = (x - mean) / std.
struct Standardiser {
  arma::rowvec mean;
  arma::rowvec std;

  /// Fits to the rows of X (requires at least 2 rows).
  static Standardiser fit(const arma::mat& X);
  arma::mat transform(const arma::mat& X) const;
  arma::mat inverse(const arma::mat& Z) const;
};

/// How a split is standardised: by its training rows' mean and standard deviation (the default,
/// as above), or by the training rows' mean over the test rows' population standard deviation
/// plus 1e-6 (test_sd: the DSVI report's code, MattAshman/MLMI4 `code/dgp/datasets.py`
/// `normalize`; a column constant on the test rows is divided by 1e-6). Inputs and targets alike.
enum class Scaling { train, test_sd };

/// One train/test split, standardised with the training statistics.
struct RegressionSplit {
  std::string dataset;
  size_t split = 0;
  arma::mat X_train, X_test;  ///< standardised inputs
  arma::vec y_train, y_test;  ///< standardised targets
  Standardiser x_stats;
  double y_mean = 0.0, y_std = 1.0;  ///< target statistics (original units)
  /// 0: regression; C >= 2: classification, the targets are class indices 0..C-1.
  size_t classes = 0;

  /// Maps standardised target values back to original units.
  arma::vec y_to_original(const arma::vec& y) const { return y * y_std + y_mean; }
};

/// The split `idx` of the rows of X and y: inputs standardised with the training rows'
/// statistics (or as `scaling` says), and the targets too when `standardise_y` (regression;
/// class indices stay).
RegressionSplit standardised_split(const arma::mat& X, const arma::vec& y, const SplitIndices& idx,
                                   bool standardise_y, Scaling scaling = Scaling::train);

/// Builds a standardised split from a loaded dataset.
RegressionSplit make_regression_split(const UciDataset& ds, size_t k,
                                      Scaling scaling = Scaling::train);

}  // namespace dkp::data
