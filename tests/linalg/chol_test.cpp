// Checked Cholesky (linalg/chol.hpp): jitter schedule and counting, typed errors, and the
// quantities computed from a factor.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <sstream>

#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "linalg/chol.hpp"
#include "test_support.hpp"

namespace la = dkp::linalg;

using dkp::test::QuietLog;

namespace {

// Captures what the default logger writes during one test.
struct LogCapture {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> old = spdlog::default_logger();
  LogCapture() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(old); }
};

arma::mat random_spd(arma::uword n, double ridge = 1.0) {
  arma::mat B = arma::randn(n, n);
  return B * B.t() + ridge * arma::eye(n, n);
}

// Rank-deficient PSD matrix: B B^T with B n x r, r < n (exactly singular in exact arithmetic).
arma::mat singular_psd(arma::uword n, arma::uword r) {
  arma::mat B = arma::randn(n, r);
  arma::mat A = B * B.t();
  return arma::symmatl(A);
}

}  // namespace

TEST_CASE("chol of an SPD matrix: L L^T = A, lower, no jitter counted") {
  const arma::mat A = random_spd(20);
  la::CholStats stats;
  const arma::mat L = la::chol(A, "test spd", {}, &stats);
  CHECK(L.is_trimatl());
  CHECK(arma::approx_equal(L * L.t(), A, "reldiff", 1e-12));
  CHECK(stats.factorisations == 1);
  CHECK(stats.jittered == 0);
  CHECK(stats.retries == 0);
  CHECK(stats.failures == 0);
  const auto r = la::chol_jittered(A, "test spd");
  CHECK(r.jitter == 0.0);
  CHECK(r.retries == 0);
}

TEST_CASE("chol of a singular PSD matrix succeeds after counted, logged jitter retries") {
  LogCapture log;
  const arma::mat A = singular_psd(30, 10);
  la::CholStats stats;
  const auto r = la::chol_jittered(A, "test singular", {}, &stats);
  CHECK(r.retries >= 1);
  CHECK(r.jitter > 0.0);
  const double scale = arma::mean(A.diag());
  CHECK(r.jitter == doctest::Approx(r.jitter_rel * scale));
  CHECK(arma::approx_equal(r.L * r.L.t(), A + r.jitter * arma::eye(30, 30), "absdiff",
                           1e-10 * scale));
  CHECK(stats.factorisations == 1);
  CHECK(stats.jittered == 1);
  CHECK(stats.retries == size_t(r.retries));
  CHECK(stats.max_jitter_rel == r.jitter_rel);
  // One warning per retry, naming the caller.
  const std::string text = log.out.str();
  CHECK(text.find("chol 'test singular': 30x30 matrix not positive definite") != std::string::npos);
  CHECK(text.find(fmt::format("retry {}/5", r.retries)) != std::string::npos);

  // The caller aggregates stats across calls.
  la::CholStats total;
  total.merge(stats);
  total.merge(stats);
  CHECK(total.jittered == 2);
  CHECK(total.retries == 2 * stats.retries);
}

TEST_CASE("chol of an indefinite matrix throws NotPsdError after the whole schedule") {
  QuietLog quiet;
  arma::mat A = random_spd(8);
  A(3, 3) = -2.0;  // negative diagonal: no relative jitter up to 1e-4 can fix it
  la::JitterPolicy policy;
  policy.initial = 1e-6;
  policy.growth = 10.0;
  policy.max_retries = 3;
  la::CholStats stats;
  try {
    la::chol(A, "layer 1 K_uu", policy, &stats);
    FAIL("expected NotPsdError");
  } catch (const la::NotPsdError& e) {
    CHECK(e.where() == "layer 1 K_uu");
    CHECK(e.size() == 8);
    CHECK(e.min_diag() == -2.0);
    CHECK_FALSE(e.has_nan());
    CHECK_FALSE(e.has_inf());
    const double scale = arma::mean(A.diag());
    REQUIRE(e.jitter_tried().size() == 3);
    CHECK(e.jitter_tried()[0] == doctest::Approx(1e-6 * scale));
    CHECK(e.jitter_tried()[1] == doctest::Approx(1e-5 * scale));
    CHECK(e.jitter_tried()[2] == doctest::Approx(1e-4 * scale));
    const std::string msg = e.what();
    CHECK(msg.find("layer 1 K_uu") != std::string::npos);
    CHECK(msg.find("8x8") != std::string::npos);
    CHECK(msg.find("not positive definite") != std::string::npos);
    CHECK(msg.find("standardise the inputs and outputs") != std::string::npos);
    CHECK(msg.find("lower the learning rate") != std::string::npos);
    CHECK(msg.ends_with("check the data for NaNs and constant columns."));
  }
  CHECK(stats.failures == 1);
  CHECK(stats.retries == 3);
  CHECK(stats.factorisations == 0);
  // NotPsdError is a dkp::Error.
  CHECK_THROWS_AS(la::chol(A, "again", policy), dkp::Error);
}

TEST_CASE("chol with jitter disabled fails on the first attempt") {
  const arma::mat A = singular_psd(12, 3);
  la::JitterPolicy none;
  none.max_retries = 0;
  la::CholStats stats;
  try {
    la::chol(A, "no jitter", none, &stats);
    FAIL("expected NotPsdError");
  } catch (const la::NotPsdError& e) {
    CHECK(e.jitter_tried().empty());
    CHECK(std::string(e.what()).find("jitter disabled") != std::string::npos);
  }
  CHECK(stats.retries == 0);
  CHECK(stats.failures == 1);
}

