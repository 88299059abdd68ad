// The cost estimate of `dkp grid plan --estimate` (lib/experiments/estimate.hpp): dataset shapes,
// cost keys, stored timings, the calibration's extrapolation and its use, the wall time of cells
// on many cores.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "committed_grids.hpp"
#include "data/mnist.hpp"
#include "data/standardise.hpp"
#include "data/toy.hpp"
#include "data/uci.hpp"
#include "experiments/estimate.hpp"
#include "experiments/grid.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;

namespace {

// A grid of `models` on the given datasets and splits (steps, batch and inducing as given).
Grid small_grid(const std::string& datasets, const std::string& splits, long steps = 1000,
                long batch = 10000,
                const std::string& models = "[{model: dgp, inference: global-inducing}]") {
  return parse_grid(fmt::format("name: est\nfamily: generic\nprotocol:\n  steps: {}\n"
                                "  lr_schedule: [[0, 0.01]]\n  kl_anneal: 0\n  train_samples: 2\n"
                                "  test_samples: 20\n  inducing: 10\n  batch: {}\n  kernel: se\n"
                                "  seed: 0\naxes:\n  datasets: [{}]\n  splits: {}\n"
                                "  depths: [2, 3]\n  models: {}\n",
                                steps, batch, datasets, splits, models),
                    "est.yaml");
}

const RunSpec& cell_of(const Grid& g, const std::string& dataset, int split, int depth) {
  for (const auto& c : g.cells) {
    if (c.dataset == dataset && c.split == split && c.depth == depth) return c;
  }
  FAIL("no such cell");
  return g.cells.front();
}

// A done cell as `dkp run` leaves it: manifest.json with the canonical configuration, result.json
// with the timings.
void store_cell(const fs::path& root, const RunSpec& c, double step_s, double predict_s) {
  const fs::path dir = c.run_dir(root);
  std::string canonical;
  for (char ch : c.canonical()) canonical += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  dkp::util::write_file_atomic(dir / "manifest.json",
                               fmt::format("{{\"config_hash\": \"{}\", \"canonical_config\": "
                                           "\"{}\"}}\n",
                                           c.hash(), canonical));
  dkp::util::write_file_atomic(
      dir / "result.json",
      fmt::format("{{\"config_hash\": \"{}\", \"test_ll\": -1.0, \"train_s\": {}, \"step_s\": {}, "
                  "\"predict_s\": {}, \"resumed_from_step\": 0}}\n",
                  c.hash(), step_s * double(c.protocol.steps), step_s, predict_s));
}

// A calibrator that costs nothing: step time 1 ms + 0.01 ms per batch point, prediction 5 ms;
// counts its calls.
struct FakeCalibrator {
  int* calls;
  Calibration operator()(const CalibrationRequest& r) const {
    ++*calls;
    Calibration c;
    c.batches = r.batches;
    for (size_t b : r.batches) c.step_s.push_back(1e-3 + 1e-5 * double(b));
    c.predict_points = {r.predict_points};
    c.predict_samples = r.predict_samples;
    c.predict_s = {5e-3};
    return c;
  }
};

// A calibration of `r` with the same step time at every batch size and no prediction; `slow` as
// Calibration::slow (timed with one sample).
Calibration flat_calibration(const CalibrationRequest& r, double step_s, bool slow = false) {
  Calibration c;
  c.batches = r.batches;
  c.step_s.assign(r.batches.size(), step_s);
  c.slow = slow;
  if (slow) c.samples_timed = 1;
  return c;
}

}  // namespace

