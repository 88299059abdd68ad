// Training loop: the ELBO improves, the same seed gives identical parameters, an interrupted and
// resumed run is bit-identical to an uninterrupted one, and a non-finite ELBO is a clear error.
#include <doctest/doctest.h>

#include "models/gi_dgp.hpp"
#include "test_support.hpp"
#include "training/checkpoint.hpp"
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
  Fixture f;
  const dkp::random::Stream run(6);
  const auto dir = dkp::test::temp_dir("resume");
  auto opt = options(30);
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
  const auto resumed = tr::train(*f.model, f.X, f.y, opt, run);
  CHECK(resumed.resumed_from == 12);
  for (const auto& [name, v] : straight.params)
    CHECK(arma::approx_equal(v, resumed.params.at(name), "absdiff", 0.0));
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
