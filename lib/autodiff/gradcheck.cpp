#include "autodiff/gradcheck.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>

#include "autodiff/ops.hpp"
#include "util/error.hpp"

namespace dkp::autodiff {

double evaluate(const ScalarFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  std::vector<Var> vars;
  vars.reserve(inputs.size());
  for (const auto& x : inputs) vars.push_back(tape.constant(x));
  return f(tape, vars).scalar();
}

std::vector<arma::mat> gradients(const ScalarFunction& f, const std::vector<arma::mat>& inputs) {
  Tape tape;
  std::vector<Var> vars;
  vars.reserve(inputs.size());
  for (const auto& x : inputs) vars.push_back(tape.variable(x));
  Var y = f(tape, vars);
  tape.backward(y);
  std::vector<arma::mat> g;
  g.reserve(vars.size());
  for (const auto& v : vars) g.push_back(v.grad());
  return g;
}

GradCheckResult check_gradient(const ScalarFunction& f, const std::vector<arma::mat>& inputs,
                               const Tolerances& tol, const std::vector<size_t>& which) {
  GradCheckResult res;
  const auto ad = gradients(f, inputs);
  std::vector<arma::mat> x = inputs;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!which.empty() && std::find(which.begin(), which.end(), k) == which.end()) continue;
    for (arma::uword i = 0; i < x[k].n_elem; ++i) {
      const double x0 = inputs[k][i];
      const double h = tol.step * std::max(1.0, std::abs(x0));
      auto at = [&](double d) {
        x[k][i] = x0 + d;
        const double v = evaluate(f, x);
        x[k][i] = x0;
        return v;
      };
      const double fd = (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
      const double a = ad[k][i];
      const double allowed = tol.abs + tol.rel * std::max(std::abs(a), std::abs(fd));
      const double ratio = std::isfinite(a) && std::isfinite(fd)
                               ? std::abs(a - fd) / allowed
                               : std::numeric_limits<double>::infinity();
      if (!(ratio <= res.worst_ratio)) {
        res.worst_ratio = ratio;
        res.detail = fmt::format(
            "input {} element {} (row {}, col {}): reverse {:.12g}, "
            "finite difference {:.12g}",
            k, i, i % x[k].n_rows, i / x[k].n_rows, a, fd);
      }
    }
  }
  res.ok = res.worst_ratio <= 1.0;
  return res;
}

GradCheckResult check_value(const ScalarFunction& f, const std::vector<arma::mat>& inputs,
                            double expected, const Tolerances& tol) {
  GradCheckResult res;
  const double v = evaluate(f, inputs);
  const double allowed = tol.value * std::max(1.0, std::abs(expected));
  res.worst_ratio =
      std::isfinite(v) ? std::abs(v - expected) / allowed : std::numeric_limits<double>::infinity();
  res.ok = res.worst_ratio <= 1.0;
  res.detail = fmt::format("value {:.17g}, expected {:.17g}", v, expected);
  return res;
}

ThrowCheckResult check_throws(const ScalarFunction& f, const std::vector<arma::mat>& inputs) {
  ThrowCheckResult res;
  try {
    evaluate(f, inputs);
  } catch (const Error& e) {
    res.value_threw = true;
    res.message = e.what();
  }
  try {
    gradients(f, inputs);
  } catch (const Error& e) {
    res.gradient_threw = true;
    if (res.message.empty()) res.message = e.what();
  }
  return res;
}

Var random_contraction(const Var& y, uint64_t seed) {
  boost::random::mt19937_64 eng(seed);
  boost::random::uniform_real_distribution<double> unif(-1.0, 1.0);
  arma::mat w(y.n_rows(), y.n_cols());
  for (auto& x : w) x = unif(eng);
  return sum(mul(y, y.tape().constant(std::move(w))));
}

}  // namespace dkp::autodiff