TEST_CASE("estimate: dataset shapes agree with the data and its classes") {
  for (const char* name : {"boston", "concrete", "energy", "kin8nm", "naval", "power", "protein",
                           "wine", "yacht", "mnist", "rectangles", "cifar10"}) {
    const auto s = dataset_shape(name);
    REQUIRE(s.has_value());
    CHECK(s->n_train > 0);
    CHECK(s->n_test > 0);
    CHECK(s->features > 0);
    CHECK(s->classes == dkp::data::dataset_classes(name));
  }
  CHECK_FALSE(dataset_shape("no-such-set").has_value());
  // The toy is generated, so its shape is checked against its data here, without a data root.
  const auto toy = dkp::data::toy_split(0);
  const auto t = dataset_shape("toy");
  REQUIRE(t.has_value());
  CHECK(t->n_train == toy.X_train.n_rows);
  CHECK(t->n_test == toy.X_test.n_rows);
  CHECK(t->features == toy.X_train.n_cols);
  CHECK(t->classes == 0);
  const fs::path root = dkp::test::shared_data_root();
  if (root.empty()) return;
  for (const auto& info : dkp::data::uci_catalogue()) {
    if (info.name == "protein") continue;  // 45730 rows: checked by its size below, not loaded
    const auto ds = dkp::data::load_uci(root, info.name);
    const auto split = dkp::data::make_regression_split(ds, 0);
    const auto s = dataset_shape(info.name);
    INFO(info.name);
    CHECK(s->n_train == split.X_train.n_rows);
    CHECK(s->n_test == split.X_test.n_rows);
    CHECK(s->features == split.X_train.n_cols);
  }
}

TEST_CASE("estimate: every dataset of the grids in experiments/ has a shape") {
  // plan --estimate stops at a cell it cannot shape, so `make reproduce-tables` would start
  // without its estimate.
  size_t cells = 0;
  for (const auto& [file, g] : dkp::test::committed_grids()) {
    for (const RunSpec& c : g.cells) {
      INFO(file, " ", g.profile, " ", c.label());
      CHECK(dataset_shape(c.dataset).has_value());
      ++cells;
    }
  }
  CHECK(cells > 4000);
}

TEST_CASE("estimate: hidden widths and cost keys") {
  CHECK(resolve_width("input", 13) == 13);
  CHECK(resolve_width("min(input,30)", 784) == 30);
  CHECK(resolve_width("min(input,30)", 8) == 8);
  CHECK(resolve_width("2", 784) == 2);
  CHECK_THROWS_AS(resolve_width("wide", 8), dkp::ConfigError);
  CHECK_THROWS_AS(resolve_width("0", 8), dkp::ConfigError);

  const Grid g = small_grid("boston, yacht", "[0, 1]");
  const RunSpec& a = cell_of(g, "boston", 0, 2);
  const RunSpec& b = cell_of(g, "boston", 1, 2);
  CHECK(cost_key(a) == cost_key(b));  // another split: the same work
  CHECK(cost_key(a) != cost_key(cell_of(g, "boston", 0, 3)));
  CHECK(cost_key(a) != cost_key(cell_of(g, "yacht", 0, 2)));
  RunSpec longer = a;
  longer.protocol.steps = 99;
  longer.protocol.seed = 7;
  CHECK(cost_key(longer) == cost_key(a));
  for (auto change :
       {+[](RunSpec& s) { s.protocol.batch = 50; }, +[](RunSpec& s) { s.protocol.inducing = 50; },
        +[](RunSpec& s) { s.protocol.train_samples = 1; },
        +[](RunSpec& s) { s.options.set_switch("hidden_ard", true); }}) {
    RunSpec other = a;
    change(other);
    CHECK(cost_key(other) != cost_key(a));
  }
}

TEST_CASE("estimate: calibration batches and the step time between and beyond them") {
  CHECK(calibration_batches(277) == std::vector<size_t>{277});
  CHECK(calibration_batches(400) == std::vector<size_t>{400});
  CHECK(calibration_batches(10000) == std::vector<size_t>{50, 400});
  Calibration c;
  c.batches = {50, 400};
  c.step_s = {0.010, 0.045};  // 5 ms + 0.1 ms per point
  CHECK(step_seconds_at(c, 50) == doctest::Approx(0.010));
  CHECK(step_seconds_at(c, 7373) == doctest::Approx(0.005 + 0.7373));
  c.step_s = {0.010, 0.009};  // noise: a smaller time at the larger batch gives a flat line
  CHECK(step_seconds_at(c, 7373) == doctest::Approx(0.010));
  Calibration one;
  one.batches = {277};
  one.step_s = {0.02};
  CHECK(step_seconds_at(one, 277) == doctest::Approx(0.02));
  CHECK(line_at({}, {}, 5) == 0.0);
  // The prediction: 10 ms + 0.1 ms per point with 10 samples, asked for 1000 points x 100.
  one.predict_points = {20, 200};
  one.predict_s = {0.012, 0.030};
  one.predict_samples = 10;
  CHECK(predict_seconds_at(one, 1000, 100) == doctest::Approx((0.010 + 0.1) * 10.0));
  CHECK(predict_seconds_at(one, 20, 10) == doctest::Approx(0.012));
  one.predict_samples = 0;  // no prediction timed
  CHECK(predict_seconds_at(one, 1000, 100) == 0.0);
}

