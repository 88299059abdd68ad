// Training loop: the ELBO improves, the same seed gives identical parameters, an interrupted and
// resumed run is bit-identical to an uninterrupted one (with one thread and with two sharing the
// samples), and a non-finite ELBO is a clear error. Then the sample-splitting of training/mc.hpp.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "models/gi_dgp.hpp"
#include "models/sgp.hpp"
#include "platform/arma_alloc.hpp"
#include "test_support.hpp"
#include "training/checkpoint.hpp"
#include "training/mc.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"

using dkp::models::GiDgp;
using dkp::models::GiDgpConfig;
namespace tr = dkp::training;

namespace {

struct Fixture {
  arma::mat X;
  arma::vec y;
  std::unique_ptr<GiDgp> model;
  Fixture() {
    dkp::random::Stream s(11);
    X = dkp::random::normal_matrix(s, 40, 2);
    y = arma::sin(2.0 * X.col(0)) + 0.1 * dkp::random::normal_matrix(s, 40, 1);
    GiDgpConfig cfg;
    cfg.depth = 2;
    cfg.inducing = 8;
    dkp::random::Stream init(12);
    model = std::make_unique<GiDgp>(cfg, X, y, init);
  }
};

tr::TrainOptions options(size_t steps) {
  tr::TrainOptions o;
  o.steps = steps;
  o.lr = tr::LrSchedule::steps(0.02, {{15, 0.01}});
  o.kl = tr::KlAnnealing(5);
  o.samples = 2;
  o.batch = 16;  // minibatches exercise the epoch permutation
  o.log_every = 0;
  o.checkpoint_every = 7;
  return o;
}

}  // namespace

TEST_CASE("training improves the ELBO and is deterministic given the seed") {
  Fixture f;
  const dkp::random::Stream run(5);
  dkp::random::Stream e0(9);
  const double before = tr::estimate_elbo(*f.model, f.model->initial_parameters(), f.X, f.y, 4, e0);
  const auto a = tr::train(*f.model, f.X, f.y, options(60), run);
  const auto b = tr::train(*f.model, f.X, f.y, options(60), run);
  dkp::random::Stream e1(9);
  const double after = tr::estimate_elbo(*f.model, a.params, f.X, f.y, 4, e1);
  CHECK(after > before + 0.1);
  for (const auto& [name, v] : a.params)
    CHECK(arma::approx_equal(v, b.params.at(name), "absdiff", 0.0));
}

TEST_CASE("an interrupted run resumes from its checkpoint bit-identically") {
  for (size_t threads : {1, 2}) {
    CAPTURE(threads);
    Fixture f;
    const dkp::random::Stream run(6);
    const auto dir = dkp::test::temp_dir(threads == 1 ? "resume" : "resume2");
    auto opt = options(30);
    opt.threads = threads;
    const auto straight = tr::train(*f.model, f.X, f.y, opt, run);

    opt.checkpoint_path = dir / "checkpoint.bin";
    // Interrupt after step 12 (not a multiple of checkpoint_every) as SIGINT would.
    auto stop_at_12 = [](const tr::StepInfo& s, const tr::TrainOptions&) {
      if (s.step == 12) tr::stop_requested().store(true);
    };
    CHECK_THROWS_AS(tr::train(*f.model, f.X, f.y, opt, run, stop_at_12), tr::Interrupted);
    tr::stop_requested().store(false);
    const auto ck = tr::load_checkpoint(opt.checkpoint_path, f.model->initial_parameters());
    CHECK(ck.step == 12);
    // The progress of the resumed process counts only its own steps (the rate and ETA).
    size_t first_seen = 99, calls = 0;
    auto watch = [&](const tr::StepInfo& s, const tr::TrainOptions&) {
      if (calls++ == 0) first_seen = s.first_step;
      CHECK(s.step > s.first_step);
      CHECK(s.steps_per_second() == doctest::Approx(double(s.step - 12) / s.seconds));
    };
    const auto resumed = tr::train(*f.model, f.X, f.y, opt, run, watch);
    CHECK(resumed.resumed_from == 12);
    CHECK(first_seen == 12);
    CHECK(calls == 30 - 12);
    for (const auto& [name, v] : straight.params)
      CHECK(arma::approx_equal(v, resumed.params.at(name), "absdiff", 0.0));
  }
}

