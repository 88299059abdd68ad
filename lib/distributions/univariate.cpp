#include "distributions/univariate.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_special.hpp"
#include "util/error.hpp"

namespace dkp::distributions {

namespace ad = autodiff;

namespace {
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2
}

Var normal_log_prob(const Var& x, const Var& mu, const Var& sigma) {
  Var z = ad::div(ad::sub(x, mu), sigma);
  Var lp = ad::add(ad::scale(ad::square(z), -0.5), ad::neg(ad::log(sigma)));
  return ad::add_scalar(lp, -kHalfLog2Pi);
}

Var masked_normal_log_prob_sum(const Var& x, const Var& mu, const Var& sigma,
                               const arma::mat& mask) {
  const arma::uword r = x.n_rows(), c = x.n_cols();
  auto fits = [&](const Var& v) {
    return v.val().n_elem == 1 || (v.n_rows() == r && v.n_cols() == c);
  };
  if (!fits(mu) || !fits(sigma) || mask.n_rows != r || mask.n_cols != c) {
    throw Error(fmt::format(
        "distributions::masked_normal_log_prob_sum: x {}x{}, mu {}x{}, sigma "
        "{}x{}, mask {}x{}",
        r, c, mu.n_rows(), mu.n_cols(), sigma.n_rows(), sigma.n_cols(), mask.n_rows, mask.n_cols));
  }
  auto full = [&](const Var& v) {
    return v.val().n_elem == 1 ? arma::mat(r, c, arma::fill::value(v.val()[0])) : v.val();
  };
  const arma::mat m = full(mu), s = full(sigma);
  const arma::mat z = (x.val() - m) / s;
  const double v =
      arma::accu(mask % (-0.5 * arma::square(z) - arma::log(s))) - kHalfLog2Pi * arma::accu(mask);
  return x.tape().record(
      arma::mat(1, 1, arma::fill::value(v)), {x, mu, sigma},
      [x, mu, sigma, mask, z, s](ad::Node* out) {
        return [x, mu, sigma, mask, z, s, out] {
          const double g = out->adj[0];
          auto reduce = [](const Var& v, const arma::mat& full_grad) {
            return v.val().n_elem == 1 ? arma::mat(1, 1, arma::fill::value(arma::accu(full_grad)))
                                       : full_grad;
          };
          const arma::mat gx = (-g) * (mask % z / s);
          if (x.needs_grad()) ad::accumulate(x, gx);
          if (mu.needs_grad()) ad::accumulate(mu, reduce(mu, -gx));
          if (sigma.needs_grad()) {
            ad::accumulate(sigma, reduce(sigma, g * (mask % (arma::square(z) - 1.0) / s)));
          }
        };
      });
}

Var gamma_log_prob(const Var& x, const Var& alpha, const Var& beta) {
  Var a_log_b = ad::sub(ad::mul(alpha, ad::log(beta)), ad::lgamma(alpha));
  Var kernel = ad::sub(ad::mul(ad::add_scalar(alpha, -1.0), ad::log(x)), ad::mul(beta, x));
  return ad::add(a_log_b, kernel);
}

Var inverse_gamma_log_prob(const Var& x, const Var& alpha, const Var& beta) {
  Var a_log_b = ad::sub(ad::mul(alpha, ad::log(beta)), ad::lgamma(alpha));
  Var kernel = ad::add(ad::mul(ad::add_scalar(alpha, 1.0), ad::log(x)), ad::div(beta, x));
  return ad::sub(a_log_b, kernel);
}

}  // namespace dkp::distributions
