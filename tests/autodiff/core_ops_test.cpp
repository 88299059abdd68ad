// Gradient tests of the core ops (tape.hpp, ops.hpp) through the harness. Each test fails if the
// op's adjoint is perturbed.
#include <doctest/doctest.h>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;

namespace {

arma::mat randm(arma::uword r, arma::uword c, double lo = -1.0, double hi = 1.0) {
  return lo + (hi - lo) * arma::randu(r, c);
}

void expect_grad(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs,
                 ad::Tolerances tol = {}) {
  const auto r = ad::check_gradient(f, xs, tol);
  INFO(r.detail);
  CHECK(r.ok);
}

// Contracts a matrix-valued result with fixed random weights so every element of the output
// contributes to the checked scalar with a different weight.
Var contract(const Var& y) {
  arma::arma_rng::set_seed(dkp::test::seed() + y.n_rows() * 31 + y.n_cols());
  arma::mat w = randm(y.n_rows(), y.n_cols());
  return ad::sum(ad::mul(y, y.tape().constant(w)));
}

}  // namespace

TEST_CASE("arithmetic ops: add, sub, neg, scale, add_scalar, mul, div (with 1x1 broadcast)") {
  const arma::mat A = randm(3, 4), B = randm(3, 4), s = randm(1, 1, 0.5, 1.5);
  const arma::mat Bpos = randm(3, 4, 0.5, 2.0);
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(v[0] + v[1]); }, {A, B});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(v[0] - v[1]); }, {A, B});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(-v[0]); }, {A});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(2.5 * v[0] + 1.0); }, {A});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::mul(v[0], v[1])); },
              {A, B});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::div(v[0], v[1])); },
              {A, Bpos});
  // 1x1 broadcast on either side
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::mul(v[1], v[0])); },
              {A, s});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::div(v[0], v[1])); },
              {A, s});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::div(v[1], v[0])); },
              {Bpos, s});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(v[1] - v[0]); }, {A, s});
}

TEST_CASE("matmul in all four transpose combinations, and transpose") {
  const arma::mat A = randm(3, 4), B = randm(4, 2), At = randm(4, 3), Bt = randm(2, 4);
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::matmul(v[0], v[1])); },
              {A, B});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(ad::matmul(v[0], v[1], true)); },
      {At, B});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        return contract(ad::matmul(v[0], v[1], false, true));
      },
      {A, Bt});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(ad::matmul(v[0], v[1], true, true)); },
      {At, Bt});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::transpose(v[0])); }, {A});
}

TEST_CASE("reductions and elementwise functions") {
  const arma::mat A = randm(4, 4), P = randm(3, 5, 0.3, 2.0);
  expect_grad([](Tape&, const std::vector<Var>& v) { return ad::sum(ad::square(v[0])); }, {A});
  expect_grad([](Tape&, const std::vector<Var>& v) { return ad::mean(ad::exp(v[0])); }, {A});
  expect_grad([](Tape&, const std::vector<Var>& v) { return ad::trace(ad::exp(v[0])); }, {A});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::log(v[0])); }, {P});
  expect_grad([](Tape&, const std::vector<Var>& v) { return contract(ad::sqrt(v[0])); }, {P});
}

TEST_CASE("a node used twice accumulates both contributions") {
  const arma::mat A = randm(3, 3);
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        Var y = ad::matmul(v[0], v[0]);
        return contract(ad::mul(y, v[0]) + y);
      },
      {A});
}

TEST_CASE("the harness detects a wrong adjoint") {
  // A deliberately wrong op: value x^2, adjoint claims 3x instead of 2x.
  auto wrong = [](Tape& tape, const std::vector<Var>& v) {
    const Var a = v[0];
    Var y = tape.record(arma::square(a.val()), {a}, [a](ad::Node* out) {
      return [a, out] { ad::accumulate(a, 3.0 * out->adj % a.val()); };
    });
    return ad::sum(y);
  };
  CHECK_FALSE(ad::check_gradient(wrong, {randm(2, 2, 0.5, 1.0)}).ok);
}

TEST_CASE("shape errors and non-scalar backward throw") {
  Tape tape;
  Var a = tape.variable(arma::ones(2, 3)), b = tape.variable(arma::ones(3, 2));
  CHECK_THROWS_AS(ad::add(a, b), dkp::Error);
  CHECK_THROWS_AS(ad::matmul(a, a), dkp::Error);
  CHECK_THROWS_AS(ad::trace(a), dkp::Error);
  CHECK_THROWS_AS(tape.backward(a), dkp::Error);
  CHECK(tape.size() == 2);
  tape.clear();
  CHECK(tape.size() == 0);
}

TEST_CASE("constants get no gradient and record no closure") {
  Tape tape;
  Var c = tape.constant(arma::ones(2, 2));
  Var y = ad::sum(ad::exp(c));
  CHECK_FALSE(y.needs_grad());
  CHECK_FALSE(y.node()->backward);
  Var x = tape.variable(arma::ones(2, 2));
  Var z = ad::sum(ad::mul(x, c));
  tape.backward(z);
  CHECK(arma::approx_equal(x.grad(), arma::ones(2, 2), "absdiff", 1e-15));
  CHECK(arma::accu(arma::abs(c.grad())) == 0.0);
}

namespace {

// (2 x, x^2) as one op with a shared adjoint: 2 xbar1 + 2 x % xbar2.
std::pair<Var, Var> double_and_square(const Var& x) {
  const arma::mat& xv = x.val();
  return x.tape().record_pair(2.0 * xv, xv % xv, {x}, [x](ad::Node* o1, ad::Node* o2) {
    return [x, o1, o2] {
      arma::mat g = 2.0 * o1->adj;
      if (o2->has_adj()) g += 2.0 * x.val() % o2->adj;
      ad::accumulate(x, std::move(g));
    };
  });
}

}  // namespace

TEST_CASE("record_pair: one closure for two results, reached through either or both") {
  const arma::mat X = randm(3, 2);
  // Both results, the first alone and the second alone (the closure then sees no adjoint of the
  // other result, which must count as zero).
  expect_grad(
      [](Tape&, const std::vector<Var>& v) {
        auto [a, b] = double_and_square(v[0]);
        return contract(a) + contract(b);
      },
      {X});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(double_and_square(v[0]).first); },
      {X});
  expect_grad(
      [](Tape&, const std::vector<Var>& v) { return contract(double_and_square(v[0]).second); },
      {X});
  // A constant input records no closure on either node.
  Tape tape;
  auto [a, b] = double_and_square(tape.constant(X));
  CHECK_FALSE(a.needs_grad());
  CHECK_FALSE(b.needs_grad());
  CHECK_FALSE(a.node()->backward);
  CHECK_FALSE(b.node()->backward);
}