TEST_CASE("a stop request stops the ELBO estimate too, and a cleared one lets it run") {
  Fixture f;
  const auto p = f.model->initial_parameters();
  const dkp::random::Stream parent(21);
  tr::stop_requested().store(true);
  dkp::random::Stream e0(9);
  CHECK_THROWS_WITH_AS(tr::estimate_elbo(*f.model, p, f.X, f.y, 2, e0),
                       doctest::Contains("interrupted"), tr::Interrupted);
  CHECK_THROWS_AS(tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 2, 3, parent, "e"),
                  tr::Interrupted);
  tr::stop_requested().store(false);
  dkp::random::Stream e1(9);
  CHECK(std::isfinite(tr::estimate_elbo(*f.model, p, f.X, f.y, 2, e1)));
}

TEST_CASE("a checkpoint of another model is rejected with a clear error") {
  Fixture f;
  const auto dir = dkp::test::temp_dir("ckmismatch");
  tr::Checkpoint ck;
  ck.params = f.model->initial_parameters();
  ck.params.erase(ck.params.begin());
  tr::save_checkpoint(dir / "c.bin", ck);
  CHECK_THROWS_WITH_AS(tr::load_checkpoint(dir / "c.bin", f.model->initial_parameters()),
                       doctest::Contains("no parameter"), dkp::DataError);
}

TEST_CASE("a non-finite ELBO stops training with an error naming the step") {
  Fixture f;
  arma::vec bad = f.y;
  bad[3] = arma::datum::nan;
  auto opt = options(5);
  opt.batch = 0;  // full batch: the NaN is seen at the first step
  CHECK_THROWS_WITH_AS(tr::train(*f.model, f.X, bad, opt, dkp::random::Stream(1)),
                       doctest::Contains("non-finite ELBO at step 0"), dkp::Error);
}

// ---- training/mc.hpp: samples split over threads ----

TEST_CASE("sample_groups: min(T, S) groups of near-equal size, larger first") {
  CHECK(tr::sample_groups(10, 1) == std::vector<size_t>{10});
  CHECK(tr::sample_groups(10, 2) == std::vector<size_t>{5, 5});
  CHECK(tr::sample_groups(10, 3) == std::vector<size_t>{4, 3, 3});
  CHECK(tr::sample_groups(7, 4) == std::vector<size_t>{2, 2, 2, 1});
  CHECK(tr::sample_groups(2, 8) == std::vector<size_t>{1, 1});
  CHECK_THROWS_AS(tr::sample_groups(0, 2), dkp::ConfigError);
  CHECK_THROWS_AS(tr::sample_groups(3, 0), dkp::ConfigError);
}

TEST_CASE("parallel_for runs every index and rethrows the lowest failing one") {
  std::vector<int> seen(5, 0);
  tr::parallel_for(5, [&](size_t g) { seen[g] = int(g) + 1; });
  CHECK(seen == std::vector<int>{1, 2, 3, 4, 5});
  std::vector<int> ran(4, 0);
  CHECK_THROWS_WITH(tr::parallel_for(4,
                                     [&](size_t g) {
                                       ran[g] = 1;
                                       if (g == 1 || g == 3)
                                         throw dkp::Error("group " + std::to_string(g));
                                     }),
                    "group 1");
  CHECK(ran == std::vector<int>{1, 1, 1, 1});
}

