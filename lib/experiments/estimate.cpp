#include "experiments/estimate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <numeric>
#include <queue>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "data/datasets.hpp"
#include "data/toy.hpp"
#include "eval/metrics.hpp"
#include "experiments/memory_guard.hpp"
#include "experiments/store.hpp"
#include "models/factory.hpp"
#include "random/stream.hpp"
#include "training/mc.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The CPU seconds this thread has used: a calibration's steps are timed by them, so that other
// processes sharing the cores (a busy machine) do not inflate the step time.
double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Batch sizes of the calibration, and the largest batch calibrated directly.
constexpr size_t kBatchSmall = 50;
constexpr size_t kBatchLarge = 400;
// Depths calibrated directly; a deeper cell's times are extrapolated along the line through
// depths kDepthLow and kMaxCalibratedDepth (Estimator::estimate).
constexpr int kMaxCalibratedDepth = 5;
constexpr int kDepthLow = 2;
// A warm-up step longer than this (CPU seconds) is followed by one timed step, not three.
constexpr double kOneTimedStep = 0.05;
// The calibration's prediction: at most this many test points and samples, scaled up linearly.
constexpr size_t kPredictPoints = 200;
constexpr size_t kPredictSamples = 10;
constexpr size_t kPredictFew = 20;  // the smaller prediction of a calibration
// Final ELBO: a forward pass over the training set costs about this share of a training step on
// as many points.
constexpr double kForwardShare = 0.5;

// The model options that change a step's work, when not at their defaults.
std::string option_text(const RunSpec& c) {
  std::string s;
  for (const auto& [name, value] : c.options.set_values())
    if (models::option_decl(name).changes_cost) s += " " + name + "=" + value;
  return s;
}

// What a calibration depends on: the model and its shape, not the dataset's name.
std::string calibration_key(const CalibrationRequest& r) {
  const RunSpec& c = r.cell;
  std::string batches;
  for (size_t b : r.batches) batches += fmt::format("{},", b);
  return fmt::format(
      "{}/{}/{} d{} {} D={} W={} C={} M={} S={} B={} P={}x{}{}", c.model, c.inference, c.posterior,
      c.depth, c.kernel, r.shape.features, resolve_width(c.protocol.width, r.shape.features),
      r.shape.classes, std::min<size_t>(size_t(c.protocol.inducing), r.shape.n_train),
      c.protocol.train_samples, batches, r.predict_points, r.predict_samples, option_text(c));
}

// The final ELBO's estimates: `dkp run --elbo-repeats` (10) unless the model's ELBO draws nothing.
size_t elbo_repeats(const RunSpec& c) {
  const bool deterministic = c.model == "sgp" || (c.model == "dgp" && c.inference == "aep");
  return deterministic ? 1 : 10;
}

DatasetShape shape_of(const RunSpec& cell) {
  const auto shape = dataset_shape(cell.dataset);
  if (!shape) {
    throw ConfigError(fmt::format("cell {} ({}): no known shape for dataset '{}' to estimate it",
                                  cell.hash(), cell.label(), cell.dataset));
  }
  return *shape;
}

}  // namespace

std::optional<DatasetShape> dataset_shape(const std::string& dataset) {
  const auto d = data::find_dataset(dataset);  // the dataset table (data/datasets.hpp)
  if (!d) return std::nullopt;
  return DatasetShape{d->n_train, d->n_test, d->features, d->classes};
}

std::string cost_key(const RunSpec& c) {
  return fmt::format("{} {} d{} {} width={} M={} B={} S={}{}", c.dataset, c.model_label(), c.depth,
                     c.kernel, c.protocol.width, c.protocol.inducing, c.protocol.batch,
                     c.protocol.train_samples, option_text(c));
}

std::vector<StoredTiming> read_stored_timings(const fs::path& results_root) {
  std::vector<StoredTiming> out;
  for (const fs::path& dir : store_run_dirs(results_root)) {
    try {
      const std::optional<FinishedCell> cell = read_finished_cell(dir);
      if (!cell) continue;
      auto get = [&](const char* key) {
        const auto it = cell->values.find(key);
        return it == cell->values.end() ? 0.0 : it->second;
      };
      StoredTiming t;
      t.step_s = get("step_s");
      if (!(t.step_s > 0.0)) continue;
      t.spec = cell->spec;
      t.dir = dir;
      t.train_s = get("train_s");
      t.predict_s = get("predict_s");
      t.resumed_from_step = long(get("resumed_from_step"));
      out.push_back(std::move(t));
    } catch (const Error&) {
      // Not a consistent done cell (a malformed result): not a timing.
    }
  }
  return out;
}

