// Gradient tests of the shape ops (ops_shape.hpp). Each test fails if the op's adjoint is
// perturbed.
#include <doctest/doctest.h>

#include "ad_test_support.hpp"
#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/ops_shape.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
using ad::Tape;
using ad::Var;
using Inputs = std::vector<Var>;

using dkp::test::contract;
using dkp::test::randm;

namespace {

// Gradient against finite differences, and value against the plain Armadillo computation.
void expect_op(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs,
               const arma::mat& expected) {
  const auto g = ad::check_gradient(f, xs);
  INFO(g.detail);
  CHECK(g.ok);
  const auto v = ad::check_value(f, xs, contract(expected));
  INFO(v.detail);
  CHECK(v.ok);
}

void expect_throws(const ad::ScalarFunction& f, const std::vector<arma::mat>& xs) {
  const auto r = ad::check_throws(f, xs);
  INFO(r.message);
  CHECK(r.ok());
}

}  // namespace

TEST_CASE("submat, rows, cols and select_rows") {
  const arma::mat A = randm(5, 4);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::submat(v[0], 1, 0, 3, 2)); }, {A},
            A.submat(1, 0, 3, 2));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::rows(v[0], 2, 4)); }, {A},
            A.rows(2, 4));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::cols(v[0], 1, 1)); }, {A}, A.col(1));
  const arma::uvec idx{4, 0, 4, 2, 2, 2};  // repeated rows accumulate
  expect_op([idx](Tape&, const Inputs& v) { return contract(ad::select_rows(v[0], idx)); }, {A},
            A.rows(idx));
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::submat(v[0], 0, 0, 5, 1)); }, {A});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::rows(v[0], 3, 2)); }, {A});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::cols(v[0], 0, 4)); }, {A});
  expect_throws(
      [](Tape&, const Inputs& v) { return ad::sum(ad::select_rows(v[0], arma::uvec{5})); }, {A});
}

TEST_CASE("join_horiz, join_vert (binary and n-ary) and block2x2") {
  const arma::mat A = randm(3, 2), B = randm(3, 4), C = randm(2, 2), D = randm(2, 4);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::join_horiz(v[0], v[1])); }, {A, B},
            arma::join_horiz(A, B));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::join_vert(v[0], v[1])); }, {A, C},
            arma::join_vert(A, C));
  expect_op(
      [](Tape&, const Inputs& v) {
        return contract(ad::join_horiz(Inputs{v[0], v[1], v[0]}));
      },
      {A, B}, arma::join_horiz(A, B, A));
  expect_op(
      [](Tape& t, const Inputs& v) {
        // a constant in the middle gets no gradient, the variables around it do
        return contract(ad::join_vert(Inputs{v[0], t.constant(arma::ones(1, 2)), v[1]}));
      },
      {A, C}, arma::join_vert(A, arma::ones(1, 2), C));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::block2x2(v[0], v[1], v[2], v[3])); },
            {A, B, C, D}, arma::join_vert(arma::join_horiz(A, B), arma::join_horiz(C, D)));
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::join_horiz(v[0], v[1])); },
                {A, C.t()});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::join_vert(v[0], v[1])); }, {A, B});
  expect_throws(
      [](Tape&, const Inputs& v) { return ad::sum(ad::block2x2(v[0], v[1], v[1], v[0])); }, {A, B});
}

TEST_CASE("diag, diagmat, tril and triu") {
  const arma::mat S = randm(4, 4), R = randm(3, 5), c = randm(4, 1), r = randm(1, 3);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::diag(v[0])); }, {S},
            arma::mat(S.diag()));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::diag(v[0])); }, {R},
            arma::mat(R.diag()));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::diagmat(v[0])); }, {c},
            arma::diagmat(c));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::diagmat(v[0])); }, {r},
            arma::diagmat(arma::vectorise(r)));
  for (int k : {-5, -4, -3, -1, 0, 1, 3, 4}) {
    CAPTURE(k);
    arma::mat lower = S, upper = S;
    for (arma::uword j = 0; j < 4; ++j)
      for (arma::uword i = 0; i < 4; ++i) {
        if (int(j) - int(i) > k) lower(i, j) = 0.0;
        if (int(j) - int(i) < k) upper(i, j) = 0.0;
      }
    expect_op([k](Tape&, const Inputs& v) { return contract(ad::tril(v[0], k)); }, {S}, lower);
    expect_op([k](Tape&, const Inputs& v) { return contract(ad::triu(v[0], k)); }, {S}, upper);
  }
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::diagmat(v[0])); }, {S});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::tril(v[0])); }, {R});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::triu(v[0])); }, {R});
}