TEST_CASE("estimate: stored timings of the same cost are used, others calibrated once") {
  dkp::test::QuietLog quiet;
  const fs::path root = dkp::test::temp_dir("estimate-store");
  const Grid g = small_grid("boston, yacht", "[0, 1, 2]", 1000);
  // boston depth 2: splits 0 and 1 stored (8 ms and 12 ms a step); split 2 pending.
  store_cell(root, cell_of(g, "boston", 0, 2), 0.008, 0.2);
  store_cell(root, cell_of(g, "boston", 1, 2), 0.012, 0.4);
  // Not timings: a result of another hash, and a cell without its manifest.
  const RunSpec& y0 = cell_of(g, "yacht", 0, 2);
  store_cell(root, y0, 0.5, 0.1);
  dkp::util::write_file_atomic(y0.run_dir(root) / "result.json",
                               "{\"config_hash\": \"0000000000000000\", \"step_s\": 0.5}\n");
  const RunSpec& y1 = cell_of(g, "yacht", 1, 2);
  store_cell(root, y1, 0.5, 0.1);
  fs::remove(y1.run_dir(root) / "manifest.json");

  const auto stored = read_stored_timings(root);
  REQUIRE(stored.size() == 2);
  CHECK(stored[0].spec.grid == "est");
  CHECK(stored[0].step_s > 0.0);

  int calls = 0;
  EstimatorOptions opt;
  opt.calibrator = FakeCalibrator{&calls};
  Estimator est(stored, opt);
  const CellEstimate b2 = est.estimate(cell_of(g, "boston", 2, 2));
  CHECK(b2.source == EstimateSource::stored);
  CHECK(b2.stored_cells == 2);
  CHECK(b2.step_s == doctest::Approx(0.008));  // the smaller of 8 and 12 ms
  CHECK(b2.train_s == doctest::Approx(8.0));   // 1000 steps
  CHECK(b2.predict_s == doctest::Approx(0.2));
  // Full batch (455 points): the final ELBO is 10 forward passes of half a step.
  CHECK(b2.final_elbo_s == doctest::Approx(10 * 0.5 * 0.008));
  CHECK(b2.total_s() == doctest::Approx(8.0 + 0.04 + 0.2));
  CHECK(calls == 0);

  // Without split 0's own timing, split 1's alone.
  const CellEstimate b0 =
      est.estimate(cell_of(g, "boston", 0, 2), cell_of(g, "boston", 0, 2).hash());
  CHECK(b0.source == EstimateSource::stored);
  CHECK(b0.stored_cells == 1);
  CHECK(b0.step_s == doctest::Approx(0.012));
  REQUIRE(est.stored(cell_of(g, "boston", 1, 2).hash()) != nullptr);
  CHECK(est.stored(cell_of(g, "boston", 1, 2).hash())->step_s == doctest::Approx(0.012));

  // Yacht has no usable timing: calibrated, once for the three splits of a depth (depth 3: from
  // the calibrations at depths 2 and 5).
  for (int split : {0, 1, 2}) {
    const CellEstimate y = est.estimate(cell_of(g, "yacht", split, 3));
    CHECK(y.source == EstimateSource::calibrated);
    CHECK(y.batch == 277);
    CHECK(y.step_s == doctest::Approx(1e-3 + 1e-5 * 277));
    // 20 test samples, 31 test points: the fake's 5 ms for 31 points x 10 samples, doubled.
    CHECK(y.predict_s == doctest::Approx(5e-3 * 2.0));
  }
  CHECK(calls == 2);
  CHECK(est.calibrations() == 2);
  est.estimate(cell_of(g, "yacht", 0, 2));  // calibrated already
  CHECK(calls == 2);

  // A batch beyond the calibration: the line through its two points.
  const Grid big = small_grid("kin8nm", "[0]", 1000);
  const CellEstimate k = est.estimate(cell_of(big, "kin8nm", 0, 2));
  CHECK(k.batch == 7373);
  CHECK(k.step_s == doctest::Approx(1e-3 + 1e-5 * 7373));

  // The whole grid: boston's pending cells from the store, the rest calibrated.
  std::vector<RunSpec> pending;
  for (const auto& c : g.cells) {
    if (!est.stored(c.hash())) pending.push_back(c);
  }
  const GridEstimate ge = estimate_cells(est, pending, g.cells.size());
  CHECK(ge.cells == g.cells.size());
  CHECK(ge.pending == pending.size());
  CHECK(ge.stored == 1);  // boston split 2 depth 2
  CHECK(ge.calibrated == pending.size() - 1);
  double sum = 0.0, longest = 0.0;
  for (const auto& e : ge.estimates) {
    sum += e.total_s();
    longest = std::max(longest, e.total_s());
  }
  CHECK(ge.cpu_s == doctest::Approx(sum));
  CHECK(ge.longest_s == doctest::Approx(longest));
}

