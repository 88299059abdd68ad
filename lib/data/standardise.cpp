#include "data/standardise.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::data {

Standardiser Standardiser::fit(const arma::mat& X) {
  if (X.n_rows < 2) {
    throw DataError(fmt::format("cannot standardise {} row(s): need at least 2", X.n_rows));
  }
  Standardiser s;
  s.mean = arma::mean(X, 0);
  s.std = arma::stddev(X, 0, 0);  // norm_type 0: N-1 denominator
  s.std.transform([](double v) { return v > 0.0 ? v : 1.0; });
  return s;
}

arma::mat Standardiser::transform(const arma::mat& X) const {
  arma::mat Z = X.each_row() - mean;
  Z.each_row() /= std;
  return Z;
}

arma::mat Standardiser::inverse(const arma::mat& Z) const {
  arma::mat X = Z.each_row() % std;
  X.each_row() += mean;
  return X;
}

namespace {

// The statistics `scaling` takes from a split's training and test rows: the training rows' (fit),
// or their mean over the test rows' population standard deviation plus 1e-6 (test_sd).
Standardiser fit_split(const arma::mat& train, const arma::mat& test, Scaling scaling) {
  if (scaling == Scaling::train) return Standardiser::fit(train);
  if (train.n_rows < 2 || test.n_rows < 1) {
    throw DataError(fmt::format("cannot standardise {} training and {} test row(s): need 2 and 1",
                                train.n_rows, test.n_rows));
  }
  Standardiser s;
  s.mean = arma::mean(train, 0);
  s.std = arma::stddev(test, 1, 0) + 1e-6;  // norm_type 1: N denominator, as numpy's std
  return s;
}

}  // namespace

RegressionSplit standardised_split(const arma::mat& X, const arma::vec& y, const SplitIndices& idx,
                                   bool standardise_y, Scaling scaling) {
  RegressionSplit out;
  const arma::mat Xtr = X.rows(idx.train);
  const arma::mat Xte = X.rows(idx.test);
  const arma::vec ytr = y.elem(idx.train);
  const arma::vec yte = y.elem(idx.test);
  out.x_stats = fit_split(Xtr, Xte, scaling);
  out.X_train = out.x_stats.transform(Xtr);
  out.X_test = out.x_stats.transform(Xte);
  if (!standardise_y) {
    out.y_train = ytr;
    out.y_test = yte;
    return out;
  }
  const Standardiser ys = fit_split(arma::mat(ytr), arma::mat(yte), scaling);
  out.y_mean = ys.mean[0];
  out.y_std = ys.std[0];
  out.y_train = (ytr - out.y_mean) / out.y_std;
  out.y_test = (yte - out.y_mean) / out.y_std;
  return out;
}

RegressionSplit make_regression_split(const UciDataset& ds, size_t k, Scaling scaling) {
  RegressionSplit out = standardised_split(ds.X, ds.y, ds.split(k), true, scaling);
  out.dataset = ds.info.name;
  out.split = k;
  return out;
}

}  // namespace dkp::data
