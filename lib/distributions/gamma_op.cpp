#include "distributions/gamma_op.hpp"

#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "random/gamma_grad.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

double draw_standard_gamma(random::Stream& s, double a, GammaMethod method) {
  if (method == GammaMethod::Rejection) return random::standard_gamma(s, a);
  if (!(a > 0.0) || !std::isfinite(a)) {
    throw Error(fmt::format("distributions::gamma_sample: shape must be positive, got {}", a));
  }
  // u in (0, 1): uniform() is a multiple of 2^-53 in [0, 1); shift by half a step.
  const double u = random::uniform(s) + 0x1p-54;
  const double x = boost::math::gamma_p_inv(a, u);
  return std::max(x, std::numeric_limits<double>::min());
}

Var gamma_sample(const Var& shape, const Var& rate, random::Stream& s, GammaMethod method) {
  const arma::mat& a = shape.val();
  const arma::mat& b = rate.val();
  const bool scalar_rate = b.n_elem == 1;
  if (!scalar_rate && (b.n_rows != a.n_rows || b.n_cols != a.n_cols)) {
    throw Error(fmt::format("distributions::gamma_sample: shape is {}x{} but rate is {}x{}",
                            a.n_rows, a.n_cols, b.n_rows, b.n_cols));
  }
  for (arma::uword i = 0; i < b.n_elem; ++i) {
    if (!(b[i] > 0.0) || !std::isfinite(b[i])) {
      throw Error(fmt::format("distributions::gamma_sample: rate must be positive, got {}", b[i]));
    }
  }
  arma::mat xhat(a.n_rows, a.n_cols);
  for (arma::uword i = 0; i < a.n_elem; ++i) xhat[i] = draw_standard_gamma(s, a[i], method);
  arma::mat x = scalar_rate ? arma::mat(xhat / b[0]) : arma::mat(xhat / b);
  return shape.tape().record(std::move(x), {shape, rate}, [shape, rate, xhat](autodiff::Node* out) {
    return [shape, rate, xhat, out] {
      const arma::mat& g = out->adj;
      const arma::mat& b = rate.val();
      const bool scalar_rate = b.n_elem == 1;
      if (shape.needs_grad()) {
        arma::mat dxda = random::gamma_grad_shape_accurate(xhat, shape.val());
        dxda = scalar_rate ? arma::mat(dxda / b[0]) : arma::mat(dxda / b);
        autodiff::accumulate(shape, g % dxda);
      }
      if (rate.needs_grad()) {
        // d x / d b = -x / b = -xhat / b^2
        const arma::mat gb = scalar_rate ? arma::mat(-g % xhat / (b[0] * b[0]))
                                         : arma::mat(-g % xhat / arma::square(b));
        autodiff::accumulate(rate,
                             scalar_rate ? arma::mat(1, 1, arma::fill::value(arma::accu(gb))) : gb);
      }
    };
  });
}

Var standard_gamma_sample(const Var& shape, random::Stream& s, GammaMethod method) {
  return gamma_sample(shape, shape.tape().constant(1.0), s, method);
}

Var inverse_gamma_sample(const Var& shape, const Var& scale, random::Stream& s,
                         GammaMethod method) {
  Var x = gamma_sample(shape, scale, s, method);
  Var one = shape.tape().constant(arma::ones(x.n_rows(), x.n_cols()));
  return autodiff::div(one, x);
}

}  // namespace dkp::distributions