std::vector<size_t> calibration_batches(size_t batch) {
  if (batch <= kBatchLarge) return {std::max<size_t>(batch, 1)};
  return {kBatchSmall, kBatchLarge};
}

double line_at(const std::vector<size_t>& xs, const std::vector<double>& ys, size_t x) {
  const size_t n = std::min(xs.size(), ys.size());
  if (n == 0) return 0.0;
  if (n == 1 || xs[0] == xs[1]) return ys[0];
  const double x1 = double(xs[0]), x2 = double(xs[1]);
  const double slope = std::max(0.0, (ys[1] - ys[0]) / (x2 - x1));
  const double fixed = std::max(0.0, ys[0] - slope * x1);
  return fixed + slope * double(x);
}

double step_seconds_at(const Calibration& c, size_t batch) {
  return line_at(c.batches, c.step_s, batch);
}

double predict_seconds_at(const Calibration& c, size_t points, size_t samples) {
  if (c.predict_samples == 0 || c.predict_s.empty()) return 0.0;
  return line_at(c.predict_points, c.predict_s, points) * double(samples) /
         double(c.predict_samples);
}

Calibration calibrate(const CalibrationRequest& r) {
  const auto t_start = Clock::now();
  const RunSpec& c = r.cell;
  const DatasetShape& shape = r.shape;
  if (r.batches.empty()) throw Error("calibrate: no batch size");
  const size_t features = std::max<size_t>(shape.features, 1);
  const size_t inducing = std::min<size_t>(size_t(c.protocol.inducing), shape.n_train);
  size_t rows = std::max<size_t>(*std::max_element(r.batches.begin(), r.batches.end()), inducing);
  rows = std::max<size_t>(rows, 2);

  // Synthetic data of the dataset's shape: standardised inputs (UCI) or pixels (images).
  random::Stream rng = random::Stream(c.protocol.seed).child("calibration", 0);
  const bool images = shape.classes > 0;
  const arma::mat X = images ? random::uniform_matrix(rng, rows, features)
                             : random::normal_matrix(rng, rows, features);
  arma::vec y(rows);
  for (size_t n = 0; n < rows; ++n) {
    y[n] = images ? double(n % shape.classes) : random::normal(rng);
  }

  // The model as a run builds it (run_setup.hpp make_run_model).
  const models::ModelSpec m =
      model_spec(c, resolve_width(c.protocol.width, features), shape.classes);
  random::Stream init = rng.child("init", 0);
  const auto model = models::make_model(m, X, y, init);
  const auto& params = model->initial_parameters();

  Calibration out;
  out.batches = r.batches;
  const size_t samples = size_t(std::max<long>(c.protocol.train_samples, 1));
  uint64_t draw = 0;
  auto step_at = [&](size_t batch, size_t s) {
    const size_t b = std::min(batch, rows);
    random::Stream noise = rng.child("noise", draw++);
    const arma::mat Xb = X.rows(0, b - 1);
    const arma::vec yb = y.subvec(0, b - 1);
    const double t0 = thread_cpu_seconds();
    training::elbo_gradient(*model, params, Xb, yb, double(shape.n_train), s, 1.0, noise, 1, true);
    return thread_cpu_seconds() - t0;
  };
  // The probe: one sample at the smallest batch. A model slow at the cell's samples (the
  // CIFAR-10 DIWP's 3072 x 3072 input layer: about 4 s and 1.4 GB a sample) is timed with one
  // sample and one step per batch size, the probe serving for the smallest, scaled to the cell's
  // samples, and predicts one size; with ten samples and a fast model's steps its calibration
  // took 238 s and 14 GB.
  const size_t smallest = *std::min_element(r.batches.begin(), r.batches.end());
  const double probe = step_at(smallest, 1);
  out.slow = r.one_sample || probe * double(samples) > r.slow_step_s;
  out.samples_timed = out.slow ? 1 : samples;
  // A slow model, or a step over a second: a smaller prediction below.
  bool long_step = out.slow;
  for (size_t batch : r.batches) {
    std::vector<double> times;
    if (out.slow) {
      times.push_back(batch == smallest ? probe : step_at(batch, 1));
    } else {
      // A warm-up step (it also allocates), then three timed ones (their median), or one when a
      // step takes over kOneTimedStep.
      const double warm = step_at(batch, samples);
      long_step = long_step || warm > 1.0;
      const int timed = warm > kOneTimedStep ? 1 : 3;
      for (int i = 0; i < timed; ++i) times.push_back(step_at(batch, samples));
    }
    out.step_s.push_back(median(times) * double(samples) / double(out.samples_timed));
  }
  // The prediction at two sizes (fewer points and samples for a slow model; scaled up by the
  // line through them), with its scores as `dkp run` times it.
  const size_t most = long_step ? std::min<size_t>(r.predict_points, 60) : r.predict_points;
  const size_t predict_samples =
      long_step ? std::min<size_t>(r.predict_samples, 2) : r.predict_samples;
  std::vector<size_t> sizes;
  if (most > kPredictFew && !out.slow) sizes.push_back(kPredictFew);
  if (most > 0) sizes.push_back(most);
  if (predict_samples > 0) {
    for (size_t points : sizes) {
      const arma::mat Xt = images ? random::uniform_matrix(rng, points, features)
                                  : random::normal_matrix(rng, points, features);
      random::Stream pr = rng.child("predict", points);
      const double t0 = thread_cpu_seconds();
      const models::Predictive pred = training::predict(*model, params, Xt, predict_samples, pr, 1);
      if (images) {
        arma::uvec labels(points);
        for (size_t n = 0; n < points; ++n) labels[n] = n % shape.classes;
        eval::classification_metrics(pred.mean, pred.var, shape.classes, labels, 1,
                                     pred.class_likelihood);
      } else {
        const arma::vec y_test = random::normal_matrix(rng, points, 1);
        eval::regression_metrics(pred.mean, pred.var, y_test, 1.0);
      }
      out.predict_points.push_back(points);
      out.predict_s.push_back(thread_cpu_seconds() - t0);
    }
    out.predict_samples = predict_samples;
  }
  out.seconds = seconds_since(t_start);
  return out;
}