TEST_CASE("chol of a matrix with NaN or Inf throws at once, without jitter") {
  arma::mat A = random_spd(6);
  A(2, 4) = A(4, 2) = std::numeric_limits<double>::quiet_NaN();
  la::CholStats stats;
  try {
    la::chol(A, "nan input", {}, &stats);
    FAIL("expected NotPsdError");
  } catch (const la::NotPsdError& e) {
    CHECK(e.has_nan());
    CHECK_FALSE(e.has_inf());
    CHECK(e.jitter_tried().empty());
    CHECK(e.size() == 6);
    CHECK(std::string(e.what()).find("contains NaN") != std::string::npos);
  }
  CHECK(stats.retries == 0);
  CHECK(stats.failures == 1);

  arma::mat B = random_spd(4);
  B(1, 1) = std::numeric_limits<double>::infinity();
  try {
    la::chol(B, "inf input");
    FAIL("expected NotPsdError");
  } catch (const la::NotPsdError& e) {
    CHECK(e.has_inf());
    CHECK_FALSE(e.has_nan());
  }
}

TEST_CASE("chol rejects non-square and asymmetric input with a plain dkp::Error") {
  CHECK_THROWS_AS(la::chol(arma::ones(3, 4), "rect"), dkp::Error);
  arma::mat A = random_spd(5);
  A(0, 4) += 1e-3;
  CHECK_THROWS_WITH_AS(la::chol(A, "asym"), doctest::Contains("not symmetric"), dkp::Error);
  // Round-off asymmetry (as from a product L^T K L) is accepted.
  arma::mat K = random_spd(40), M = arma::randn(40, 40);
  arma::mat P = M.t() * K * M + arma::eye(40, 40);
  CHECK(la::chol(P, "roundoff").n_rows == 40);
}

TEST_CASE("chol of 1x1 and 0x0 matrices") {
  QuietLog quiet;
  CHECK(la::chol(arma::mat(1, 1, arma::fill::value(4.0)), "1x1")(0, 0) == 2.0);
  CHECK(la::chol(arma::mat(), "empty").n_elem == 0);
  CHECK_THROWS_AS(la::chol(arma::mat(1, 1, arma::fill::value(-1.0)), "1x1 negative"),
                  la::NotPsdError);
}

TEST_CASE("logdet, solve and inverse from a factor") {
  const arma::mat A = random_spd(15);
  const arma::mat L = la::chol(A, "test");
  double ld = 0.0, sign = 0.0;
  arma::log_det(ld, sign, A);
  CHECK(la::logdet_chol(L) == doctest::Approx(ld).epsilon(1e-12));
  const arma::mat B = arma::randn(15, 7);
  CHECK(arma::approx_equal(la::chol_solve(L, B), arma::solve(A, B), "reldiff", 1e-9));
  const arma::mat Ainv = la::chol_inverse(L);
  CHECK(Ainv.is_symmetric());
  CHECK(arma::approx_equal(Ainv * A, arma::eye(15, 15), "absdiff", 1e-9));
  CHECK_THROWS_AS(la::logdet_chol(arma::ones(2, 3)), dkp::Error);
  CHECK_THROWS_AS(la::chol_inverse(arma::ones(2, 3)), dkp::Error);
}

TEST_CASE("chol_adjoint: both algorithms equal sym(L^{-T} Phi(L^T Lbar) L^{-1}) formed densely") {
  // Sizes around the congruence adjoint's 256-column blocks, and tiny ones.
  for (arma::uword n : {1u, 3u, 17u, 255u, 256u, 257u, 520u}) {
    CAPTURE(n);
    arma::mat B = arma::randn(n, n);
    const arma::mat A = B * B.t() / double(n) + arma::eye(n, n);
    const arma::mat L = la::chol(A, "test");
    const arma::mat Lbar = arma::randn(n, n);  // its upper triangle must not be read
    // Reference: Phi = lower triangle with the halved diagonal; dense inverse of L.
    arma::mat Phi = arma::trimatl(L.t() * arma::trimatl(Lbar));
    Phi.diag() *= 0.5;
    const arma::mat Linv = arma::inv(arma::trimatl(L));
    const arma::mat S = Linv.t() * Phi * Linv;
    const arma::mat ref = 0.5 * (S + S.t());
    const double scale = arma::abs(ref).max();
    for (const auto how : {la::CholAdjoint::Solves, la::CholAdjoint::Congruence}) {
      CAPTURE(int(how));
      const arma::mat got = la::chol_adjoint(L, Lbar, how);
      CHECK(arma::abs(got - ref).max() <= 1e-11 * scale);
      CHECK(got.is_symmetric(0.0));
      CHECK(arma::approx_equal(got, la::chol_adjoint(L, arma::trimatl(Lbar), how), "absdiff", 0.0));
    }
  }
  CHECK(la::chol_adjoint(arma::mat(), arma::mat(), la::CholAdjoint::Congruence).n_elem == 0);
  CHECK_THROWS_AS(la::chol_adjoint(arma::eye(3, 3), arma::eye(2, 2), la::CholAdjoint::Congruence),
                  dkp::Error);
}
