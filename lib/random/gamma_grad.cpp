#include "random/gamma_grad.hpp"

#include <boost/math/special_functions/digamma.hpp>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::random {

namespace {

void check_args(const char* where, double x, double a) {
  if (!(a > 0.0) || !std::isfinite(a)) {
    throw Error(fmt::format("random::{}: shape must be positive and finite, got {}", where, a));
  }
  if (!(x >= 0.0) || !std::isfinite(x)) {
    throw Error(
        fmt::format("random::{}: sample must be non-negative and finite, got {}", where, x));
  }
}

// A forward-mode dual number v + d*eps, used to differentiate the continued fraction in the shape.
struct Dual {
  double v;
  double d;
};
Dual operator+(Dual p, Dual q) {
  return {p.v + q.v, p.d + q.d};
}
Dual operator*(Dual p, Dual q) {
  return {p.v * q.v, p.d * q.v + p.v * q.d};
}
Dual operator/(Dual p, Dual q) {
  return {p.v / q.v, (p.d * q.v - p.v * q.d) / (q.v * q.v)};
}

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr long kMaxTerms = 100000000;

// Lower series, used when log x <= digamma(a + 1). With
//   P(a, x) = e^-x sum_n x^(a+n) / Gamma(a+n+1),
// differentiating term by term and dividing by f(x; a) = x^(a-1) e^-x / Gamma(a) gives
//   d x / d a = -x sum_n c_n (log x - digamma(a+n+1)),  c_0 = 1/a,  c_n = c_{n-1} x / (a+n).
// Under the condition every factor (log x - digamma(a+n+1)) is negative, so all terms have the
// same sign and there is no cancellation; the terms decrease once n > x - a.
double lower_series(double x, double a, double log_x) {
  double c = 1.0 / a;
  double diff = log_x - boost::math::digamma(a + 1.0);  // log x - digamma(a + n + 1) at n = 0
  double sum = c * diff;
  for (long n = 1; n < kMaxTerms; ++n) {
    c *= x / (a + n);
    diff -= 1.0 / (a + n);  // digamma(a+n+1) = digamma(a+n) + 1/(a+n)
    const double term = c * diff;
    sum += term;
    if (std::fabs(term) <= 0.25 * kEps * std::fabs(sum) && x < a + n) return -x * sum;
  }
  throw Error(
      fmt::format("random::gamma_grad_shape_accurate: series did not converge (x={}, a={})", x, a));
}

// Upper continued fraction, used when log x > digamma(a + 1). Legendre's continued fraction
//   Gamma(a, x) = e^-x x^a h(a, x),  h = 1/(x+1-a-) 1(1-a)/(x+3-a-) 2(2-a)/(x+5-a-) ...
// (Numerical Recipes 6.2.7, evaluated by the modified Lentz method) is evaluated together with
// its derivative dh/da in dual numbers. With Q = 1 - P and f as above,
//   d x / d a = (dQ/da) / f = x (h (log x - digamma(a)) + dh/da),
// where log x - digamma(a) > 0 here, and both terms are positive in practice (no cancellation).
double upper_continued_fraction(double x, double a, double log_x) {
  constexpr double kTiny = 1e-300;
  Dual b{x + 1.0 - a, -1.0};
  Dual c{1.0 / kTiny, 0.0};
  Dual d = Dual{1.0, 0.0} / b;
  Dual h = d;
  for (long i = 1; i < kMaxTerms; ++i) {
    const double di = static_cast<double>(i);
    const Dual an{-di * (di - a), di};
    b.v += 2.0;
    d = an * d + b;
    if (std::fabs(d.v) < kTiny) d.v = kTiny;
    c = b + an / c;
    if (std::fabs(c.v) < kTiny) c.v = kTiny;
    d = Dual{1.0, 0.0} / d;
    const Dual del = d * c;
    h = h * del;
    if (std::fabs(del.v - 1.0) <= 0.5 * kEps &&
        std::fabs(del.d) <= 0.5 * kEps * std::fabs(h.d / h.v)) {
      return x * (h.v * (log_x - boost::math::digamma(a)) + h.d);
    }
  }
  throw Error(fmt::format(
      "random::gamma_grad_shape_accurate: continued fraction did not converge (x={}, a={})", x, a));
}

template <class F>
arma::mat elementwise(const char* where, const arma::mat& x, const arma::mat& a, F f) {
  if (x.n_rows != a.n_rows || x.n_cols != a.n_cols) {
    throw Error(fmt::format("random::{}: x is {}x{} but a is {}x{}", where, x.n_rows, x.n_cols,
                            a.n_rows, a.n_cols));
  }
  arma::mat out(x.n_rows, x.n_cols);
  for (arma::uword i = 0; i < x.n_elem; ++i) out[i] = f(x[i], a[i]);
  return out;
}

}  // namespace

