// Kernels on Gram matrices (kernels/gram.hpp): values against direct computations on features
// (SE on the Gram of X = SE on X; the arc-cosine kernel against its closed form from the vectors'
// angle and against a Monte Carlo estimate of 2 E[relu(w.x) relu(w.y)]), and reverse-mode
// gradients of every op and of whole feature -> Gram -> kernel pipelines against finite
// differences.
#include <doctest/doctest.h>

#include <cmath>

#include "autodiff/gradcheck.hpp"
#include "autodiff/ops.hpp"
#include "kernels/gram.hpp"
#include "kernels/se.hpp"
#include "random/stream.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ad = dkp::autodiff;
namespace kn = dkp::kernels;
using ad::Tape;
using ad::Var;

namespace {

Var contract(const Var& y, uint64_t salt) {
  return ad::random_contraction(y, dkp::test::seed() + salt);
}

Var contract_blocks(const kn::GramBlocks& k, uint64_t salt) {
  return contract(k.ii, salt) + contract(k.it, salt + 1) + contract(k.tt, salt + 2);
}

// Closed form of the scaled order-1 arc-cosine kernel from two vectors (Cho & Saul 2009, eq. 6,
// times 2): |x||y| (sin t + (pi - t) cos t) / pi, with the angle t given.
double arccos_closed(double nx, double ny, double t) {
  return nx * ny * (std::sin(t) + (M_PI - t) * std::cos(t)) / M_PI;
}

}  // namespace

TEST_CASE("SE on the Gram of X equals the isotropic SE kernel on X") {
  dkp::random::Stream s(dkp::test::seed());
  const arma::mat Z = dkp::random::normal_matrix(s, 4, 3), X = dkp::random::normal_matrix(s, 5, 3);
  const double log_ell = 0.3, log_var = -0.4, nu = 3.0;
  Tape tape;
  const kn::GramBlocks G = kn::features_to_gram(tape.constant(Z), tape.constant(X), nu);
  CHECK(arma::approx_equal(G.ii.val(), Z * Z.t() / nu, "absdiff", 1e-13));
  CHECK(arma::approx_equal(G.it.val(), Z * X.t() / nu, "absdiff", 1e-13));
  CHECK(arma::approx_equal(G.tt.val(), arma::mat(arma::sum(X % X, 1) / nu), "absdiff", 1e-13));
  const kn::GramBlocks K =
      kn::se_gram(G, tape.constant(log_ell), tape.constant(log_var), /*jitter=*/0.0);
  // Distances on G = F F^T / nu are those of F / sqrt(nu): lengthscale l sqrt(nu) on features.
  const Var iso = tape.constant(log_ell + 0.5 * std::log(nu));
  const Var lv = tape.constant(log_var);
  const arma::mat Kii = kn::se_ard_sym(tape.constant(Z), iso, lv).val();
  const arma::mat Kit = kn::se_ard(tape.constant(Z), tape.constant(X), iso, lv).val();
  CHECK(arma::approx_equal(K.ii.val(), Kii, "absdiff", 1e-12));
  CHECK(arma::approx_equal(K.it.val(), Kit, "absdiff", 1e-12));
  CHECK(arma::approx_equal(K.tt.val(), arma::mat(5, 1, arma::fill::value(std::exp(log_var))),
                           "absdiff", 1e-14));
  // Jitter: h eps on the diagonal of ii and on tt, nothing off the diagonal.
  const kn::GramBlocks Kj = kn::se_gram(G, tape.constant(log_ell), tape.constant(log_var), 1e-3);
  CHECK(arma::approx_equal(Kj.ii.val() - K.ii.val(), std::exp(log_var) * 1e-3 * arma::eye(4, 4),
                           "absdiff", 1e-14));
  CHECK(arma::approx_equal(Kj.it.val(), K.it.val(), "absdiff", 0.0));
  CHECK(Kj.tt.val()(0, 0) == doctest::Approx(std::exp(log_var) * (1 + 1e-3)).epsilon(1e-14));
}

