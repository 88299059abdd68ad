// Differentiable elementwise special functions and log-sum-exp. Values of lgamma, digamma and
// trigamma come from Boost.Math with a quiet-NaN/Inf error policy (no exceptions at poles,
// matching the IEEE behaviour of std:: functions) and without promotion to long double.
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::autodiff {

Var log1p(const Var& a);          ///< log(1 + x), accurate for small x
Var pow(const Var& a, double p);  ///< x^p; gradient p x^(p-1)
Var softplus(const Var& a);       ///< log(1 + exp(x)), stable for large |x|; gradient sigmoid(x)
Var sigmoid(const Var& a);        ///< 1 / (1 + exp(-x)), stable; gradient s (1 - s)
Var lgamma(const Var& a);         ///< log|Gamma(x)|; gradient digamma(x)
Var digamma(const Var& a);        ///< psi(x); gradient trigamma(x)
Var acos(const Var& a);           ///< arccos(x), |x| <= 1; gradient -1 / sqrt(1 - x^2)
Var sin(const Var& a);            ///< sin(x); gradient cos(x) (the periodic kernel)
/// Multivariate log-gamma, elementwise:
///   log Gamma_p(x) = p (p - 1) / 4 log(pi) + sum_{i=0}^{p-1} lgamma(x - i / 2),
/// defined for x > (p - 1) / 2; gradient sum_i digamma(x - i / 2). p >= 1.
Var mvlgamma(const Var& a, int p);

/// log sum exp over all elements (1x1), stable (the maximum is factored out).
Var logsumexp(const Var& a);
/// log sum exp along one dimension, as arma::sum(X, dim): dim 0 reduces each column (1 x m),
/// dim 1 reduces each row (n x 1). Gradient: softmax weights along that dimension. A slice that is
/// all -inf gives -inf (and zero gradient).
Var logsumexp(const Var& a, int dim);

// Plain-value helpers (the same numerics as the ops).
double softplus(double x);
double sigmoid(double x);
double lgamma(double x);
double digamma(double x);
double trigamma(double x);

}  // namespace dkp::autodiff