TEST_CASE("estimate: an unknown dataset is an error naming it") {
  Grid g = small_grid("boston", "[0]");
  RunSpec c = g.cells.front();
  c.dataset = "atlantis";
  int calls = 0;
  EstimatorOptions opt;
  opt.calibrator = FakeCalibrator{&calls};
  Estimator est({}, opt);
  try {
    est.estimate(c);
    FAIL("no error");
  } catch (const dkp::ConfigError& e) {
    CHECK(std::string(e.what()).find("atlantis") != std::string::npos);
  }
}

TEST_CASE("estimate: a failed calibration names the cell") {
  const Grid g = small_grid("boston", "[0]");
  EstimatorOptions opt;
  opt.calibrator = [](const CalibrationRequest&) -> Calibration {
    throw dkp::Error("Cholesky failed");
  };
  Estimator est({}, opt);
  try {
    est.estimate(g.cells.front());
    FAIL("no error");
  } catch (const dkp::Error& e) {
    const std::string what = e.what();
    CHECK(what.find(g.cells.front().hash()) != std::string::npos);
    CHECK(what.find("Cholesky failed") != std::string::npos);
  }
}

TEST_CASE("estimate: wall time of cells on many cores") {
  CHECK(makespan({}, 4) == 0.0);
  CHECK(makespan({1, 2, 3}, 1) == doctest::Approx(6.0));
  CHECK(makespan({1, 2, 3}, 8) == doctest::Approx(3.0));
  // Longest first onto the least loaded core: 3 3 | 2 2 | 2 -> 7 (the optimum is 6).
  CHECK(makespan({2, 3, 2, 3, 2}, 2) == doctest::Approx(7.0));
  std::vector<double> many(1000, 10.0);
  CHECK(makespan(many, 100) == doctest::Approx(100.0));
  many.push_back(500.0);
  CHECK(makespan(many, 100) == doctest::Approx(500.0));
  CHECK(makespan({5}, 0) == doctest::Approx(5.0));  // 0 slots: one
}

TEST_CASE("estimate: formatted durations") {
  CHECK(format_hours(12) == "12 s");
  CHECK(format_hours(600) == "10 min");
  CHECK(format_hours(3.5 * 3600) == "3.5 h");
  CHECK(format_hours(10 * 86400) == "10.0 d");
}

