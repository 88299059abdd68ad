#include "autodiff/ops_special.hpp"

#include <cmath>

#include <fmt/format.h>
#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

#include "util/error.hpp"

namespace dkp::autodiff {

namespace {

namespace bmp = boost::math::policies;
using QuietPolicy =
    bmp::policy<bmp::domain_error<bmp::ignore_error>, bmp::pole_error<bmp::ignore_error>,
                bmp::overflow_error<bmp::ignore_error>, bmp::evaluation_error<bmp::ignore_error>,
                bmp::promote_double<false>>;

// Elementwise unary op: value f(x), adjoint g % df(x, f(x)).
template <class F, class DF>
Var unary(const Var& a, F f, DF df) {
  arma::mat v = a.val();
  v.transform(f);
  return a.tape().record(std::move(v), {a}, [a, df](Node* out) {
    return [a, df, out] {
      arma::mat& g = a.node()->adj_ref();
      const arma::mat& x = a.val();
      const arma::mat& y = out->val;
      const arma::mat& ga = out->adj;
      for (arma::uword i = 0; i < x.n_elem; ++i) g[i] += ga[i] * df(x[i], y[i]);
    };
  });
}

}  // namespace

double softplus(double x) {
  return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

double sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

double lgamma(double x) {
  return boost::math::lgamma(x, QuietPolicy());
}

double digamma(double x) {
  return boost::math::digamma(x, QuietPolicy());
}

double trigamma(double x) {
  return boost::math::trigamma(x, QuietPolicy());
}

Var log1p(const Var& a) {
  return unary(
      a, [](double x) { return std::log1p(x); }, [](double x, double) { return 1.0 / (1.0 + x); });
}

Var pow(const Var& a, double p) {
  return unary(
      a, [p](double x) { return std::pow(x, p); },
      [p](double x, double) { return p == 0.0 ? 0.0 : p * std::pow(x, p - 1.0); });
}

Var softplus(const Var& a) {
  return unary(
      a, [](double x) { return softplus(x); }, [](double x, double) { return sigmoid(x); });
}

Var sigmoid(const Var& a) {
  return unary(
      a, [](double x) { return sigmoid(x); }, [](double, double s) { return s * (1.0 - s); });
}

Var lgamma(const Var& a) {
  return unary(
      a, [](double x) { return lgamma(x); }, [](double x, double) { return digamma(x); });
}

Var digamma(const Var& a) {
  return unary(
      a, [](double x) { return digamma(x); }, [](double x, double) { return trigamma(x); });
}

Var acos(const Var& a) {
  return unary(
      a, [](double x) { return std::acos(x); },
      [](double x, double) { return -1.0 / std::sqrt((1.0 - x) * (1.0 + x)); });
}

Var sin(const Var& a) {
  return unary(
      a, [](double x) { return std::sin(x); }, [](double x, double) { return std::cos(x); });
}

Var mvlgamma(const Var& a, int p) {
  if (p < 1) throw Error(fmt::format("autodiff::mvlgamma: dimension p = {} must be >= 1", p));
  const double c = 0.25 * p * (p - 1) * std::log(M_PI);
  return unary(
      a,
      [p, c](double x) {
        double s = c;
        for (int i = 0; i < p; ++i) s += lgamma(x - 0.5 * i);
        return s;
      },
      [p](double x, double) {
        double s = 0.0;
        for (int i = 0; i < p; ++i) s += digamma(x - 0.5 * i);
        return s;
      });
}

Var logsumexp(const Var& a) {
  if (a.val().n_elem == 0) throw Error("autodiff::logsumexp: empty matrix");
  double m = a.val().max();
  if (!std::isfinite(m)) m = 0.0;  // all -inf (or +inf/NaN present): plain formula
  const double v = m + std::log(arma::accu(arma::exp(a.val() - m)));
  return a.tape().record(arma::mat(1, 1, arma::fill::value(v)), {a}, [a](Node* out) {
    return [a, out] {
      const double y = out->val[0];
      if (std::isinf(y) && y < 0) return;  // all -inf: no weight anywhere
      a.node()->adj_ref() += out->adj[0] * arma::exp(a.val() - y);
    };
  });
}

Var logsumexp(const Var& a, int dim) {
  if (dim != 0 && dim != 1) {
    throw Error(fmt::format("autodiff::logsumexp: dim must be 0 or 1, not {}", dim));
  }
  const arma::mat& x = a.val();
  arma::mat v;
  if (dim == 0) {
    v.set_size(1, x.n_cols);
    for (arma::uword j = 0; j < x.n_cols; ++j) {
      double m = x.n_rows ? x.col(j).max() : -arma::datum::inf;
      if (!std::isfinite(m)) m = 0.0;
      v[j] = m + std::log(arma::accu(arma::exp(x.col(j) - m)));
    }
  } else {
    arma::colvec m = x.n_cols ? arma::colvec(arma::max(x, 1)) : arma::colvec(x.n_rows);
    m.elem(arma::find_nonfinite(m)).zeros();
    arma::mat e = x;
    e.each_col() -= m;
    v = m + arma::log(arma::sum(arma::exp(e), 1));
  }
  return a.tape().record(std::move(v), {a}, [a, dim](Node* out) {
    return [a, dim, out] {
      // dL/dx_ij = g_j exp(x_ij - y_j) (dim 0) or g_i exp(x_ij - y_i) (dim 1). A slice with
      // y = -inf (all entries -inf) gets weight exp(-inf - inf) = 0; NaN still propagates.
      arma::mat y = out->val;
      y.elem(arma::find(y == -arma::datum::inf)).fill(arma::datum::inf);
      arma::mat w = a.val();
      if (dim == 0) {
        w.each_row() -= arma::rowvec(y);
        w = arma::exp(w);
        w.each_row() %= arma::rowvec(out->adj);
      } else {
        w.each_col() -= arma::vec(y);
        w = arma::exp(w);
        w.each_col() %= arma::vec(out->adj);
      }
      a.node()->adj_ref() += w;
    };
  });
}

}  // namespace dkp::autodiff
