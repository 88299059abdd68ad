#include "bench/blas_bench.hpp"

#include <cblas.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <armadillo>

#include "linalg/chol.hpp"
#include "linalg/triangular.hpp"
#include "random/stream.hpp"
#include "util/error.hpp"
#include "util/median.hpp"

namespace dkp::bench {

// The benchmark calls dkp::linalg's functions unqualified, as it did inside that namespace.
using namespace dkp::linalg;

namespace {

using Clock = std::chrono::steady_clock;

// One kernel: `make` builds a thread's own inputs and returns the call to time.
struct Kernel {
  std::string name;
  double flops;  // per call
  std::function<std::function<void()>(unsigned seed)> make;
};

arma::mat random_mat(arma::uword r, arma::uword c, unsigned seed) {
  random::Stream s(seed);
  return random::normal_matrix(s, r, c);
}

Kernel gemm(arma::uword m, arma::uword n, arma::uword k) {
  return {fmt::format("dgemm {} x {} x {}", m, n, k), 2.0 * double(m) * double(n) * double(k),
          [m, n, k](unsigned seed) -> std::function<void()> {
            auto A = std::make_shared<arma::mat>(random_mat(m, k, seed));
            auto B = std::make_shared<arma::mat>(random_mat(k, n, seed + 1));
            auto C = std::make_shared<arma::mat>(m, n, arma::fill::zeros);
            return [A, B, C, m, n, k] {
              cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0,
                          A->memptr(), int(m), B->memptr(), int(k), 0.0, C->memptr(), int(m));
            };
          }};
}

// A well-conditioned SPD matrix of size n: W W^T / n + I.
arma::mat spd(arma::uword n, unsigned seed) {
  const arma::mat W = random_mat(n, n, seed);
  arma::mat K = W * W.t() / double(n);
  K.diag() += 1.0;
  return K;
}

Kernel solve(arma::uword n, arma::uword m) {
  return {fmt::format("tri_solve {0} x {0}, {1} columns", n, m), double(n) * double(n) * double(m),
          [n, m](unsigned seed) -> std::function<void()> {
            auto L = std::make_shared<arma::mat>(chol(spd(n, seed), "bench"));
            auto B = std::make_shared<arma::mat>(random_mat(n, m, seed + 1));
            return [L, B] {
              const arma::mat X = tri_solve(*L, *B, Uplo::Lower);
              if (X.n_elem != B->n_elem) throw Error("bench: tri_solve returned the wrong shape");
            };
          }};
}

Kernel cholesky(arma::uword n) {
  return {fmt::format("chol {0} x {0}", n), double(n) * double(n) * double(n) / 3.0,
          [n](unsigned seed) -> std::function<void()> {
            auto K = std::make_shared<arma::mat>(spd(n, seed));
            return [K] {
              const arma::mat L = chol(*K, "bench");
              if (L.n_rows != K->n_rows) throw Error("bench: chol returned the wrong shape");
            };
          }};
}

// The median time in us of one call of `k`, `threads` threads calling it at once, `reps` timed
// calls each after a warm-up.
double median_call_us(const Kernel& k, int reps, std::size_t T) {
  // Each thread times its own calls; the barrier starts the timed loops together, so that
  // the threads run at once as a step's sample groups do.
  std::vector<std::vector<double>> us(T);
  std::vector<std::function<void()>> calls(T);
  for (std::size_t t = 0; t < T; ++t) calls[t] = k.make(unsigned(1000 * t + 1));
  std::barrier start(std::ptrdiff_t(T), []() noexcept {});
  auto body = [&](std::size_t t) {
    calls[t]();  // warm-up
    start.arrive_and_wait();
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      calls[t]();
      us[t].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < T; ++t) pool.emplace_back(body, t);
  body(0);
  for (auto& th : pool) th.join();
  std::vector<double> all;
  for (const auto& v : us) all.insert(all.end(), v.begin(), v.end());
  return util::median(all);
}

}  // namespace

double large_dgemm_rate(int reps, int threads) {
  if (reps < 1 || threads < 1) {
    throw Error("bench::large_dgemm_rate: reps and threads must be at least 1");
  }
  const Kernel k = gemm(1000, 1000, 1000);
  return k.flops / (median_call_us(k, reps, std::size_t(threads)) * 1e3) * double(threads);
}

void run_blas_bench(std::ostream& out, int reps, int threads) {
  if (reps < 1) throw Error("bench::run_blas_bench: reps must be at least 1");
  if (threads < 1) throw Error("bench::run_blas_bench: threads must be at least 1");
  const std::vector<Kernel> kernels = {gemm(100, 100, 100),    gemm(455, 455, 455),
                                       gemm(1000, 1000, 1000), gemm(100, 455, 100),
                                       solve(100, 455),        cholesky(100)};
  out << fmt::format("{:<34} {:>12} {:>18} {:>16}\n", "kernel", "median us", "GFlop/s per thread",
                     "GFlop/s, all");
  const auto T = std::size_t(threads);
  for (const Kernel& k : kernels) {
    const double med = median_call_us(k, reps, T);
    const double per_thread = k.flops / (med * 1e3);  // flops / (us * 1e3) = GFlop/s
    out << fmt::format("{:<34} {:>12.1f} {:>18.1f} {:>16.1f}\n", k.name, med, per_thread,
                       per_thread * double(T));
  }
  out << fmt::format(
      "({} thread(s) at once, one BLAS thread each, median of {} calls per thread; flops: 2mnk "
      "for dgemm, n^2 m for a triangular solve, n^3 / 3 for a Cholesky factorisation)\n",
      threads, reps);
}

}  // namespace dkp::bench
