#include "bench/dist_bench.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <armadillo>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "distributions/gw.hpp"
#include "distributions/inverse_wishart.hpp"
#include "distributions/wishart.hpp"
#include "random/stream.hpp"
#include "util/error.hpp"
#include "util/median.hpp"

namespace dkp::bench {

// The benchmark calls dkp::distributions's functions unqualified, as it did inside that namespace.
using namespace dkp::distributions;

namespace {

namespace ad = autodiff;
using Clock = std::chrono::steady_clock;

constexpr arma::uword kP = 100;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

enum class Kind { GW, AGW, ABGW, IW };

struct Inputs {
  arma::mat Psi;     // SPD, K / nu
  arma::mat Aprime;  // P x P
  arma::mat B;       // m x m lower
  arma::mat log_alpha, log_beta, mu, log_sigma;
};

// A squared-exponential kernel on random 1-D inputs plus jitter: a realistic, ill-ish conditioned
// K_ii.
Inputs make_inputs(random::Stream& s, int nu) {
  Inputs in;
  const arma::uword m = std::min<arma::uword>(kP, static_cast<arma::uword>(nu));
  arma::vec x(kP);
  for (auto& v : x) v = random::uniform(s, -3.0, 3.0);
  arma::mat K(kP, kP);
  for (arma::uword i = 0; i < kP; ++i) {
    for (arma::uword j = 0; j < kP; ++j) K(i, j) = std::exp(-0.5 * (x[i] - x[j]) * (x[i] - x[j]));
  }
  K.diag() += 1e-3;
  in.Psi = K / nu;
  in.Aprime = arma::eye(kP, kP) + 0.05 * random::normal_matrix(s, kP, kP);
  in.B = arma::trimatl(0.05 * random::normal_matrix(s, m, m));
  in.B.diag() += 1.0;
  in.log_alpha.set_size(m, 1);
  for (arma::uword j = 0; j < m; ++j)
    in.log_alpha[j] = std::log(0.5 * (nu - static_cast<double>(j)));
  in.log_beta = arma::mat(m, 1, arma::fill::value(std::log(0.5)));
  in.mu = random::normal_matrix(s, kP, m) / std::sqrt(static_cast<double>(m));
  in.log_sigma = arma::mat(kP, m, arma::fill::value(-3.0));
  return in;
}

struct Times {
  std::vector<double> sample, logp, backward, total;
};

void one_rep(Kind kind, int nu, const Inputs& in, random::Stream& s, Times& t, bool keep) {
  ad::Tape tape;
  const auto t0 = Clock::now();
  Var Psi = tape.variable(in.Psi);
  Var L = ad::cholesky(Psi, "bench Psi");
  Var lp;
  double dt_sample = 0, dt_logp = 0;
  if (kind == Kind::IW) {
    Var nu_q = tape.variable(arma::mat(1, 1, arma::fill::value(kP + 2.0)));
    auto ts = Clock::now();
    const PsdSample smp = inverse_wishart_sample(L, nu_q, s);
    dt_sample = us_since(ts);
    ts = Clock::now();
    Var lq = inverse_wishart_log_prob_at_sample(smp, L, nu_q);
    Var lprior = inverse_wishart_log_prob(smp.G, L, tape.constant(kP + 1.5), "bench G");
    lp = ad::sub(lprior, lq);
    dt_logp = us_since(ts);
  } else {
    BartlettParams p{ad::exp(tape.variable(in.log_alpha)), ad::exp(tape.variable(in.log_beta)),
                     tape.variable(in.mu), ad::exp(tape.variable(in.log_sigma))};
    auto ts = Clock::now();
    PsdSample smp;
    Var A, B;
    if (kind == Kind::GW) {
      smp = gw_sample(L, nu, p, s);
    } else {
      A = ad::matmul(L, tape.variable(in.Aprime));
      if (kind == Kind::AGW) {
        smp = agw_sample(A, nu, p, s);
      } else {
        B = tape.variable(in.B);
        smp = abgw_sample(A, B, nu, p, s);
      }
    }
    dt_sample = us_since(ts);
    ts = Clock::now();
    Var lq = kind == Kind::GW    ? gw_log_prob(smp, L, nu, detached(p))
             : kind == Kind::AGW ? agw_log_prob(smp, A, nu, detached(p))
                                 : abgw_log_prob(smp, A, B, nu, detached(p));
    Var lprior = wishart_log_prob_factor(smp.F, L, nu);
    lp = ad::sub(lprior, lq);
    dt_logp = us_since(ts);
  }
  const auto tb = Clock::now();
  tape.backward(lp);
  const double dt_back = us_since(tb);
  const double dt_total = us_since(t0);
  if (!std::isfinite(lp.scalar())) throw Error("run_dist_bench: non-finite log density");
  if (keep) {
    t.sample.push_back(dt_sample);
    t.logp.push_back(dt_logp);
    t.backward.push_back(dt_back);
    t.total.push_back(dt_total);
  }
}

}  // namespace

void run_dist_bench(std::ostream& out, int reps) {
  if (reps < 1) throw Error("run_dist_bench: reps must be >= 1");
  random::Stream s(20240401);
  out << fmt::format(
      "PSD distributions, P = {}, one DWP/DIWP layer step per repetition, median of {} reps (us)\n"
      "  step: L = chol(Psi); G ~ Q; lp = log P(G) - log Q(G) (STL: Q's Bartlett parameters "
      "detached); backward\n",
      kP, reps);
  out << fmt::format("{:<8} {:>4} {:>11} {:>12} {:>11} {:>11}\n", "Q", "nu", "sample", "log dens",
                     "backward", "total");
  struct Row {
    const char* name;
    Kind kind;
  };
  const Row rows[] = {{"GW", Kind::GW}, {"A-GW", Kind::AGW}, {"AB-GW", Kind::ABGW}};
  for (int nu : {8, 16, 100}) {
    const Inputs in = make_inputs(s, nu);
    for (const auto& r : rows) {
      Times t;
      one_rep(r.kind, nu, in, s, t, false);
      for (int k = 0; k < reps; ++k) one_rep(r.kind, nu, in, s, t, true);
      out << fmt::format("{:<8} {:>4} {:>11.0f} {:>12.0f} {:>11.0f} {:>11.0f}\n", r.name, nu,
                         util::median(t.sample), util::median(t.logp), util::median(t.backward),
                         util::median(t.total));
    }
  }
  {
    const Inputs in = make_inputs(s, static_cast<int>(kP));
    Times t;
    one_rep(Kind::IW, 0, in, s, t, false);
    for (int k = 0; k < reps; ++k) one_rep(Kind::IW, 0, in, s, t, true);
    out << fmt::format("{:<8} {:>4} {:>11.0f} {:>12.0f} {:>11.0f} {:>11.0f}\n", "IW", "P+2",
                       util::median(t.sample), util::median(t.logp), util::median(t.backward),
                       util::median(t.total));
  }
  out << "  (total includes the Cholesky of Psi; IW row: nu_q = P + 2 learned, prior nu = P + 1.5, "
         "log IW prior at a general G factorises G)\n";
  {
    // Standard normal draws (Boost's normal_distribution on the stream's engine), timed on one
    // P x B block a repetition.
    const arma::uword B = 455;
    std::vector<double> ns;
    for (int k = 0; k <= reps; ++k) {
      const auto t0 = Clock::now();
      const arma::mat z = random::normal_matrix(s, kP, B);  // advances s: not elided
      const double us = us_since(t0);
      if (k > 0) ns.push_back(us * 1000.0 / double(kP * B));
    }
    out << fmt::format(
        "normal draws: random::normal_matrix {} x {} (the DIWP conditional's noise block on "
        "boston), {:.2f} ns per draw, median of {} reps\n",
        kP, B, util::median(ns), reps);
  }
}

}  // namespace dkp::bench