TEST_CASE("parallel_for keeps its workers across calls of any size, and nests") {
  std::vector<std::thread::id> ids(3);
  tr::parallel_for(3, [&](size_t g) { ids[g] = std::this_thread::get_id(); });
  CHECK(ids[0] == std::this_thread::get_id());
  CHECK(ids[1] != ids[0]);
  CHECK(ids[2] != ids[1]);
  std::vector<std::thread::id> again(3);
  tr::parallel_for(3, [&](size_t g) { again[g] = std::this_thread::get_id(); });
  CHECK(again == ids);             // the same worker threads
  for (size_t n : {1, 2, 5, 2}) {  // fewer and more groups than workers
    std::vector<int> seen(n, 0);
    tr::parallel_for(n, [&](size_t g) { seen[g] += 1; });
    CHECK(seen == std::vector<int>(n, 1));
  }
  std::vector<int> inner(6, 0);  // a parallel_for inside a group runs on fresh threads
  tr::parallel_for(2, [&](size_t g) {
    tr::parallel_for(3, [&](size_t h) { inner[3 * g + h] = int(3 * g + h) + 1; });
  });
  CHECK(inner == std::vector<int>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("one thread is exactly a plain model.elbo call and its gradient") {
  Fixture f;
  dkp::random::Stream a(21), b(21);
  const auto e = tr::elbo_gradient(*f.model, f.model->initial_parameters(), f.X, f.y, 40.0, 3, 0.6,
                                   a, 1, true);
  dkp::autodiff::Tape tape;
  const auto vars = dkp::autodiff::to_vars(tape, f.model->initial_parameters(), true);
  const auto ref = f.model->elbo(vars, f.X, f.y, 40.0, 3, 0.6, b);
  tape.backward(ref.elbo);
  CHECK(e.elbo == ref.elbo.scalar());
  CHECK(e.expected_loglik == ref.expected_loglik);
  CHECK(e.kl == ref.kl);
  REQUIRE(e.grad.size() == vars.size());
  for (const auto& [name, v] : vars)
    CHECK(arma::approx_equal(e.grad.at(name), v.grad(), "absdiff", 0.0));
  CHECK(a == b);  // the caller's stream advanced as by the plain call
  REQUIRE(e.group_seconds.size() == 1);
  CHECK(e.group_seconds[0] > 0.0);
}

TEST_CASE("T threads: the sample-weighted combination of the groups' estimates and gradients") {
  Fixture f;
  const auto& params = f.model->initial_parameters();
  const dkp::random::Stream noise(22);
  dkp::random::Stream n1 = noise;
  const auto e = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, 7, 0.6, n1, 3, true);
  // By hand: groups of 3, 2, 2 samples on the child streams, weighted by 3/7, 2/7, 2/7.
  const std::vector<size_t> sizes{3, 2, 2};
  double elbo = 0.0, ell = 0.0, kl = 0.0;
  dkp::autodiff::ParamMap grad;
  for (size_t g = 0; g < 3; ++g) {
    dkp::random::Stream s = noise.child("sample-group", g);
    dkp::autodiff::Tape tape;
    const auto vars = dkp::autodiff::to_vars(tape, params, true);
    const auto r = f.model->elbo(vars, f.X, f.y, 40.0, sizes[g], 0.6, s);
    tape.backward(r.elbo);
    const double w = double(sizes[g]) / 7.0;
    elbo += w * r.elbo.scalar();
    ell += w * r.expected_loglik;
    kl += w * r.kl;
    for (const auto& [name, v] : vars) {
      if (g == 0)
        grad[name] = w * v.grad();
      else
        grad[name] += w * v.grad();
    }
  }
  CHECK(e.elbo == doctest::Approx(elbo).epsilon(1e-14));
  CHECK(e.expected_loglik == doctest::Approx(ell).epsilon(1e-14));
  CHECK(e.kl == doctest::Approx(kl).epsilon(1e-14));
  REQUIRE(e.grad.size() == grad.size());
  for (const auto& [name, g] : grad)
    CHECK(arma::approx_equal(e.grad.at(name), g, "reldiff", 1e-13));
  // Each group's wall time, in group order, none longer than the whole call.
  REQUIRE(e.group_seconds.size() == 3);
  for (double t : e.group_seconds) CHECK(t > 0.0);
  {
    dkp::random::Stream n3 = noise;
    const auto t0 = std::chrono::steady_clock::now();
    const auto timed = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, 7, 0.6, n3, 3, true);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    REQUIRE(timed.group_seconds.size() == 3);
    for (double t : timed.group_seconds) CHECK(t <= wall);
  }
  // Reproducible whatever the scheduling.
  dkp::random::Stream n2 = noise;
  const auto again = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, 7, 0.6, n2, 3, true);
  CHECK(again.elbo == e.elbo);
  for (const auto& [name, g] : e.grad)
    CHECK(arma::approx_equal(again.grad.at(name), g, "absdiff", 0.0));
}