TorchGammaGradRegime torch_gamma_grad_regime(double x, double a) {
  if (x < 0.8f) return TorchGammaGradRegime::kSeries;
  if (a > 8.0f) return TorchGammaGradRegime::kSaddlePoint;
  return TorchGammaGradRegime::kRational;
}

// Port of torch 1.13 standard_gamma_grad_one<double, double>(alpha, x). Variable names follow
// torch; the float literals are kept because torch compares doubles against them.
double gamma_grad_shape_torch(double x, double alpha) {
  // Use a Taylor series expansion for small x.
  if (x < 0.8f) {
    double numer = 1;
    double denom = alpha;
    double series1 = numer / denom;
    double series2 = numer / (denom * denom);
    for (int i = 1; i <= 5; ++i) {
      numer *= -x / static_cast<double>(i);
      denom += 1;
      series1 += numer / denom;
      series2 += numer / (denom * denom);
    }
    const double pow_x_alpha = std::pow(x, alpha);
    const double gamma_pdf = std::pow(x, alpha - 1) * std::exp(-x);
    const double gamma_cdf = pow_x_alpha * series1;
    const double gamma_cdf_alpha =
        (std::log(x) - boost::math::digamma(alpha)) * gamma_cdf - pow_x_alpha * series2;
    const double result = -gamma_cdf_alpha / gamma_pdf;
    return std::isnan(result) ? 0.0 : result;
  }

  // Use a Rice saddle point expansion for large alpha.
  if (alpha > 8.0f) {
    if (0.9f * alpha <= x && x <= 1.1f * alpha) {
      const double numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
      const double numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha +
                             alpha * (107 + 3600 * x);
      const double denom = 1244160 * (alpha * alpha) * (alpha * alpha);
      return numer_1 * numer_2 / denom;
    }
    const double denom = std::sqrt(8 * alpha);
    const double term2 = denom / (alpha - x);
    const double term3 = std::pow(x - alpha - alpha * std::log(x / alpha), -1.5);
    const double term23 = (x < alpha) ? term2 - term3 : term2 + term3;
    const double term1 = std::log(x / alpha) * term23 -
                         std::sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
    const double numer = x * term1;
    return -stirling * numer / denom;
  }

  // Use a bivariate rational approximation to the reparameterized gradient.
  const double u = std::log(x / alpha);
  const double v = std::log(alpha);
  static const double coef_uv[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089,
       0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
       -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
       0.00085092367, -1.5247877e-07},
  };
  double coef_v[8];
  for (int i = 0; i < 8; ++i) {
    coef_v[i] = coef_uv[0][i] + u * (coef_uv[1][i] + u * coef_uv[2][i]);
  }
  const double p = coef_v[0] + v * (coef_v[1] + v * (coef_v[2] + v * coef_v[3]));
  const double q = coef_v[4] + v * (coef_v[5] + v * (coef_v[6] + v * coef_v[7]));
  return std::exp(p / q);
}

double gamma_grad_shape_accurate(double x, double a) {
  check_args("gamma_grad_shape_accurate", x, a);
  if (x == 0.0) return 0.0;  // limit of -x log(x) / a as x -> 0
  const double log_x = std::log(x);
  if (log_x <= boost::math::digamma(a + 1.0)) return lower_series(x, a, log_x);
  return upper_continued_fraction(x, a, log_x);
}

arma::mat gamma_grad_shape_torch(const arma::mat& x, const arma::mat& a) {
  return elementwise("gamma_grad_shape_torch", x, a,
                     [](double xi, double ai) { return gamma_grad_shape_torch(xi, ai); });
}

arma::mat gamma_grad_shape_accurate(const arma::mat& x, const arma::mat& a) {
  return elementwise("gamma_grad_shape_accurate", x, a,
                     [](double xi, double ai) { return gamma_grad_shape_accurate(xi, ai); });
}

}  // namespace dkp::random
