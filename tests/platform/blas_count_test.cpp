// The BLAS/LAPACK operation counter of `dkp bench model --flops`. CTest runs this file twice: in
// the `platform` suite without the shim (nothing is counted), and as `platform_blas_count` with
// libdkp_blas_count.so preloaded and DKP_EXPECT_BLAS_COUNT=1 (every routine's nominal flops,
// one count per outermost call, all threads).
#include <doctest/doctest.h>

#include <cblas.h>

#include <armadillo>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "platform/blas_count.hpp"

namespace {

bool shim_expected() {
  const char* e = std::getenv("DKP_EXPECT_BLAS_COUNT");
  return e != nullptr && std::string(e) == "1";
}

// The calls and flops of `work`, read around it.
template <class F>
dkp::platform::BlasCount counted(F&& work) {
  const auto a = dkp::platform::blas_count();
  REQUIRE(a);
  work();
  const auto b = dkp::platform::blas_count();
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
    CHECK_FALSE(dkp::platform::blas_count().has_value());
    CHECK(dkp::platform::blas_count_routines().empty());
    return;
  }
  REQUIRE(dkp::platform::blas_count().has_value());
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
  SUBCASE("each routine has its own totals, and they add up to the whole") {
    const auto before = dkp::platform::blas_count_routines();
    const auto total_before = dkp::platform::blas_count();
    const arma::mat G = filled(50, 50, 1.0);
    const arma::mat K = G * G.t() + 50.0 * arma::eye(50, 50);  // dgemm_ (with dsyrk_ or not)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 60, 50, 40, 1.0, A.memptr(), 60,
                B.memptr(), 40, 0.0, C.memptr(), 60);
    const arma::mat Ki = arma::inv_sympd(K);  // dpotrf_ then dpotri_ (its dtrtri_ not counted)
    const auto after = dkp::platform::blas_count_routines();
    const auto total_after = dkp::platform::blas_count();
    REQUIRE(after.size() == before.size());
    REQUIRE(total_before);
    REQUIRE(total_after);
    std::map<std::string, dkp::platform::BlasCount> d;
    dkp::platform::BlasCount sum;
    for (size_t i = 0; i < after.size(); ++i) {
      CHECK(after[i].name == before[i].name);
      d[after[i].name] = after[i].count - before[i].count;
      sum += after[i].count;
    }
    CHECK(d.at("cblas_dgemm").calls == 1);
    CHECK(d.at("cblas_dgemm").flops == 2.0 * 60 * 50 * 40);
    CHECK(d.at("dpotrf_").calls == 1);
    CHECK(d.at("dpotrf_").flops == std::round(50.0 * 50 * 50 / 3));
    CHECK(d.at("dpotri_").calls == 1);
    CHECK(d.at("dpotri_").flops == std::round(2 * 50.0 * 50 * 50 / 3));
    CHECK(d.at("dtrtri_").calls == 0);
    CHECK(d.at("dgetrf_").calls == 0);
    // G G^T: one call, to dgemm_ or dsyrk_ as Armadillo chooses, 2 n^3 or n^3 flops.
    CHECK(d.at("dgemm_").calls + d.at("dsyrk_").calls == 1);
    const dkp::platform::BlasCount whole = *total_after - *total_before;
    double parts = 0.0;
    std::uint64_t part_calls = 0;
    for (const auto& [name, c] : d) {
      parts += c.flops;
      part_calls += c.calls;
    }
    CHECK(part_calls == whole.calls);
    CHECK(parts == whole.flops);
    CHECK(sum.calls == total_after->calls);  // since the process started
    CHECK(sum.flops == total_after->flops);
    CHECK(arma::approx_equal(Ki * K, arma::eye(50, 50), "absdiff", 1e-10));
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