TEST_CASE("arc-cosine kernel on G = X X^T equals the closed form from the vectors' angles") {
  // Vectors in the plane at known polar angles: the angle between them is known without any
  // inner product, so this is independent of the Gram-based formula.
  const arma::vec phi_i = {0.1, 1.0, 2.5, -2.0}, r_i = {1.0, 0.5, 2.0, 1.3};
  const arma::vec phi_t = {0.1, 3.0, -0.7}, r_t = {0.7, 1.1, 2.2};  // t0 is parallel to i0
  arma::mat Xi(4, 2), Xt(3, 2);
  for (arma::uword k = 0; k < 4; ++k)
    Xi.row(k) = r_i[k] * arma::rowvec{std::cos(phi_i[k]), std::sin(phi_i[k])};
  for (arma::uword k = 0; k < 3; ++k)
    Xt.row(k) = r_t[k] * arma::rowvec{std::cos(phi_t[k]), std::sin(phi_t[k])};
  auto angle = [](double p, double q) {
    double d = std::fmod(std::abs(p - q), 2 * M_PI);
    return d > M_PI ? 2 * M_PI - d : d;
  };
  Tape tape;
  const kn::GramBlocks G = kn::features_to_gram(tape.constant(Xi), tape.constant(Xt), 1.0);
  const kn::GramBlocks K = kn::relu_gram(G, 0.0);
  for (arma::uword a = 0; a < 4; ++a) {
    for (arma::uword b = 0; b < 4; ++b) {
      CHECK(
          K.ii.val()(a, b) ==
          doctest::Approx(arccos_closed(r_i[a], r_i[b], angle(phi_i[a], phi_i[b]))).epsilon(1e-12));
    }
    for (arma::uword b = 0; b < 3; ++b) {
      CHECK(
          K.it.val()(a, b) ==
          doctest::Approx(arccos_closed(r_i[a], r_t[b], angle(phi_i[a], phi_t[b]))).epsilon(1e-12));
    }
  }
  // The diagonal is kept: K_jj = G_jj = |x_j|^2.
  for (arma::uword b = 0; b < 3; ++b) CHECK(K.tt.val()(b, 0) == doctest::Approx(r_t[b] * r_t[b]));
  for (arma::uword a = 0; a < 4; ++a) CHECK(K.ii.val()(a, a) == doctest::Approx(r_i[a] * r_i[a]));
  // Jitter adds to the diagonal of ii and to tt only.
  const kn::GramBlocks Kj = kn::relu_gram(G, 1e-3);
  CHECK(arma::approx_equal(Kj.ii.val() - K.ii.val(), 1e-3 * arma::eye(4, 4), "absdiff", 1e-14));
  CHECK(arma::approx_equal(Kj.tt.val() - K.tt.val(), arma::mat(3, 1, arma::fill::value(1e-3)),
                           "absdiff", 1e-14));
}

TEST_CASE("arc-cosine kernel equals 2 E[relu(w.x) relu(w.y)] by Monte Carlo (Cho & Saul)") {
  dkp::random::Stream s(dkp::test::seed() + 1);
  const arma::mat X = dkp::random::normal_matrix(s, 3, 4);  // rows x0, x1, x2 in R^4
  Tape tape;
  const kn::GramBlocks G =
      kn::features_to_gram(tape.constant(X.rows(0, 0)), tape.constant(X.rows(1, 2)), 1.0);
  const arma::mat K = kn::relu_gram(G, 0.0).it.val();
  const size_t n = 200000;
  const arma::mat W = dkp::random::normal_matrix(s, n, 4);
  const arma::mat A = arma::clamp(W * X.t(), 0.0, arma::datum::inf);  // n x 3
  for (arma::uword t = 0; t < 2; ++t) {
    const arma::vec prod = 2.0 * A.col(0) % A.col(t + 1);
    const double mc = arma::mean(prod), se = arma::stddev(prod) / std::sqrt(double(n));
    CAPTURE(t);
    CHECK(std::abs(mc - K(0, t)) < 4 * se);
  }
}