TEST_CASE("T threads: the calling thread's allocation cache does not grow from step to step") {
  // The groups' gradients are freed on the threads that made them; freed on the caller, the
  // workers' blocks (a 100 x 100 precision factor per layer here) would pile up in its cache.
  dkp::random::Stream s(13);
  const arma::mat X = dkp::random::normal_matrix(s, 120, 2);
  const arma::vec y = arma::sin(2.0 * X.col(0));
  GiDgpConfig cfg;
  cfg.depth = 2;
  cfg.inducing = 100;
  dkp::random::Stream init(14);
  const GiDgp model(cfg, X, y, init);
  dkp::random::Stream noise(15);
  auto step = [&] {
    return tr::elbo_gradient(model, model.initial_parameters(), X, y, 120.0, 4, 1.0, noise, 2,
                             true);
  };
  for (int i = 0; i < 3; ++i) step();
  const std::size_t settled = dkp::platform::alloc_cached_bytes();
  for (int i = 0; i < 5; ++i) CHECK(std::isfinite(step().elbo));
  CHECK(dkp::platform::alloc_cached_bytes() == settled);
}

TEST_CASE(
    "the split estimate has the one-thread estimate's mean (200 draws each, 4 standard errors)") {
  Fixture f;
  const auto& params = f.model->initial_parameters();
  arma::vec one(200), two(200);
  for (size_t r = 0; r < 200; ++r) {
    dkp::random::Stream a(1000 + r), b(5000 + r);
    one[r] = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, 4, 1.0, a, 1, false).elbo;
    two[r] = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, 4, 1.0, b, 2, false).elbo;
  }
  const double se = std::sqrt(arma::var(one) / 200.0 + arma::var(two) / 200.0);
  CHECK(se > 0.0);
  CHECK(std::abs(arma::mean(one) - arma::mean(two)) < 4.0 * se);
}

TEST_CASE("predictions split over threads are the groups' columns side by side") {
  Fixture f;
  const auto& params = f.model->initial_parameters();
  const dkp::random::Stream rng(23);
  dkp::random::Stream r1 = rng;
  const auto p = tr::predict(*f.model, params, f.X.rows(0, 9), 5, r1, 2);
  REQUIRE(p.mean.n_rows == 10);
  REQUIRE(p.mean.n_cols == 5);
  dkp::random::Stream g0 = rng.child("sample-group", 0), g1 = rng.child("sample-group", 1);
  const auto a = f.model->predict(params, f.X.rows(0, 9), 3, g0);
  const auto b = f.model->predict(params, f.X.rows(0, 9), 2, g1);
  CHECK(arma::approx_equal(p.mean, arma::join_horiz(a.mean, b.mean), "absdiff", 0.0));
  CHECK(arma::approx_equal(p.var, arma::join_horiz(a.var, b.var), "absdiff", 0.0));
  dkp::random::Stream r2 = rng, r3 = rng;
  const auto one = tr::predict(*f.model, params, f.X.rows(0, 9), 5, r2, 1);
  const auto plain = f.model->predict(params, f.X.rows(0, 9), 5, r3);
  CHECK(arma::approx_equal(one.mean, plain.mean, "absdiff", 0.0));
  // With the hidden layers: the groups' samples in the same order.
  dkp::random::Stream r4 = rng, h0 = rng.child("sample-group", 0),
                      h1 = rng.child("sample-group", 1);
  const auto ph = tr::predict(*f.model, params, f.X.rows(0, 9), 5, r4, 2, true);
  const auto ha = f.model->predict(params, f.X.rows(0, 9), 3, h0, true);
  const auto hb = f.model->predict(params, f.X.rows(0, 9), 2, h1, true);
  CHECK(arma::approx_equal(ph.mean, p.mean, "absdiff", 0.0));
  CHECK(ph.hidden_kind == dkp::models::HiddenKind::Features);
  REQUIRE(ph.hidden.size() == 5);
  for (size_t s = 0; s < 5; ++s) {
    const auto& want = s < 3 ? ha.hidden[s] : hb.hidden[s - 3];
    REQUIRE(ph.hidden[s].size() == want.size());
    REQUIRE(!want.empty());
    for (size_t l = 0; l < want.size(); ++l)
      CHECK(arma::approx_equal(ph.hidden[s][l], want[l], "absdiff", 0.0));
  }
  CHECK(p.hidden.empty());
}

