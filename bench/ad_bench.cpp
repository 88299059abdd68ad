#include "bench/ad_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <armadillo>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "linalg/chol.hpp"
#include "linalg/triangular.hpp"
#include "util/error.hpp"
#include "util/median.hpp"

namespace dkp::bench {

// The benchmark calls dkp::autodiff's functions unqualified, as it did inside that namespace.
using namespace dkp::autodiff;

namespace {

using Clock = std::chrono::steady_clock;

constexpr arma::uword kN = 100, kM = 1000;

// The steps of the block, in order. "inputs" is the tape's copy of the leaves.
enum Step { kInputs, kChol, kSolve1, kSolve2, kLogdet, kMatmul, kTrace, kSum, kSteps };
constexpr std::array<const char*, kSteps> kNames = {"inputs (leaf copies)",
                                                    "cholesky 100x100",
                                                    "solve L V = B (100x1000)",
                                                    "solve L^T X = V",
                                                    "logdet from L",
                                                    "matmul V X^T (100x1000x100)",
                                                    "trace",
                                                    "sum (logdet + trace)"};

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double minimum(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

arma::mat normal_matrix(boost::random::mt19937_64& eng, arma::uword r, arma::uword c) {
  boost::random::normal_distribution<double> nd;
  arma::mat m(r, c);
  for (auto& x : m) x = nd(eng);
  return m;
}

struct Timings {
  std::array<std::vector<double>, kSteps> plain, fwd, bwd;
  std::vector<double> plain_total, fwd_total, bwd_total, bwd_tape;
  std::vector<double> faults_plain, faults_fwd, faults_bwd;
};

// One repetition of the plain computation; returns f.
double plain_rep(const arma::mat& A, const arma::mat& B, Timings& tm, bool keep) {
  std::array<double, kSteps> dt{};
  const long pf0 = minor_faults();
  const auto t0 = Clock::now();
  auto t = Clock::now();
  const arma::mat L = linalg::chol(A, "bench A");
  dt[kChol] = us_since(t);
  t = Clock::now();
  const arma::mat V = linalg::solve_lower(L, B);
  dt[kSolve1] = us_since(t);
  t = Clock::now();
  const arma::mat X = linalg::solve_lower(L, V, true);
  dt[kSolve2] = us_since(t);
  t = Clock::now();
  const double ld = linalg::logdet_chol(L);
  dt[kLogdet] = us_since(t);
  t = Clock::now();
  const arma::mat M = V * X.t();
  dt[kMatmul] = us_since(t);
  t = Clock::now();
  const double tr = arma::trace(M);
  dt[kTrace] = us_since(t);
  t = Clock::now();
  const double f = ld + tr;
  dt[kSum] = us_since(t);
  const double total = us_since(t0);
  const long pf = minor_faults() - pf0;
  if (keep) {
    for (int s = 0; s < kSteps; ++s) tm.plain[s].push_back(dt[s]);
    tm.plain_total.push_back(total);
    tm.faults_plain.push_back(double(pf));
  }
  return f;
}

// One repetition with the tape: forward op by op, then the backward closures one by one in
// reverse (what Tape::backward does, timed per node), then Tape::backward as a whole.
double tape_rep(const arma::mat& A, const arma::mat& B, Timings& tm, bool keep, arma::mat* gA,
                arma::mat* gB) {
  std::array<double, kSteps> fw{}, bw{};
  Tape tape;
  long pf0 = minor_faults();
  const auto t0 = Clock::now();
  auto t = Clock::now();
  const Var a = tape.variable(A);
  const Var b = tape.variable(B);
  fw[kInputs] = us_since(t);
  t = Clock::now();
  const Var L = cholesky(a, "bench A");
  fw[kChol] = us_since(t);
  t = Clock::now();
  const Var V = solve_lower(L, b);
  fw[kSolve1] = us_since(t);
  t = Clock::now();
  const Var X = solve_lower(L, V, true);
  fw[kSolve2] = us_since(t);
  t = Clock::now();
  const Var ld = logdet_chol(L);
  fw[kLogdet] = us_since(t);
  t = Clock::now();
  const Var M = matmul(V, X, false, true);
  fw[kMatmul] = us_since(t);
  t = Clock::now();
  const Var tr = trace(M);
  fw[kTrace] = us_since(t);
  t = Clock::now();
  const Var f = ld + tr;
  fw[kSum] = us_since(t);
  const double fwd_total = us_since(t0);
  const long pf_fwd = minor_faults() - pf0;

  // Per-node backward, in reverse recording order.
  const std::array<std::pair<Step, Var>, 7> nodes = {{{kSum, f},
                                                      {kTrace, tr},
                                                      {kMatmul, M},
                                                      {kLogdet, ld},
                                                      {kSolve2, X},
                                                      {kSolve1, V},
                                                      {kChol, L}}};
  for (const Var& v : {a, b, L, V, X, ld, M, tr, f}) v.node()->adj.reset();
  pf0 = minor_faults();
  const auto t1 = Clock::now();
  f.node()->adj_ref().fill(1.0);
  for (const auto& [step, v] : nodes) {
    t = Clock::now();
    if (v.node()->backward && v.node()->has_adj()) v.node()->backward();
    bw[step] = us_since(t);
  }
  const double bwd_total = us_since(t1);
  const long pf_bwd = minor_faults() - pf0;
  if (gA) *gA = a.grad();
  if (gB) *gB = b.grad();

  // The same through Tape::backward (resets and reuses the adjoints).
  t = Clock::now();
  tape.backward(f);
  const double bwd_tape = us_since(t);

  if (keep) {
    for (int s = 0; s < kSteps; ++s) {
      tm.fwd[s].push_back(fw[s]);
      tm.bwd[s].push_back(bw[s]);
    }
    tm.fwd_total.push_back(fwd_total);
    tm.bwd_total.push_back(bwd_total);
    tm.bwd_tape.push_back(bwd_tape);
    tm.faults_fwd.push_back(double(pf_fwd));
    tm.faults_bwd.push_back(double(pf_bwd));
  }
  return f.scalar();
}

}  // namespace

void run_ad_bench(std::ostream& out, int reps) {
  if (reps < 1) throw Error(fmt::format("run_ad_bench: reps must be >= 1, not {}", reps));
  boost::random::mt19937_64 eng(20261122);
  const arma::mat G = normal_matrix(eng, kN, kN);
  arma::mat A = G * G.t() / double(kN);
  A.diag() += 1.0;
  A = arma::symmatl(A);
  const arma::mat B = normal_matrix(eng, kN, kM);

  Timings tm;
  double f_plain = 0.0, f_tape = 0.0;
  for (int r = 0; r < reps + 2; ++r) {  // two warm-up repetitions
    const bool keep = r >= 2;
    f_plain = plain_rep(A, B, tm, keep);
    f_tape = tape_rep(A, B, tm, keep, nullptr, nullptr);
  }
  if (std::abs(f_plain - f_tape) > 1e-9 * std::max(1.0, std::abs(f_plain))) {
    throw Error(
        fmt::format("run_ad_bench: tape value {} differs from plain value {}", f_tape, f_plain));
  }

  out << fmt::format(
      "autodiff micro-benchmark: chol(A) 100x100, V = L^-1 B, X = L^-T V (B 100x1000), "
      "f = logdet A + trace(V X^T)\nmedian of {} repetitions (after 2 warm-up), times in us\n\n",
      reps);
  out << fmt::format("{:<30} {:>10} {:>10} {:>8} {:>10} {:>8}\n", "op", "plain", "tape fwd",
                     "fwd/pl", "backward", "bwd/fwd");
  for (int s = 0; s < kSteps; ++s) {
    const double p = util::median(tm.plain[s]), fw = util::median(tm.fwd[s]),
                 bw = util::median(tm.bwd[s]);
    const std::string ratio = p > 0.0 ? fmt::format("{:.2f}", fw / p) : std::string("-");
    const std::string bratio = s == kInputs ? std::string("-") : fmt::format("{:.2f}", bw / fw);
    out << fmt::format("{:<30} {:>10.1f} {:>10.1f} {:>8} {:>10.1f} {:>8}\n", kNames[s], p, fw,
                       ratio, s == kInputs ? 0.0 : bw, bratio);
  }
  const double p = util::median(tm.plain_total), fw = util::median(tm.fwd_total),
               bw = util::median(tm.bwd_total);
  out << fmt::format("{:<30} {:>10.1f} {:>10.1f} {:>8.2f} {:>10.1f} {:>8.2f}\n", "total", p, fw,
                     fw / p, bw, bw / fw);
  out << fmt::format("{:<30} {:>10} {:>10} {:>8} {:>10.1f} {:>8.2f}\n", "total (Tape::backward)",
                     "", "", "", util::median(tm.bwd_tape), util::median(tm.bwd_tape) / fw);
  const double pmin = minimum(tm.plain_total), fmin = minimum(tm.fwd_total),
               bmin = minimum(tm.bwd_total), tmin = minimum(tm.bwd_tape);
  out << fmt::format("{:<30} {:>10.1f} {:>10.1f} {:>8.2f} {:>10.1f} {:>8.2f}\n",
                     "total, fastest repetition", pmin, fmin, fmin / pmin, bmin, bmin / fmin);
  out << fmt::format("{:<30} {:>10} {:>10} {:>8} {:>10.1f} {:>8.2f}\n", "  (Tape::backward)", "",
                     "", "", tmin, tmin / fmin);
  out << fmt::format(
      "\nforward with tape / plain = {:.2f} (target <= 1.2); backward / forward = {:.2f} "
      "(target <= 3)  [medians]\nminor page faults per repetition: plain {:.0f}, tape forward "
      "{:.0f}, backward {:.0f}\n",
      fw / p, bw / fw, util::median(tm.faults_plain), util::median(tm.faults_fwd),
      util::median(tm.faults_bwd));
}

}  // namespace dkp::bench