TEST_CASE("fused Gram kernel ops: gradients w.r.t. every input match finite differences") {
  dkp::random::Stream s(dkp::test::seed() + 2);
  const arma::mat Fi = dkp::random::normal_matrix(s, 4, 3);
  // Redraw the points until no pair is nearly parallel: there sqrt(ab - C^2) varies on the scale
  // of the finite-difference step and the stencil, not the adjoint, is inaccurate. (Exactly
  // parallel pairs are checked through the whole pipeline below.)
  arma::mat Ft;
  do {
    Ft = dkp::random::normal_matrix(s, 5, 3);
  } while (
      arma::abs(Fi * Ft.t() / arma::sqrt(arma::sum(Fi % Fi, 1) * arma::sum(Ft % Ft, 1).t())).max() >
      0.95);
  const arma::mat C = Fi * Ft.t() / 3.0;
  const arma::mat a = arma::sum(Fi % Fi, 1) / 3.0, b = arma::sum(Ft % Ft, 1) / 3.0;
  const arma::mat log_ell(1, 1, arma::fill::value(0.2));
  const arma::mat h(1, 1, arma::fill::value(1.7));
  SUBCASE("se_scaled_from_gram") {
    auto f = [](Tape&, const std::vector<Var>& v) {
      return contract(kn::se_scaled_from_gram(v[0], v[1], v[2], v[3], v[4]), 11);
    };
    const auto r = ad::check_gradient(f, {h, C, a, b, log_ell});
    INFO(r.detail);
    CHECK(r.ok);
  }
  SUBCASE("se_scaled_sym_from_gram, through a symmetric C = Fi Fi^T / 3") {
    // The op reads only C's lower triangle: its adjoint is the derivative for C_ij and C_ji
    // moving together, so C is built symmetric from the features it is checked against.
    auto f = [](Tape&, const std::vector<Var>& v) {
      const Var Ci = ad::scale(ad::matmul(v[0], v[0], false, true), 1.0 / 3.0);
      return contract(kn::se_scaled_sym_from_gram(v[1], Ci, v[2], 1e-3), 13);
    };
    const auto r = ad::check_gradient(f, {Fi, h, log_ell});
    INFO(r.detail);
    CHECK(r.ok);
  }
  SUBCASE("se_scaled_sym_from_gram equals the general op on (C, diag C, diag C) plus h jitter I") {
    Tape tape;
    const arma::mat Ci = Fi * Fi.t() / 3.0;
    const arma::vec di = Ci.diag();
    const arma::mat K = kn::se_scaled_sym_from_gram(tape.constant(h), tape.constant(Ci),
                                                    tape.constant(log_ell), 1e-3)
                            .val();
    const arma::mat Kg =
        kn::se_scaled_from_gram(tape.constant(h), tape.constant(Ci), tape.constant(di),
                                tape.constant(di), tape.constant(log_ell))
            .val();
    CHECK(arma::approx_equal(K, Kg + 1.7e-3 * arma::eye(4, 4), "reldiff", 1e-13));
    CHECK(K.is_symmetric());
    // And the closed form of one off-diagonal entry.
    const double R10 = Ci(1, 1) + Ci(0, 0) - 2.0 * Ci(1, 0);
    CHECK(K(1, 0) == doctest::Approx(1.7 * std::exp(-R10 * 0.5 * std::exp(-0.4))).epsilon(1e-13));
  }
  SUBCASE("arccos_relu (generic angles, C perturbed on its own)") {
    auto f = [](Tape&, const std::vector<Var>& v) {
      return contract(kn::arccos_relu(v[0], v[1], v[2]), 12);
    };
    const auto r = ad::check_gradient(f, {C, a, b});
    INFO(r.detail);
    CHECK(r.ok);
  }
  SUBCASE("arccos_relu and the SE ops reject bad diagonals, variances and shapes") {
    Tape tape;
    CHECK_THROWS_AS(kn::arccos_relu(tape.constant(C), tape.constant(-a), tape.constant(b)),
                    dkp::Error);
    CHECK_THROWS_AS(kn::arccos_relu(tape.constant(C), tape.constant(b), tape.constant(a)),
                    dkp::Error);
    // b has 5 rows where C has 4: a block/diagonal mismatch.
    CHECK_THROWS_AS(kn::se_scaled_from_gram(tape.constant(1.0), tape.constant(C), tape.constant(a),
                                            tape.constant(a), tape.constant(0.0)),
                    dkp::Error);
    CHECK_THROWS_AS(kn::se_scaled_from_gram(tape.constant(0.0), tape.constant(C), tape.constant(a),
                                            tape.constant(b), tape.constant(0.0)),
                    dkp::Error);
    CHECK_THROWS_AS(kn::se_scaled_from_gram(tape.constant(1.0), tape.constant(C), tape.constant(a),
                                            tape.constant(b), tape.constant(arma::zeros(1, 2))),
                    dkp::Error);
    CHECK_THROWS_AS(
        kn::se_scaled_sym_from_gram(tape.constant(1.0), tape.constant(C), tape.constant(0.0), 0.0),
        dkp::Error);
    CHECK_THROWS_AS(kn::se_scaled_sym_from_gram(tape.constant(-1.0), tape.constant(C * C.t()),
                                                tape.constant(0.0), 0.0),
                    dkp::Error);
  }
}