TEST_CASE("hidden_csv: header by kind, one row per sample, layer and point, padding, errors") {
  dkp::models::Predictive p;
  p.mean = arma::zeros(2, 2);
  p.hidden_kind = dkp::models::HiddenKind::Features;
  // Sample 0: layers 1 (2 x 2) and 2 (2 x 1); sample 1 the same plus 10.
  const arma::mat l1 = {{1.0, 2.0}, {3.0, 4.0}};
  const arma::mat l2 = arma::vec{0.5, -0.25};
  p.hidden = {{l1, l2}, {l1 + 10.0, l2 + 10.0}};
  const std::string csv = dkp::models::hidden_csv(p);
  CHECK(csv ==
        "sample,layer,index,f1,f2\n"
        "0,1,0,1,2\n0,1,1,3,4\n0,2,0,0.5,\n0,2,1,-0.25,\n"
        "1,1,0,11,12\n1,1,1,13,14\n1,2,0,10.5,\n1,2,1,9.75,\n");
  p.hidden_kind = dkp::models::HiddenKind::Gram;
  CHECK(dkp::models::hidden_csv(p).rfind("sample,layer,index,g_tt,g_1\n0,1,0,1,2\n", 0) == 0);
  // 17 significant digits: the values read back exactly.
  p.hidden = {{arma::mat{{0.1, 1.0 / 3.0}, {2e-300, -7.0}}}};
  const std::string g = dkp::models::hidden_csv(p);
  const auto row = g.substr(g.find("\n0,1,0,") + 7);
  CHECK(std::stod(row.substr(0, row.find(','))) == 0.1);
  CHECK(std::stod(row.substr(row.find(',') + 1)) == 1.0 / 3.0);
  // Errors: nothing kept, a model without hidden layers, rows that are not the points.
  dkp::models::Predictive none;
  none.mean = arma::zeros(2, 1);
  CHECK_THROWS_AS(dkp::models::hidden_csv(none), dkp::Error);
  none.hidden = {{}};
  CHECK_THROWS_AS(dkp::models::hidden_csv(none), dkp::Error);  // HiddenKind::None
  p.hidden = {{arma::zeros(3, 2)}};
  CHECK_THROWS_AS(dkp::models::hidden_csv(p), dkp::Error);
  p.hidden = {{arma::zeros(2, 2)}, {}};
  CHECK_THROWS_AS(dkp::models::hidden_csv(p), dkp::Error);  // samples with other layer counts
}

TEST_CASE("repeated final ELBO estimates: estimate 0 is the single estimate, mean and se by hand") {
  Fixture f;
  const auto& p = f.model->initial_parameters();
  const dkp::random::Stream parent(21);
  const size_t R = 6;
  const tr::ElboRepeats er = tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 3, R, parent, "e");
  arma::vec e(R);
  for (size_t r = 0; r < R; ++r) {
    dkp::random::Stream s = parent.child("e", r);
    e[r] = tr::estimate_elbo(*f.model, p, f.X, f.y, 3, s);
  }
  CHECK(er.repeats == R);
  CHECK(er.first == e[0]);
  CHECK(er.mean == doctest::Approx(arma::mean(e)).epsilon(1e-14));
  CHECK(er.se == doctest::Approx(arma::stddev(e) / std::sqrt(double(R))).epsilon(1e-12));
  CHECK(er.se > 0.0);  // the estimates differ: independent noise per repeat
  const tr::ElboRepeats one = tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 3, 1, parent, "e");
  CHECK(one.first == e[0]);
  CHECK(one.mean == e[0]);
  CHECK(one.se == 0.0);
  CHECK_THROWS_AS(tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 3, 0, parent, "e"),
                  dkp::ConfigError);
}

