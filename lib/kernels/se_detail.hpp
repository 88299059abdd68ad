// Pieces shared by the SE kernels on features (kernels/se.cpp) and on Gram matrices
// (kernels/gram.cpp): the exponent of a kernel entry from a cross product, and the checks of the
// variance argument of the scaled ops. Internal to lib/kernels.
#pragma once

#include <fmt/format.h>
#include <armadillo>

#include "autodiff/tape.hpp"
#include "util/error.hpp"

namespace dkp::kernels::detail {

/// k[i] <- log_h - w max(0, (n_i - 2 c[i]) + m) for i in [first, last) (k == c: in place): the
/// squared distance from the cross product c, the squared norms (or Gram diagonal) n of the left
/// points and m of one right point, clamped at 0 against round-off. The SE kernel with variance h
/// and w = 1 / (2 l^2) is its exponential (log_h = 0: the unit kernel, exactly).
inline void se_exponent_from_cross(const double* c, double* k, const double* n, double m, double w,
                                   double log_h, arma::uword first, arma::uword last) {
  for (arma::uword i = first; i < last; ++i) {
    double d = (-2.0 * c[i] + n[i]) + m;
    d = d < 0.0 ? 0.0 : d;
    k[i] = -w * d + log_h;
  }
}

/// The clamped squared distance max(0, (n_i - 2 c) + m) of the same entry, for adjoints.
inline double sq_dist_from_cross(double c, double n_i, double m) {
  const double d = (-2.0 * c + n_i) + m;
  return d < 0.0 ? 0.0 : d;
}

/// The variance of a scaled SE op is 1 x 1; throws dkp::Error naming `op` otherwise.
inline void check_variance(const char* op, const autodiff::Var& h) {
  if (h.n_rows() != 1 || h.n_cols() != 1) {
    throw Error(fmt::format("kernels::{}: variance is {}x{}, not 1x1", op, h.n_rows(), h.n_cols()));
  }
}

/// The value of a variance that must be 1 x 1 and positive (the ops that put log h inside the
/// exponential or divide by h); throws dkp::Error naming `op` otherwise.
inline double positive_variance(const char* op, const autodiff::Var& h) {
  check_variance(op, h);
  const double hv = h.scalar();
  if (!(hv > 0.0)) throw Error(fmt::format("kernels::{}: variance {} is not positive", op, hv));
  return hv;
}

}  // namespace dkp::kernels::detail
