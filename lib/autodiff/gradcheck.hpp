// Gradient-check harness (in the style of Stan's expect_ad): compares reverse-mode gradients of a
// scalar function of several matrix inputs with a 4-point central finite-difference stencil,
//   f'(x) ~ (-f(x+2h) + 8 f(x+h) - 8 f(x-h) + f(x-2h)) / (12 h),   error O(h^4),
// with h = step * max(1, |x|). An element passes when
//   |ad - fd| <= abs + rel * max(|ad|, |fd|).
// Used by every op test and by the model tests.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autodiff/tape.hpp"

namespace dkp::autodiff {

/// The one place gradient-test tolerances live.
struct Tolerances {
  double step = 1e-4;    ///< finite-difference step, relative to max(1, |x|)
  double rel = 1e-6;     ///< relative tolerance on each gradient element
  double abs = 1e-8;     ///< absolute floor
  double value = 1e-10;  ///< relative tolerance of a value against a plain computation
};

struct GradCheckResult {
  bool ok = true;
  double worst_ratio = 0.0;  ///< max over elements of |ad - fd| / (abs + rel max(|ad|,|fd|))
  std::string detail;        ///< the worst element: input, index, ad, fd
};

/// A scalar function of matrix inputs, written with autodiff ops.
using ScalarFunction = std::function<Var(Tape&, const std::vector<Var>&)>;

/// Evaluates f with plain values (no gradient recorded).
double evaluate(const ScalarFunction& f, const std::vector<arma::mat>& inputs);

/// Reverse-mode gradients of f at `inputs`, one matrix per input.
std::vector<arma::mat> gradients(const ScalarFunction& f, const std::vector<arma::mat>& inputs);

/// Compares reverse-mode and finite-difference gradients w.r.t. every element of every input.
/// `which` selects the inputs to check (empty: all).
GradCheckResult check_gradient(const ScalarFunction& f, const std::vector<arma::mat>& inputs,
                               const Tolerances& tol = {}, const std::vector<size_t>& which = {});

/// Compares the value of f (evaluated without gradients) with `expected`, computed in plain
/// Armadillo: passes when |f - expected| <= tol.value * max(1, |expected|).
GradCheckResult check_value(const ScalarFunction& f, const std::vector<arma::mat>& inputs,
                            double expected, const Tolerances& tol = {});

/// Whether f throws a dkp::Error both when evaluated on constants and when gradients are taken
/// (Stan's expect_ad rule: autodiff throws exactly when the plain computation throws).
struct ThrowCheckResult {
  bool value_threw = false;
  bool gradient_threw = false;
  std::string message;  ///< what() of the first error
  bool ok() const { return value_threw && gradient_threw; }
};
ThrowCheckResult check_throws(const ScalarFunction& f, const std::vector<arma::mat>& inputs);

/// sum(y % W) for fixed weights W ~ U(-1, 1) drawn from `seed` (Boost.Random): turns a
/// matrix-valued op into a scalar in which every output element has its own weight (a wrong adjoint
/// of any element shows up). Uses its own engine, not Armadillo's global one.
Var random_contraction(const Var& y, uint64_t seed);

}  // namespace dkp::autodiff