TEST_CASE("row and column broadcasting, repmat") {
  const arma::mat A = randm(3, 4), row = randm(1, 4), col = randm(3, 1);
  const arma::mat rowpos = randm(1, 4, 0.5, 2.0), colpos = randm(3, 1, 0.5, 2.0);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::add_each_row(v[0], v[1])); }, {A, row},
            A.each_row() + row);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::mul_each_row(v[0], v[1])); }, {A, row},
            A.each_row() % row);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::div_each_row(v[0], v[1])); },
            {A, rowpos}, A.each_row() / rowpos);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::add_each_col(v[0], v[1])); }, {A, col},
            A.each_col() + col);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::mul_each_col(v[0], v[1])); }, {A, col},
            A.each_col() % col);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::div_each_col(v[0], v[1])); },
            {A, colpos}, A.each_col() / colpos);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::repmat(v[0], 2, 3)); }, {A},
            arma::repmat(A, 2, 3));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::repmat(v[0], 1, 5)); }, {col},
            arma::repmat(col, 1, 5));
  const arma::mat noise = randm(3, 4);
  expect_op([&noise](Tape&,
                     const Inputs& v) { return contract(ad::add_scaled_noise(v[0], noise, v[1])); },
            {A, col}, A + noise.each_col() % col);
  expect_throws(
      [&noise](Tape&, const Inputs& v) { return ad::sum(ad::add_scaled_noise(v[0], noise, v[1])); },
      {A, row});
  expect_throws(
      [](Tape&, const Inputs& v) {
        return ad::sum(ad::add_scaled_noise(v[0], arma::mat(3, 3, arma::fill::ones), v[1]));
      },
      {A, col});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::add_each_row(v[0], v[1])); },
                {A, col});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::mul_each_col(v[0], v[1])); },
                {A, row});
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::div_each_row(v[0], v[1])); },
                {A, randm(1, 3)});
}

TEST_CASE("col_sumsq: value and gradient, also when the input's adjoint already holds a value") {
  const arma::mat A = randm(5, 3);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::col_sumsq(v[0])); }, {A},
            arma::mat(arma::sum(arma::square(A), 0).t()));
  // A used twice: the second backward pass adds to an existing adjoint.
  expect_op(
      [](Tape&, const Inputs& v) {
        return contract(ad::col_sumsq(v[0]) + ad::row_sums(ad::transpose(v[0])));
      },
      {A}, arma::mat(arma::sum(arma::square(A), 0).t() + arma::sum(A, 0).t()));
}

TEST_CASE("row_sums, col_sums, reshape and vectorise") {
  const arma::mat A = randm(3, 4);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::row_sums(v[0])); }, {A},
            arma::sum(A, 1));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::col_sums(v[0])); }, {A},
            arma::sum(A, 0));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::reshape(v[0], 2, 6)); }, {A},
            arma::reshape(A, 2, 6));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::vectorise(v[0])); }, {A},
            arma::vectorise(A));
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::reshape(v[0], 5, 2)); }, {A});
}

TEST_CASE("relu and clamp (inputs kept away from the kinks)") {
  arma::mat A = randm(4, 5, -2.0, 2.0);
  A.elem(arma::find(arma::abs(A) < 0.05)).fill(0.3);
  A.elem(arma::find(arma::abs(A - 1.0) < 0.05)).fill(0.7);
  expect_op([](Tape&, const Inputs& v) { return contract(ad::relu(v[0])); }, {A},
            arma::clamp(A, 0.0, arma::datum::inf));
  expect_op([](Tape&, const Inputs& v) { return contract(ad::clamp(v[0], 0.0, 1.0)); }, {A},
            arma::clamp(A, 0.0, 1.0));
  // At the kinks: relu passes no gradient at 0, clamp passes it at the bounds.
  Tape tape;
  Var x = tape.variable(arma::mat{{0.0, -1.0, 2.0, 1.0}});
  tape.backward(ad::sum(ad::relu(x) + ad::clamp(x, -1.0, 1.0)));
  CHECK(arma::approx_equal(x.grad(), arma::mat{{1.0, 1.0, 1.0, 2.0}}, "absdiff", 0.0));
  expect_throws([](Tape&, const Inputs& v) { return ad::sum(ad::clamp(v[0], 1.0, 0.0)); }, {A});
}
