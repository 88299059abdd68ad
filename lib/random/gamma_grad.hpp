// Implicit reparameterisation gradients of Gamma samples (DESIGN.md section 4; Figurnov, Mohamed &
// Mnih 2018, "Implicit reparameterization gradients").
//
// For x ~ Gamma(a, 1) with CDF F(x; a) = P(a, x) (regularised lower incomplete gamma) and density
// f(x; a) = x^(a-1) e^(-x) / Gamma(a), holding the uniform u = F(x; a) fixed gives
//
//     d x / d a = -(dF(x; a)/da) / f(x; a).
//
// For a rate-parameterised sample y = x / rate ~ Gamma(a, rate):
//
//     d y / d a    = (d x / d a) / rate,
//     d y / d rate = -x / rate^2 = -y / rate      (trivial; no function is provided for it).
//
// Two implementations of d x / d a for the standard Gamma are provided:
//  * gamma_grad_shape_torch: a port of torch 1.13's standard_gamma_grad_one (three regimes,
//    notes/reference-implementations.md section 8), i.e. what the reference Python runs used.
//  * gamma_grad_shape_accurate: -(dP/da)/f evaluated to about 1e-13 relative (see the .cpp), the
//    reference the torch port is measured against.
//
// Measured accuracy of the torch port against the accurate function (maximum relative error on a
// grid of 281 shapes 0.01 .. 1e5 x 401 probabilities 1e-6 .. 1 - 1e-6, x = Gamma quantile; the
// test in tests/random/gamma_grad_test.cpp recomputes and bounds these):
//
//   regime                       q in [1e-6, 1-1e-6]   q in [1e-3, 0.999]
//   1 series (x < 0.8)           3.7e-4                2.6e-4   (worst for shapes 3..8, x near 0.8)
//   2 saddle point (shape > 8)   2.0e-3                7.1e-4   (worst for shapes just above 8)
//   3 rational (otherwise)       1.1e-2                8.4e-4   (worst: tiny shapes, upper tail)
//   shapes >= 100 (regime 2)     9.3e-5                9.3e-5
//
// i.e. torch's approximation is NOT within 1e-4 relative across the shape range; the accurate
// function is (measured <= 4e-13 against a 50-digit reference, 4e-12 against quantile differences).
// Cost: the accurate function takes ~0.1-1 us for shapes <= 1e3 and up to ~6 us at shape 1e5
// (the series/continued fraction need O(sqrt(shape)) terms near the mode).
#pragma once

#include <armadillo>

namespace dkp::random {

/// Which regime of torch's approximation gamma_grad_shape_torch(x, a) uses.
enum class TorchGammaGradRegime { kSeries = 1, kSaddlePoint = 2, kRational = 3 };

/// The regime torch 1.13 selects for (x, a): series if x < 0.8f, else saddle point if a > 8,
/// else the rational approximation.
TorchGammaGradRegime torch_gamma_grad_regime(double x, double a);

/// d x / d a for a standard Gamma(a, 1) sample x, ported from torch 1.13
/// (aten/src/ATen/native/Distributions.h, standard_gamma_grad_one) with the same regimes,
/// thresholds (including the float literals 0.8f, 0.9f, 1.1f) and constants. Digamma is Boost's.
/// Like torch, a NaN result in the series regime is returned as 0.
double gamma_grad_shape_torch(double x, double a);

/// d x / d a = -(dP(a, x)/da) / f(x; a) for a standard Gamma(a, 1) sample x, accurate to about
/// 1e-13 relative (cancellation-free series for log x <= digamma(a + 1), otherwise the Legendre
/// continued fraction of the upper incomplete gamma differentiated in a alongside its evaluation).
/// Requires a > 0 and x >= 0 finite (dkp::Error otherwise); returns 0 at x = 0.
double gamma_grad_shape_accurate(double x, double a);

/// Elementwise versions (x and a of equal size).
arma::mat gamma_grad_shape_torch(const arma::mat& x, const arma::mat& a);
arma::mat gamma_grad_shape_accurate(const arma::mat& x, const arma::mat& a);

}  // namespace dkp::random