TEST_CASE("estimate: a real calibration times steps and a prediction") {
  dkp::test::QuietLog quiet;
  // A small global-inducing DGP on boston's shape at two batch sizes.
  const Grid g = small_grid("boston", "[0]", 100, 10000);
  CalibrationRequest r;
  r.cell = cell_of(g, "boston", 0, 2);
  r.shape = *dataset_shape("boston");
  r.batches = {50, 400};
  r.predict_points = 20;
  r.predict_samples = 2;
  r.slow_step_s = 1e9;  // never slow, whatever the machine
  const Calibration c = calibrate(r);
  CHECK_FALSE(c.slow);
  CHECK(c.samples_timed == size_t(r.cell.protocol.train_samples));
  REQUIRE(c.step_s.size() == 2);
  CHECK(c.step_s[0] > 0.0);
  CHECK(c.step_s[1] > 0.0);
  CHECK(c.predict_points == std::vector<size_t>{20});  // 20 points or fewer: one size
  REQUIRE(c.predict_s.size() == 1);
  CHECK(c.predict_s[0] > 0.0);
  CHECK(c.predict_samples == 2);
  CHECK(c.seconds > 0.0);
  r.predict_points = 51;
  const Calibration c2 = calibrate(r);
  CHECK(c2.predict_points == std::vector<size_t>{20, 51});
  CHECK(c2.predict_s.size() == 2);
  // Slow (every probe is, with a bound of 0): one training sample, one step per batch size, the
  // step times scaled to the cell's samples, and one prediction size.
  r.slow_step_s = 0.0;
  const Calibration slow = calibrate(r);
  CHECK(slow.slow);
  CHECK(slow.samples_timed == 1);
  REQUIRE(slow.step_s.size() == 2);
  CHECK(slow.step_s[0] > 0.0);
  CHECK(slow.predict_points == std::vector<size_t>{51});
  // Classification on MNIST's shape (784 pixels, 10 classes) with the SGP, one batch size.
  const Grid m = parse_grid(
      "name: m\nfamily: generic\nprotocol:\n  steps: 10\n  lr_schedule: [[0, 0.01]]\n"
      "  kl_anneal: 0\n  train_samples: 1\n  test_samples: 2\n  inducing: 10\n  batch: 30\n"
      "  kernel: se\n  seed: 0\naxes:\n  datasets: [mnist]\n  splits: [0]\n  depths: [1]\n"
      "  models: [sgp]\n",
      "m.yaml");
  CalibrationRequest rm;
  rm.cell = m.cells.front();
  rm.shape = *dataset_shape("mnist");
  rm.batches = calibration_batches(30);
  const Calibration cm = calibrate(rm);
  REQUIRE(cm.step_s.size() == 1);
  CHECK(cm.step_s[0] > 0.0);
  CHECK(cm.predict_s.empty());  // no prediction asked for
  CHECK(predict_seconds_at(cm, 10000, 100) == 0.0);
}

TEST_CASE("estimate: a deep cell from the line through depths 2 and 5, two calibrations") {
  // The calibrator's step time is 1 ms + 2 ms per layer; its prediction 5 ms + 1 ms per layer.
  std::vector<int> depths;
  EstimatorOptions opt;
  opt.calibrator = [&](const CalibrationRequest& r) {
    depths.push_back(r.cell.depth);
    Calibration c = flat_calibration(r, 1e-3 + 2e-3 * r.cell.depth);
    c.predict_points = {r.predict_points};
    c.predict_samples = r.predict_samples;
    c.predict_s = {5e-3 + 1e-3 * r.cell.depth};
    return c;
  };
  Estimator est({}, opt);
  RunSpec c = small_grid("boston", "[0]").cells.front();
  c.depth = 5;
  // The prediction is scaled by the cell's test samples over those timed: that factor, once.
  const double scale = est.estimate(c).predict_s / 10e-3;
  for (int d : {64, 9, 30}) {
    c.depth = d;
    const CellEstimate e = est.estimate(c);
    CHECK(e.step_s == doctest::Approx(1e-3 + 2e-3 * d));
    CHECK(e.predict_s == doctest::Approx((5e-3 + 1e-3 * d) * scale));
  }
  CHECK(depths == std::vector<int>{5, 2});  // calibrated once each, for all four depths
  c.depth = 3;                              // between 2 and 5: the line too
  CHECK(est.estimate(c).step_s == doctest::Approx(7e-3));
  CHECK(depths == std::vector<int>{5, 2});
  c.depth = 1;  // a model not found slow: depth 1 calibrated itself
  est.estimate(c);
  CHECK(depths == std::vector<int>{5, 2, 1});
}