Estimator::Estimator(std::vector<StoredTiming> stored, EstimatorOptions options)
    : stored_(std::move(stored)), options_(std::move(options)) {
  for (size_t i = 0; i < stored_.size(); ++i) {
    by_key_[cost_key(stored_[i].spec)].push_back(i);
    by_hash_.emplace(stored_[i].spec.hash(), i);
  }
}

const StoredTiming* Estimator::stored(const std::string& hash) const {
  const auto it = by_hash_.find(hash);
  return it == by_hash_.end() ? nullptr : &stored_[it->second];
}

namespace {

// A calibration the memory limit rules out (Estimator::estimate catches it).
struct NotEstimated : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace

double Estimator::calibration_seconds() const {
  double s = 0.0;
  for (const auto& [key, c] : calibrations_) s += c.seconds;
  return s;
}

CellEstimate Estimator::estimate(const RunSpec& cell, const std::string& exclude) {
  const DatasetShape shape = shape_of(cell);
  CellEstimate e;
  e.hash = cell.hash();
  e.label = cell.label();
  e.steps = cell.protocol.steps;
  e.batch = std::min<size_t>(size_t(std::max<long>(cell.protocol.batch, 1)), shape.n_train);
  const double test_samples = double(cell.protocol.test_samples);

  std::vector<double> steps, predicts;
  if (const auto it = by_key_.find(cost_key(cell)); it != by_key_.end()) {
    for (size_t i : it->second) {
      const StoredTiming& t = stored_[i];
      if (t.spec.hash() == exclude) continue;
      steps.push_back(t.step_s);
      const double ts = double(t.spec.protocol.test_samples);
      if (ts > 0) predicts.push_back(t.predict_s * test_samples / ts);
    }
  }
  if (!steps.empty()) {
    // The fastest: other work sharing the machine only ever slows a run down.
    e.source = EstimateSource::stored;
    e.stored_cells = steps.size();
    e.step_s = *std::min_element(steps.begin(), steps.end());
    e.predict_s = predicts.empty() ? 0.0 : *std::min_element(predicts.begin(), predicts.end());
  } else {
    // The calibration of the cell's model at `depth` (done once per calibration key).
    const auto request_at = [&](int depth) {
      CalibrationRequest r;
      r.cell = cell;
      r.cell.depth = depth;
      r.shape = shape;
      r.batches = calibration_batches(e.batch);
      r.predict_points = std::min(shape.n_test, kPredictPoints);
      r.predict_samples =
          std::min<size_t>(size_t(std::max<long>(cell.protocol.test_samples, 0)), kPredictSamples);
      return r;
    };
    // The model's shape, whatever its depth.
    const std::string shape_key = calibration_key(request_at(0));
    const auto calibrated_at = [&](int depth) -> const Calibration& {
      CalibrationRequest r = request_at(depth);
      const RunSpec& at = r.cell;
      const std::string key = calibration_key(r);
      if (options_.memory_limit && calibrations_.count(key) == 0) {
        // The memory guard's bound of the calibration's step: its largest batch, on as many
        // synthetic rows as it makes.
        RunSpec probe = at;
        probe.protocol.batch = long(*std::max_element(r.batches.begin(), r.batches.end()));
        const size_t inducing =
            std::min<size_t>(size_t(std::max<long>(at.protocol.inducing, 0)), shape.n_train);
        const size_t rows = std::max<size_t>({size_t(probe.protocol.batch), inducing, 2});
        const double limit = double(*options_.memory_limit);
        if (step_memory_lower_bound(probe, rows).bytes > limit / 4) {
          probe.protocol.train_samples = 1;
          const MemoryBound one = step_memory_lower_bound(probe, rows);
          if (one.bytes > limit) {
            throw NotEstimated(fmt::format(
                "its calibration would need at least {:.1f} GiB with one sample ({}), more than "
                "the {:.1f} GiB it may take",
                one.bytes / double(1ull << 30), one.terms, limit / double(1ull << 30)));
          }
          r.one_sample = true;
        }
      }
      auto it = calibrations_.find(key);
      if (it == calibrations_.end()) {
        if (options_.on_calibrate) options_.on_calibrate(at, key);
        Calibration calibrated;
        try {
          calibrated = options_.calibrator(r);
        } catch (const Error& err) {
          throw Error(fmt::format("calibrating {} for cell {} ({}): {}", key, cell.hash(),
                                  cell.label(), err.what()));
        }
        it = calibrations_.emplace(key, std::move(calibrated)).first;
        const Calibration& c = it->second;
        if (c.slow) slow_shapes_.insert(shape_key);
        std::string steps, predicts;
        for (size_t i = 0; i < c.batches.size() && i < c.step_s.size(); ++i) {
          steps += fmt::format("{}batch {}: {:.2f} ms", steps.empty() ? "" : ", ", c.batches[i],
                               c.step_s[i] * 1e3);
        }
        for (size_t i = 0; i < c.predict_points.size() && i < c.predict_s.size(); ++i) {
          predicts += fmt::format(", prediction of {} x {}: {:.1f} ms", c.predict_points[i],
                                  c.predict_samples, c.predict_s[i] * 1e3);
        }
        const std::string how =
            c.slow ? fmt::format(", timed with {} training sample(s) and scaled", c.samples_timed)
                   : "";
        // A slow calibration is said as it ends (it may take a minute); the others at debug.
        spdlog::log(c.slow ? spdlog::level::info : spdlog::level::debug,
                    "calibrated {}: {}{}{} ({:.1f} s)", key, steps, predicts, how, c.seconds);
      }
      return it->second;
    };
    const size_t test_points = shape.n_test, samples = size_t(std::max(test_samples, 0.0));
    e.source = EstimateSource::calibrated;
    // Depths 2 and 5 are calibrated themselves, and depth 1 (the shallow models differ most from
    // the line: the global-inducing DGP's one layer is shared by the samples) unless the model
    // was found slow (Calibration::slow). The others come from the line through depths kDepthLow
    // and kMaxCalibratedDepth (a step is a fixed part plus a part per layer), so that a grid of
    // any depth costs two or three calibrations per model and shape, each at most a depth-5
    // model's time and memory. Boston's steps at depths 2 to 5 (docs/performance.md) lie within
    // 9% of that line. Below depth 2 the line is held at no less than depth/2 of depth 2's time.
    try {
      const bool own = cell.depth == kDepthLow || cell.depth == kMaxCalibratedDepth ||
                       (cell.depth < kDepthLow && slow_shapes_.count(shape_key) == 0);
      if (own) {
        const Calibration& c = calibrated_at(cell.depth);
        e.step_s = step_seconds_at(c, e.batch);
        e.predict_s = predict_seconds_at(c, test_points, samples);
      } else {
        const Calibration& lo = calibrated_at(kDepthLow);
        const Calibration& hi = calibrated_at(kMaxCalibratedDepth);
        const double span = double(kMaxCalibratedDepth - kDepthLow);
        const int d = cell.depth;
        const auto along = [&](double at_lo, double at_hi) {
          const double per_layer = std::max(0.0, at_hi - at_lo) / span;
          if (d > kMaxCalibratedDepth) return at_hi + double(d - kMaxCalibratedDepth) * per_layer;
          const double v = at_lo + double(d - kDepthLow) * per_layer;
          return d < kDepthLow ? std::max(v, at_lo * double(d) / double(kDepthLow)) : v;
        };
        e.step_s = along(step_seconds_at(lo, e.batch), step_seconds_at(hi, e.batch));
        e.predict_s = along(predict_seconds_at(lo, test_points, samples),
                            predict_seconds_at(hi, test_points, samples));
      }
    } catch (const NotEstimated& n) {
      e.not_estimated = n.what();
      e.steps = 0;
      return e;
    }
  }
  e.train_s = double(e.steps) * e.step_s;
  const double passes = std::ceil(double(shape.n_train) / double(std::max<size_t>(e.batch, 1)));
  e.final_elbo_s = double(elbo_repeats(cell)) * passes * kForwardShare * e.step_s;
  return e;
}

double makespan(std::vector<double> seconds, size_t slots) {
  if (seconds.empty()) return 0.0;
  slots = std::max<size_t>(slots, 1);
  std::sort(seconds.begin(), seconds.end(), std::greater<>());
  if (slots >= seconds.size()) return seconds.front();
  std::priority_queue<double, std::vector<double>, std::greater<>> load;
  for (size_t i = 0; i < slots; ++i) load.push(0.0);
  double longest = 0.0;
  for (double s : seconds) {
    const double t = load.top() + s;
    load.pop();
    load.push(t);
    longest = std::max(longest, t);
  }
  return longest;
}

GridEstimate estimate_cells(Estimator& estimator, const std::vector<RunSpec>& pending,
                            size_t cells) {
  GridEstimate g;
  g.cells = cells;
  g.pending = pending.size();
  // Depths 2 and 5 first: their calibrations are needed anyway and say whether a model is slow,
  // so that a slow model's depth-1 cells take the line instead of a calibration of their own
  // (the CIFAR-10 DIWP's: 13 s). The estimates keep the cells' order.
  std::vector<size_t> order(pending.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_partition(order.begin(), order.end(), [&](size_t i) {
    return pending[i].depth == kDepthLow || pending[i].depth == kMaxCalibratedDepth;
  });
  std::vector<CellEstimate> estimates(pending.size());
  for (size_t i : order) estimates[i] = estimator.estimate(pending[i]);
  for (auto& e : estimates) {
    if (!e.not_estimated.empty()) {
      ++g.not_estimated;
      g.estimates.push_back(std::move(e));
      continue;
    }
    (e.source == EstimateSource::stored ? g.stored : g.calibrated) += 1;
    g.cpu_s += e.total_s();
    g.longest_s = std::max(g.longest_s, e.total_s());
    g.estimates.push_back(std::move(e));
  }
  return g;
}

std::string format_hours(double seconds) {
  if (seconds < 90.0) return fmt::format("{:.0f} s", seconds);
  if (seconds < 5400.0) return fmt::format("{:.0f} min", seconds / 60.0);
  if (seconds < 48.0 * 3600.0) return fmt::format("{:.1f} h", seconds / 3600.0);
  return fmt::format("{:.1f} d", seconds / 86400.0);
}

}  // namespace dkp::experiments
