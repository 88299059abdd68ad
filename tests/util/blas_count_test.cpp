// The BLAS/LAPACK operation counter of `dkp bench model --flops`. CTest runs this file twice: in
// the `util` suite without the shim (nothing is counted), and as `util_blas_count` with
// libdkp_blas_count.so preloaded and DKP_EXPECT_BLAS_COUNT=1 (every routine's nominal flops,
// one count per outermost call, all threads).
#include <doctest/doctest.h>

#include <cblas.h>

#include <armadillo>

#include <cmath>
#include <cstdlib>
#include <thread>

#include "util/blas_count.hpp"

namespace {

bool shim_expected() {
  const char* e = std::getenv("DKP_EXPECT_BLAS_COUNT");
  return e != nullptr && std::string(e) == "1";
}

// The calls and flops of `work`, read around it.
template <class F>
dkp::util::BlasCount counted(F&& work) {
  const auto a = dkp::util::blas_count();
  REQUIRE(a);
  work();
  const auto b = dkp::util::blas_count();
  REQUIRE(b);
  return *b - *a;
}

arma::mat filled(arma::uword r, arma::uword c, double shift) {
  arma::mat A(r, c);
  for (arma::uword i = 0; i < A.n_elem; ++i) A[i] = double((i * 7) % 23) * 0.1 - shift;
  return A;
}

}  // namespace

TEST_CASE("blas count shim: counts each routine's nominal flops when preloaded, else nothing") {
  if (!shim_expected()) {
    CHECK_FALSE(dkp::util::blas_count().has_value());
    return;
  }
  REQUIRE(dkp::util::blas_count().has_value());
  const arma::mat A = filled(60, 40, 1.0), B = filled(40, 50, 1.1);
  arma::mat C(60, 50, arma::fill::zeros);
  SUBCASE("cblas_dgemm: 2 m n k, one call") {
    const auto c = counted([&] {
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 60, 50, 40, 1.0, A.memptr(), 60,
                  B.memptr(), 40, 0.0, C.memptr(), 60);
    });
    CHECK(c.calls == 1);
    CHECK(c.flops == 2.0 * 60 * 50 * 40);
    CHECK(c.seconds > 0.0);
    CHECK(arma::approx_equal(C, A * B, "absdiff", 1e-12));  // still the real product
  }
  SUBCASE("Armadillo's products go through dgemm_ and dgemv_") {
    arma::mat P;
    const auto c = counted([&] { P = A * B; });
    CHECK(c.calls == 1);
    CHECK(c.flops == 2.0 * 60 * 50 * 40);
    const arma::vec x = filled(40, 1, 0.5);
    arma::vec y;
    const auto v = counted([&] { y = A * x; });
    CHECK(v.calls == 1);
    CHECK(v.flops == 2.0 * 60 * 40);
  }
  SUBCASE("triangular products and solves: m^2 n on the left, m n^2 on the right") {
    const arma::mat L = arma::trimatl(filled(30, 30, 0.0)) + 5.0 * arma::eye(30, 30);
    arma::mat X = filled(30, 70, 0.3), Y = filled(70, 30, 0.3);
    const auto l = counted([&] {
      cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 30, 70, 1.0,
                  L.memptr(), 30, X.memptr(), 30);
    });
    CHECK(l.flops == 30.0 * 30 * 70);
    const auto r = counted([&] {
      cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, 70, 30, 1.0,
                  L.memptr(), 30, Y.memptr(), 70);
    });
    CHECK(r.flops == 70.0 * 30 * 30);
    CHECK(l.calls + r.calls == 2);
  }
  SUBCASE("LAPACK: one count per routine, whatever it calls inside") {
    const arma::mat G = filled(80, 80, 1.0);
    const arma::mat K = G * G.t() + 80.0 * arma::eye(80, 80);
    arma::mat R;
    const auto ch = counted([&] { R = arma::chol(K, "lower"); });
    CHECK(ch.calls == 1);  // dpotrf_, not also the BLAS calls a reference LAPACK would make
    CHECK(ch.flops == std::round(80.0 * 80 * 80 / 3));  // n^3 / 3, to the nearest flop
    // arma::inv_sympd: dpotrf_ then dpotri_, which calls dtrtri_ through its exported symbol
    // (counted a third time without the shim's nesting guard: checked by removing it).
    arma::mat Ki;
    const auto inv = counted([&] { Ki = arma::inv_sympd(K); });
    CHECK(inv.calls == 2);
    CHECK(inv.flops == std::round(80.0 * 80 * 80 / 3) + std::round(2 * 80.0 * 80 * 80 / 3));
    CHECK(arma::approx_equal(Ki * K, arma::eye(80, 80), "absdiff", 1e-10));
    arma::mat S = K;
    const auto sy = counted([&] {
      cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, 80, 80, 1.0, G.memptr(), 80, 0.0,
                  S.memptr(), 80);
    });
    CHECK(sy.calls == 1);
    CHECK(sy.flops == 80.0 * 80 * 80);
  }
  SUBCASE("calls from several threads add up") {
    arma::mat C2(60, 50, arma::fill::zeros);
    const auto c = counted([&] {
      std::thread t([&] {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 60, 50, 40, 1.0, A.memptr(), 60,
                    B.memptr(), 40, 0.0, C2.memptr(), 60);
      });
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 60, 50, 40, 1.0, A.memptr(), 60,
                  B.memptr(), 40, 0.0, C.memptr(), 60);
      t.join();
    });
    CHECK(c.calls == 2);
    CHECK(c.flops == 2 * 2.0 * 60 * 50 * 40);
  }
}
