// The compositional toy study (experiments/toy_study.hpp, `dkp toy`): the same numbers for any
// number of jobs, a staged beta schedule equal to one run when beta does not change and moving
// only the inducing-locations trials when it does, Figure 5's samples for trial 0 only, and the
// option checks.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "experiments/toy_study.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;

namespace {

ToyStudyOptions small(const std::string& scratch) {
  ToyStudyOptions o;
  o.trials = 2;
  o.steps = 30;
  o.samples = 2;
  o.points = 20;
  o.elbo_samples = 8;
  o.var_samples = 40;
  o.figure_samples = 2;
  o.scratch = dkp::test::temp_dir(scratch);
  return o;
}

// Every number of two studies, bit for bit (timings aside).
void check_same(const ToyStudy& a, const ToyStudy& b) {
  REQUIRE(a.trials.size() == b.trials.size());
  for (size_t i = 0; i < a.trials.size(); ++i) {
    const ToyTrial& x = a.trials[i];
    const ToyTrial& y = b.trials[i];
    INFO(x.posterior << " trial " << x.trial);
    CHECK(x.posterior == y.posterior);
    CHECK(x.trial == y.trial);
    CHECK(x.elbo == y.elbo);
    CHECK(x.var_at_0 == y.var_at_0);
    REQUIRE(x.figure.size() == y.figure.size());
    for (size_t l = 0; l < x.figure.size(); ++l)
      CHECK(arma::approx_equal(x.figure[l], y.figure[l], "absdiff", 0.0));
  }
}

}  // namespace

TEST_CASE("toy study: trials, Figure 5 samples, and the same numbers for any number of jobs") {
  ToyStudyOptions o = small("toy-study-jobs");
  const ToyStudy one = run_toy_study(o);
  CHECK(one.data.X.n_rows == 20);
  CHECK(one.grid.n_elem == 101);
  REQUIRE(one.trials.size() == 6);  // 3 posteriors x 2 trials, posterior-major
  CHECK(one.trials[0].posterior == "dsvi");
  CHECK(one.trials[3].posterior == "jointly-gaussian");
  CHECK(one.trials[5].posterior == "inducing-locations");
  CHECK(one.trials[5].trial == 1);
  for (const auto& t : one.trials) {
    INFO(t.posterior << " trial " << t.trial);
    CHECK(std::isfinite(t.elbo));
    REQUIRE(t.var_at_0.size() == 2);
    CHECK(t.var_at_0[0] > 0.0);
    CHECK(t.var_at_0[1] > 0.0);
    if (t.trial == 0) {
      REQUIRE(t.figure.size() == 3);  // f1, f2, the composition's mean
      CHECK(t.figure[0].n_rows == 101);
      CHECK(t.figure[0].n_cols == 2);
    } else {
      CHECK(t.figure.empty());
    }
  }
  // Trials differ from one another.
  CHECK(one.trials[0].elbo != one.trials[1].elbo);
  o.jobs = 2;
  check_same(one, run_toy_study(o));
}

TEST_CASE("toy study: a beta schedule trains in stages from checkpoints") {
  ToyStudyOptions o = small("toy-study-beta");
  o.posteriors = {"dsvi", "inducing-locations"};
  o.trials = 1;
  const ToyStudy constant = run_toy_study(o);
  // Two stages of the same beta: the second trains on from the first's checkpoint (parameters
  // and Adam state), so the result is that of one uninterrupted run.
  o.beta_schedule = {{0, 1e8}, {17, 1e8}};
  check_same(constant, run_toy_study(o));
  CHECK(fs::is_empty(o.scratch));  // the stage checkpoint is removed
  // Another beta in the first stage moves the inducing-locations trial only.
  o.beta_schedule = {{0, 1e2}, {17, 1e8}};
  const ToyStudy staged = run_toy_study(o);
  CHECK(staged.trials[0].elbo == constant.trials[0].elbo);
  CHECK(staged.trials[0].var_at_0 == constant.trials[0].var_at_0);
  CHECK(staged.trials[1].elbo != constant.trials[1].elbo);
}

TEST_CASE("toy study: impossible options are ConfigErrors") {
  const ToyStudyOptions good = small("toy-study-errors");
  auto error_of = [](const ToyStudyOptions& o) -> std::string {
    try {
      run_toy_study(o);
    } catch (const dkp::ConfigError& e) {
      return e.what();
    }
    return "";
  };
  ToyStudyOptions o = good;
  o.posteriors = {"dsvi", "mean-field"};
  CHECK(error_of(o).find("posterior 'mean-field'") != std::string::npos);
  o = good;
  o.points = 1;
  CHECK(error_of(o).find("points and var_samples at least 2") != std::string::npos);
  o = good;
  o.noise_std = 0.0;
  CHECK(error_of(o).find("must be positive") != std::string::npos);
  o = good;
  o.beta_schedule = {{5, 1e8}};
  CHECK(error_of(o).find("must start at step 0") != std::string::npos);
  o = good;
  o.beta_schedule = {{0, 1e2}, {30, 1e8}};  // a change at the last step would never train
  CHECK(error_of(o).find("not before the last step 30") != std::string::npos);
  o = good;
  o.beta_schedule = {{0, 1e2}, {10, -1.0}};
  CHECK(error_of(o).find("must be positive") != std::string::npos);
}