TEST_CASE("estimate: a slow model's depth 1 from the line through depths 2 and 5") {
  // As above (1 ms + 2 ms per layer), every calibration slow.
  std::vector<int> depths;
  EstimatorOptions opt;
  opt.calibrator = [&](const CalibrationRequest& r) {
    depths.push_back(r.cell.depth);
    return flat_calibration(r, 1e-3 + 2e-3 * r.cell.depth, true);
  };
  Estimator est({}, opt);
  RunSpec c = small_grid("boston", "[0]").cells.front();
  for (int d : {3, 4, 2, 5, 1}) {
    c.depth = d;
    CHECK(est.estimate(c).step_s == doctest::Approx(1e-3 + 2e-3 * d));
  }
  // Only depths 2 and 5 were calibrated: depths 3 and 4 come from the line as for every model,
  // depth 1 because the model is slow.
  CHECK(depths == std::vector<int>{2, 5});
  // Below depth 2 the line is held at depth/2 of depth 2's time: with 1 ms per layer at depth 2
  // and 10 ms at depth 5 (a line below 0 at depth 1), depth 1 costs 0.5 ms.
  opt.calibrator = [](const CalibrationRequest& r) {
    return flat_calibration(r, r.cell.depth == 2 ? 1e-3 : 1e-2, true);
  };
  // A grid's estimate takes depths 2 and 5 first: a slow model's depth-1 cells, listed first,
  // are never calibrated themselves; the estimates keep the cells' order.
  {
    std::vector<int> asked;
    EstimatorOptions o2;
    o2.calibrator = [&](const CalibrationRequest& r) {
      asked.push_back(r.cell.depth);
      return flat_calibration(r, 1e-3 * r.cell.depth, true);
    };
    Estimator e2({}, o2);
    std::vector<RunSpec> cells;
    for (int d : {1, 3, 2, 5}) {
      cells.push_back(c);
      cells.back().depth = d;
    }
    const GridEstimate ge = estimate_cells(e2, cells, cells.size());
    CHECK(asked == std::vector<int>{2, 5});
    REQUIRE(ge.estimates.size() == 4);
    CHECK(ge.estimates[0].step_s == doctest::Approx(1e-3));
    CHECK(ge.estimates[1].step_s == doctest::Approx(3e-3));
    CHECK(ge.estimates[3].step_s == doctest::Approx(5e-3));
  }
  Estimator steep({}, opt);
  c.depth = 2;
  steep.estimate(c);
  c.depth = 1;
  CHECK(steep.estimate(c).step_s == doctest::Approx(0.5e-3));
}

TEST_CASE("estimate: a calibration over the memory limit is timed with one sample, or skipped") {
  // yacht, depth 2, 10 samples, 100 inducing points, batch 277: the memory guard's bound of the
  // calibration's step is 2 M^2 x 2 layers + (M^2 + B M) x 10 samples x 2 layers doubles, about
  // 6.3 MB, and 0.9 MB with one sample.
  std::vector<bool> one_sample;
  EstimatorOptions opt;
  opt.calibrator = [&](const CalibrationRequest& r) {
    one_sample.push_back(r.one_sample);
    return flat_calibration(r, 1e-3);
  };
  RunSpec c = small_grid("yacht", "[0]").cells.front();
  c.depth = 2;
  c.protocol.train_samples = 10;
  c.protocol.inducing = 100;
  opt.memory_limit = uint64_t(1) << 30;  // plenty: the cell's samples
  Estimator roomy({}, opt);
  CHECK(roomy.estimate(c).not_estimated.empty());
  opt.memory_limit = uint64_t(8) << 20;  // 8 MB: above a quarter of it, one sample
  Estimator tight({}, opt);
  CHECK(tight.estimate(c).not_estimated.empty());
  opt.memory_limit = uint64_t(512) << 10;  // 0.5 MB: not even one sample
  Estimator none({}, opt);
  const CellEstimate e = none.estimate(c);
  CHECK(e.not_estimated.find("its calibration would need at least") != std::string::npos);
  CHECK(e.total_s() == 0.0);
  CHECK(none.calibrations() == 0);
  CHECK(one_sample == std::vector<bool>{false, true});
  const GridEstimate g = estimate_cells(none, {c}, 1);
  CHECK(g.not_estimated == 1);
  CHECK(g.calibrated == 0);
  CHECK(g.cpu_s == 0.0);
}
