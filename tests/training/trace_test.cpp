// The training trace (training/trace.hpp): the CSV round trip, its errors, and the trainer's rows:
// every N steps and the last, equal to the progress callback's values, byte-identical after an
// interruption and resume, rows past the checkpoint recomputed, an old run's file removed.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "models/gi_dgp.hpp"
#include "small_model.hpp"
#include "test_support.hpp"
#include "training/trace.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace tr = dkp::training;

namespace {

struct Fixture : dkp::test::SmallGiDgp {
  Fixture() : SmallGiDgp(21, 22) {}
};

tr::TrainOptions options(size_t steps, const std::filesystem::path& dir) {
  tr::TrainOptions o;
  o.steps = steps;
  o.lr = tr::LrSchedule::steps(0.02, {{10, 0.01}});
  o.kl = tr::KlAnnealing(6);
  o.samples = 2;
  o.batch = 12;
  o.log_every = 0;
  o.checkpoint_every = 5;
  o.trace_every = 3;
  o.trace_path = dir / "trace.csv";
  return o;
}

}  // namespace

TEST_CASE("trace CSV round-trips every double exactly") {
  const double awkward[] = {0.1,
                            -1.0 / 3.0,
                            std::nextafter(1.0, 2.0),
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max(),
                            -0.0,
                            1e-300};
  std::vector<tr::TraceRow> rows;
  uint64_t step = 1;
  for (double a : awkward) rows.push_back({step++ * 7, a, -a, a * 3.0, 0.5, a / 7.0});
  const std::string text = tr::trace_csv(rows);
  CHECK(text.substr(0, text.find('\n')) == tr::kTraceHeader);
  const auto back = tr::parse_trace_csv(text, "t");
  REQUIRE(back.size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(back[i].step == rows[i].step);
    const double a[] = {rows[i].elbo, rows[i].expected_loglik, rows[i].kl, rows[i].kl_weight,
                        rows[i].lr};
    const double b[] = {back[i].elbo, back[i].expected_loglik, back[i].kl, back[i].kl_weight,
                        back[i].lr};
    for (size_t k = 0; k < 5; ++k) {
      CHECK(std::signbit(a[k]) == std::signbit(b[k]));
      CHECK(a[k] == b[k]);
    }
  }
  CHECK(tr::parse_trace_csv(tr::trace_csv({}), "t").empty());
}

TEST_CASE("a malformed trace is an error naming the file and line") {
  const std::string h = std::string(tr::kTraceHeader) + "\n";
  auto err = [](const std::string& text, const char* what) {
    CAPTURE(text);
    CHECK_THROWS_WITH_AS(tr::parse_trace_csv(text, "f.csv"), doctest::Contains(what),
                         dkp::DataError);
  };
  err("", "empty trace");
  err("step,elbo\n1,2\n", "f.csv:1: header");
  err(h + "1,2,3,4,5\n", "f.csv:2: 5 fields");
  err(h + "1,2,3,4,5,6,7\n", "7 fields");
  err(h + "x,2,3,4,5,6\n", "step is 'x'");
  err(h + "-1,2,3,4,5,6\n", "step is '-1'");
  err(h + "1,2,3,zz,5,6\n", "field 4 is 'zz'");
  err(h + "1,2,3,4,5,\n", "field 6 is ''");
  err(h + "5,1,1,1,1,1\n5,1,1,1,1,1\n", "f.csv:3: step 5 does not follow step 5");
}

TEST_CASE("the trainer's trace: rows every N steps and at the last, the progress values") {
  Fixture f;
  const auto dir = dkp::test::temp_dir("trace_rows");
  const auto opt = options(17, dir);
  std::vector<tr::StepInfo> seen;
  auto watch = [&](const tr::StepInfo& s, const tr::TrainOptions&) { seen.push_back(s); };
  tr::train(*f.model, f.X, f.y, opt, dkp::random::Stream(4), watch);
  const auto rows = tr::parse_trace_csv(dkp::util::read_file(opt.trace_path), "trace");
  const std::vector<uint64_t> want = {3, 6, 9, 12, 15, 17};
  REQUIRE(rows.size() == want.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    CHECK(rows[i].step == want[i]);
    const tr::StepInfo& s = seen.at(rows[i].step - 1);
    CHECK(rows[i].elbo == s.elbo);
    CHECK(rows[i].expected_loglik == s.expected_loglik);
    CHECK(rows[i].kl == s.kl);
    CHECK(rows[i].kl_weight == s.kl_weight);
    CHECK(rows[i].lr == s.lr);
    CHECK(rows[i].elbo == doctest::Approx(s.expected_loglik - s.kl_weight * s.kl));
  }
  CHECK(rows[0].kl_weight == doctest::Approx(2.0 / 6.0));  // step index 2 of the annealing
  CHECK(rows[3].lr == 0.01);
}