TEST_CASE(
    "features -> Gram -> kernel pipelines: gradients w.r.t. features, scale, bias, kernel "
    "parameters") {
  dkp::random::Stream s(dkp::test::seed() + 3);
  const arma::mat Xi = dkp::random::normal_matrix(s, 4, 3);
  arma::mat Xt = dkp::random::normal_matrix(s, 5, 3);
  Xt.row(2) = Xi.row(1);  // a train point equal to an inducing point (angle 0, distance 0)
  const arma::mat log_scale = arma::rowvec{0.1, -0.2, 0.3}, bias = arma::rowvec{0.2, 0.0, -0.1};
  const arma::mat log_ell(1, 1, arma::fill::value(-0.1)), log_var(1, 1, arma::fill::value(0.4));
  auto gram = [](const std::vector<Var>& v) {
    return kn::features_to_gram(kn::scale_shift_features(v[0], v[2], v[3]),
                                kn::scale_shift_features(v[1], v[2], v[3]), 3.0);
  };
  SUBCASE("SE") {
    auto f = [&](Tape&, const std::vector<Var>& v) {
      return contract_blocks(kn::se_gram(gram(v), v[4], v[5], 1e-4), 21);
    };
    const auto r = ad::check_gradient(f, {Xi, Xt, log_scale, bias, log_ell, log_var});
    INFO(r.detail);
    CHECK(r.ok);
  }
  SUBCASE("ReLU arc-cosine") {
    auto f = [&](Tape&, const std::vector<Var>& v) {
      return contract_blocks(kn::relu_gram(gram(v), 1e-4), 22);
    };
    const auto r = ad::check_gradient(f, {Xi, Xt, log_scale, bias});
    INFO(r.detail);
    CHECK(r.ok);
  }
  SUBCASE("ReLU composed twice (a two-layer NNGP kernel)") {
    auto f = [&](Tape&, const std::vector<Var>& v) {
      return contract_blocks(kn::relu_gram(kn::relu_gram(gram(v), 0.0), 1e-4), 23);
    };
    const auto r = ad::check_gradient(f, {Xi, Xt, log_scale, bias});
    INFO(r.detail);
    CHECK(r.ok);
  }
}

TEST_CASE("scale_shift_features: x exp(s) + b per column") {
  Tape tape;
  const arma::mat X = {{1.0, 2.0}, {-1.0, 0.5}};
  const Var Y =
      kn::scale_shift_features(tape.constant(X), tape.constant(arma::mat{{0.0, std::log(2.0)}}),
                               tape.constant(arma::mat{{1.0, -1.0}}));
  const arma::mat expect = {{2.0, 3.0}, {0.0, 0.0}};
  CHECK(arma::approx_equal(Y.val(), expect, "absdiff", 1e-14));
  CHECK_THROWS_AS(kn::scale_shift_features(tape.constant(X), tape.constant(arma::mat(1, 3)),
                                           tape.constant(arma::mat(1, 2))),
                  dkp::Error);
}