TEST_CASE(
    "repeated final ELBO estimates: the mean of R estimates has the standard error it reports") {
  // Two independent sets of R = 30 estimates (different purposes): their means differ by less
  // than 4 standard errors of the difference (fixed seeds, so the check is deterministic).
  Fixture f;
  const auto& p = f.model->initial_parameters();
  const dkp::random::Stream parent(22);
  const auto a = tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 2, 30, parent, "a");
  const auto b = tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 2, 30, parent, "b");
  CHECK(a.se > 0.0);
  CHECK(std::abs(a.mean - b.mean) < 4.0 * std::sqrt(a.se * a.se + b.se * b.se));
  // The standard error of 30 two-sample estimates is well below the spread of single estimates.
  const auto c = tr::estimate_elbo_repeated(*f.model, p, f.X, f.y, 2, 120, parent, "c");
  CHECK(c.se < a.se);
}

TEST_CASE("an evaluation's Cholesky counts are its tapes', summed over the sample groups") {
  Fixture f;
  const auto& params = f.model->initial_parameters();
  const size_t S = 4;
  // One model.elbo call on its own tape, as one group evaluates it.
  auto on_tape = [&](size_t samples, dkp::random::Stream& noise) {
    dkp::autodiff::Tape tape;
    const auto vars = dkp::autodiff::to_vars(tape, params, true);
    f.model->elbo(vars, f.X, f.y, 40.0, samples, 1.0, noise);
    return tape.chol_stats().factorisations;
  };
  dkp::random::Stream n1(3), m1(3);
  const auto one = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, S, 1.0, n1, 1, true);
  CHECK(one.chol.factorisations > 0);
  CHECK(one.chol.factorisations == on_tape(S, m1));
  dkp::random::Stream n2(3);
  const auto two = tr::elbo_gradient(*f.model, params, f.X, f.y, 40.0, S, 1.0, n2, 2, true);
  dkp::random::Stream parent(3);
  size_t want = 0;
  for (size_t g = 0; g < 2; ++g) {
    dkp::random::Stream s = parent.child("sample-group", g);
    want += on_tape(S / 2, s);
  }
  CHECK(two.chol.factorisations == want);
  CHECK(two.chol.factorisations > one.chol.factorisations);  // the shared layer once per group

  // Predictions likewise, and training sums its steps (the count of a step does not depend on
  // the parameters here).
  dkp::random::Stream p1(5), p2(5);
  const auto pred = tr::predict(*f.model, params, f.X, S, p1, 2);
  size_t pred_want = 0;
  for (size_t g = 0; g < 2; ++g) {
    dkp::random::Stream s = p2.child("sample-group", g);
    pred_want += f.model->predict(params, f.X, S / 2, s).chol.factorisations;
  }
  CHECK(pred.chol.factorisations == pred_want);
  CHECK(pred_want > 0);
  auto opt = options(9);
  opt.samples = S;
  opt.batch = 0;
  const auto rep = tr::train(*f.model, f.X, f.y, opt, dkp::random::Stream(2));
  CHECK(rep.chol.factorisations == 9 * one.chol.factorisations);
  CHECK(rep.chol.jittered == 0);
  // The final ELBO's repeats add theirs.
  const auto er =
      tr::estimate_elbo_repeated(*f.model, params, f.X, f.y, S, 3, dkp::random::Stream(6), "e");
  CHECK(er.chol.factorisations == 3 * one.chol.factorisations);
}

TEST_CASE("a deterministic ELBO is computed once whatever the thread count") {
  Fixture f;
  dkp::models::SgpConfig sc;
  sc.num_inducing = 5;
  dkp::random::Stream init(3);
  const dkp::models::SgpModel sgp(sc, f.X, init);
  REQUIRE(sgp.deterministic_elbo());
  dkp::random::Stream a(5), b(5);
  const auto one =
      tr::elbo_gradient(sgp, sgp.initial_parameters(), f.X, f.y, 40.0, 4, 1.0, a, 1, true);
  const auto two =
      tr::elbo_gradient(sgp, sgp.initial_parameters(), f.X, f.y, 40.0, 4, 1.0, b, 2, true);
  CHECK(one.elbo == two.elbo);
  for (const auto& [name, g] : one.grad)
    CHECK(arma::approx_equal(g, two.grad.at(name), "absdiff", 0.0));
  // One evaluation's factorisations, not one per thread.
  CHECK(two.chol.factorisations == one.chol.factorisations);
}