TEST_CASE("an interrupted and resumed run writes the same trace, byte for byte") {
  Fixture f;
  const dkp::random::Stream run(8);
  const auto d1 = dkp::test::temp_dir("trace_straight");
  const auto d2 = dkp::test::temp_dir("trace_resumed");
  auto straight = options(22, d1);
  straight.checkpoint_path = d1 / "checkpoint.bin";
  tr::train(*f.model, f.X, f.y, straight, run);

  auto opt = options(22, d2);
  opt.checkpoint_path = d2 / "checkpoint.bin";
  auto stop_at_13 = [](const tr::StepInfo& s, const tr::TrainOptions&) {
    if (s.step == 13) tr::stop_requested().store(true);
  };
  CHECK_THROWS_AS(tr::train(*f.model, f.X, f.y, opt, run, stop_at_13), tr::Interrupted);
  tr::stop_requested().store(false);
  const auto partial = tr::parse_trace_csv(dkp::util::read_file(opt.trace_path), "partial");
  REQUIRE(partial.size() == 4);  // 3, 6, 9, 12: written with the step-13 checkpoint
  CHECK(partial.back().step == 12);
  // A row past the checkpoint (as if the trace had been written and the checkpoint not) is
  // dropped and recomputed.
  auto extra = partial;
  extra.push_back({14, 123.0, 0.0, 0.0, 1.0, 0.02});
  dkp::util::write_file_atomic(opt.trace_path, tr::trace_csv(extra));
  tr::train(*f.model, f.X, f.y, opt, run);
  CHECK(dkp::util::read_file(opt.trace_path) == dkp::util::read_file(straight.trace_path));
}

TEST_CASE("a fresh run replaces another run's trace; no trace without a period") {
  Fixture f;
  const auto dir = dkp::test::temp_dir("trace_fresh");
  auto opt = options(4, dir);
  dkp::util::write_file_atomic(opt.trace_path, "old run\n");
  // Gone before the first row is written (a run killed before its first checkpoint leaves no
  // other run's trace beside its own manifest).
  bool gone_at_start = false;
  auto look = [&](const tr::StepInfo& s, const tr::TrainOptions& o) {
    if (s.step == 1) gone_at_start = !std::filesystem::exists(o.trace_path);
  };
  tr::train(*f.model, f.X, f.y, opt, dkp::random::Stream(3), look);
  CHECK(gone_at_start);
  const auto rows = tr::parse_trace_csv(dkp::util::read_file(opt.trace_path), "trace");
  REQUIRE(rows.size() == 2);  // steps 3 and 4
  CHECK(rows[1].step == 4);

  const auto none = dkp::test::temp_dir("trace_none");
  opt = options(4, none);
  opt.trace_every = 0;
  tr::train(*f.model, f.X, f.y, opt, dkp::random::Stream(3));
  CHECK_FALSE(std::filesystem::exists(opt.trace_path));
}

TEST_CASE("automatic trace period: every 10 steps, coarser only beyond 1000 rows") {
  CHECK(tr::auto_trace_every(0) == 10);
  CHECK(tr::auto_trace_every(800) == 10);
  CHECK(tr::auto_trace_every(10000) == 10);  // exactly 1000 rows
  CHECK(tr::auto_trace_every(10001) == 20);
  CHECK(tr::auto_trace_every(20000) == 20);  // the A-GW protocol: 1000 rows
  CHECK(tr::auto_trace_every(25000) == 30);
  for (uint64_t steps : {1u, 999u, 5000u, 8000u, 20000u, 123457u}) {
    const uint64_t every = tr::auto_trace_every(steps);
    CHECK(every % 10 == 0);
    CHECK(steps / every <= tr::kTraceMaxRows);
  }
}

TEST_CASE("elbo_tail_mean: the last fraction's mean, a batch-means standard error, and when none") {
  // 40 rows at steps 10, 20, ..., 400; the last half (steps 210-400) are 20 rows in 10 batches of
  // 2: rows 2b and 2b + 1 of the window hold b and b + 1, so batch b's mean is b + 0.5.
  std::vector<tr::TraceRow> rows;
  for (uint64_t i = 1; i <= 40; ++i) {
    tr::TraceRow r;
    r.step = 10 * i;
    r.kl_weight = 1.0;
    const uint64_t w = i > 20 ? i - 21 : 0;  // position in the window
    r.elbo = i > 20 ? static_cast<double>(w / 2 + w % 2) : -100.0;
    rows.push_back(r);
  }
  const auto t = tr::elbo_tail_mean(rows, 400, 0.5, 10);
  REQUIRE(t);
  CHECK(t->rows == 20);
  CHECK(t->mean == doctest::Approx(5.0));  // the mean of b + 0.5, b = 0..9
  // sd of 0.5, 1.5, ..., 9.5 is sqrt(sum (b - 4.5)^2 / 9) = sqrt(82.5 / 9); se = sd / sqrt(10).
  CHECK(t->se == doctest::Approx(std::sqrt(82.5 / 9.0) / std::sqrt(10.0)));
  // The window excludes step 200 exactly (step > (1 - fraction) steps).
  CHECK(tr::elbo_tail_mean(rows, 400, 0.5, 2)->rows == 20);

  SUBCASE("a trace that stops short of the run's steps (interrupted) has none") {
    CHECK_FALSE(tr::elbo_tail_mean(rows, 410, 0.5, 10));
  }
  SUBCASE("a KL weight other than 1 in the window has none") {
    rows[30].kl_weight = 0.9;
    CHECK_FALSE(tr::elbo_tail_mean(rows, 400, 0.5, 10));
    rows[30].kl_weight = 1.0;
    rows[5].kl_weight = 0.1;  // outside the window: ignored
    CHECK(tr::elbo_tail_mean(rows, 400, 0.5, 10));
  }
  SUBCASE("fewer than 2 rows a batch, or fewer than 2 batches, has none") {
    CHECK_FALSE(tr::elbo_tail_mean(rows, 400, 0.5, 11));
    CHECK_FALSE(tr::elbo_tail_mean(rows, 400, 0.5, 1));
    CHECK_FALSE(tr::elbo_tail_mean({}, 400, 0.5, 10));
  }
}
