// What a grid will cost before it runs (`dkp grid plan FILE --estimate`): every pending cell's CPU
// seconds from measured step times, and the wall time of the cells on N machines of C cores.
//
// A cell's step time comes, in this order, from
//   - the store: the smallest `step_s` of the done cells (any grid of the results root) with the
//     same cost key (cost_key: dataset, model, inference, posterior, kernel, depth, width rule,
//     inducing points, batch, training samples and the model options that change the work;
//     not steps, schedule, seed or split), and their smallest `predict_s` scaled by test samples
//     (the smallest: they are wall times, which other work sharing the machine only lengthens);
//   - else a calibration on this machine (calibrate): a few training steps of the cell's model
//     (its model, variant, kernel, depth, hidden width and inducing points, built as `dkp run`
//     builds it) on synthetic data of the dataset's input dimension, timed at two batch sizes B1 <
//     B2 and extrapolated linearly to the cell's batch B = min(batch, N_train) (every model's step
//     is a fixed part, the inducing points' factorisations and the KL term, plus a part linear in
//     the batch); and its prediction of two numbers of test points with a few samples, likewise
//     extrapolated to N_test points, times the cell's test samples over the samples timed.
// A cell deeper than 5 layers is not calibrated itself: its step and prediction times are those of
// the line through its model's calibrations at depths 2 and 5, extended to its depth (two
// calibrations per model for a grid of any depth, at the time and memory of depth 5).
// The cell then costs
//   steps x t(B) + R x ceil(N_train / B) x t(B) / 2 + t_predict
// (the second term the final ELBO: R estimates over the training set, a forward pass costing about
// half a step; R = 10, or 1 for the models whose ELBO draws nothing: the SGP and the AEP DGP).
// Timings are of one thread, as `dkp grid run` runs each cell (OPENBLAS_NUM_THREADS=1); the
// calibration's are CPU time, the store's wall time.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "experiments/grid.hpp"

namespace dkp::experiments {

/// The shape of a dataset as `dkp run` sees it: training and test points of a split, input
/// features, classes (0: regression).
struct DatasetShape {
  size_t n_train = 0;
  size_t n_test = 0;
  size_t features = 0;
  size_t classes = 0;
};

/// The shapes of the papers' datasets (the nine UCI sets with their 90/10 splits, MNIST,
/// Rectangle-Images, CIFAR-10, the compositional toy), known without their data; nullopt for
/// another name.
std::optional<DatasetShape> dataset_shape(const std::string& dataset);

/// What fixes a cell's step cost: cells with the same key have the same work per step. A readable
/// "dataset model-variant dD kernel width=W M=.. B=.. S=.." line (plus the model options that are
/// not at their defaults).
std::string cost_key(const RunSpec& cell);

/// The timings of one done cell of a store (result.json's step_s, train_s and predict_s).
struct StoredTiming {
  RunSpec spec;  ///< from manifest.json's canonical_config (grid: the directory's)
  std::filesystem::path dir;
  double step_s = 0.0;
  double train_s = 0.0;
  double predict_s = 0.0;
  long resumed_from_step = 0;
};

/// Every done cell under `results_root` (<grid>/<dataset>/split<k>/<hash>/ with a result.json
/// whose config_hash is the directory's, a positive step_s and a manifest.json whose
/// canonical_config gives that hash back), in path order. Cells that are not done, or whose files
/// do not say so consistently, are left out (nothing is thrown for them).
std::vector<StoredTiming> read_stored_timings(const std::filesystem::path& results_root);

/// One calibration: time the steps of `cell`'s model on synthetic data of `shape`'s features at
/// the batch sizes `batches` (one or two), then its prediction of at most `predict_points` points
/// with at most `predict_samples` samples.
struct CalibrationRequest {
  RunSpec cell;
  DatasetShape shape;
  std::vector<size_t> batches;
  size_t predict_points = 0;
  size_t predict_samples = 0;
  /// A probe step with one training sample that would take longer than this (CPU seconds) with
  /// the cell's samples (the probe's time times the samples) makes the calibration a slow one:
  /// its steps are timed with one sample and scaled to the cell's.
  double slow_step_s = 0.5;
  /// Time the steps with one training sample, scaled, whatever the probe (the estimator sets it
  /// when the cell's samples would take too much memory: EstimatorOptions::memory_limit).
  bool one_sample = false;
};

struct Calibration {
  std::vector<size_t> batches;  ///< as requested
  std::vector<double> step_s;   ///< median step time at each batch size
  /// The prediction (with its scores, as `dkp run` times it) of each number of test points, with
  /// predict_samples samples: two sizes (one when the test set is small), for a line through them.
  std::vector<size_t> predict_points;
  std::vector<double> predict_s;
  size_t predict_samples = 0;
  double seconds = 0.0;  ///< wall time the calibration took
  /// Slow: a step with one sample times the cell's samples came to over
  /// CalibrationRequest::slow_step_s (or the request asked for one sample). Its steps were then
  /// timed with one training sample (samples_timed = 1), one step per batch size, and step_s
  /// scaled by the cell's samples (an upper bound: the work that does not grow with the samples
  /// is scaled too), which also keeps the calibration's memory that of one sample; its
  /// prediction timed at one size; and the estimator takes the model's depth 1 from the line
  /// through depths 2 and 5 instead of calibrating it (depths 3, 4 and above 5 always do).
  bool slow = false;
  size_t samples_timed = 0;  ///< the training samples of the timed steps
};

using Calibrator = std::function<Calibration(const CalibrationRequest&)>;

/// The calibration of this machine: builds the model of `r.cell` (as `dkp run` does, on
/// synthetic inputs: standard normal for UCI data, uniform pixels for images, labels for
/// classification; enough rows for the cell's inducing points), times a probe step with one
/// training sample at the smallest batch, then one warm-up and up to three training steps
/// (forward and backward, the cell's training samples, or one for a slow model: see
/// Calibration::slow; one thread) at each batch size (their median; one when the warm-up took over
/// 50 ms), then the prediction of 20 and of
/// the requested points, or of the requested ones alone when they are at most 20 (at most 60
/// points and 2 samples after a slow step). Times are the
/// thread's CPU time, not wall time, so that other work on a busy machine does not inflate them.
/// Throws what the model throws for an invalid configuration.
Calibration calibrate(const CalibrationRequest& r);

/// The batch sizes the estimator calibrates at: the cell's batch B itself when B <= 400, else 50
/// and 400.
std::vector<size_t> calibration_batches(size_t batch);

/// The value at `x` of the line through the points (xs, ys): ys[0] for one point, else the line
/// through the first two (slope and intercept clamped at 0); 0 for none.
double line_at(const std::vector<size_t>& xs, const std::vector<double>& ys, size_t x);

/// The step time at `batch` from a calibration (line_at of its batches and step times).
double step_seconds_at(const Calibration& c, size_t batch);

/// The prediction time of `points` test points with `samples` samples from a calibration: the
/// line through its prediction times at `points`, times samples / predict_samples (0 when it
/// timed no prediction).
double predict_seconds_at(const Calibration& c, size_t points, size_t samples);

enum class EstimateSource { stored, calibrated };

/// The estimate of one cell.
struct CellEstimate {
  std::string hash;
  std::string label;
  EstimateSource source = EstimateSource::calibrated;
  size_t stored_cells = 0;  ///< stored: of how many cells the step time is the smallest
  size_t batch = 0;         ///< min(batch, N_train)
  long steps = 0;
  double step_s = 0.0;
  double train_s = 0.0;       ///< steps x step_s
  double final_elbo_s = 0.0;  ///< R x ceil(N_train / B) x step_s / 2
  double predict_s = 0.0;
  /// Why the cell has no estimate ("" when it has one): its calibration would need more memory
  /// than EstimatorOptions::memory_limit even with one sample. Its times are 0 and it counts in
  /// no total.
  std::string not_estimated;
  double total_s() const { return train_s + final_elbo_s + predict_s; }
};

struct EstimatorOptions {
  Calibrator calibrator = calibrate;
  /// Called before each new calibration (e.g. to log it); may be empty.
  std::function<void(const RunSpec&, const std::string& key)> on_calibrate;
  /// The memory a calibration may take (bytes; nullopt: not checked), held against the memory
  /// guard's lower bound of its step (experiments/memory_guard.hpp) at its largest batch: above a
  /// quarter of it the steps are timed with one sample (measured peaks are 2-10 times the bound);
  /// when even one sample's bound exceeds it, the cell is not estimated (CellEstimate::
  /// not_estimated) instead of calibrated.
  std::optional<uint64_t> memory_limit;
};

/// Estimates cells from a store's timings and calibrations, each calibration done once per cost
/// key and kept.
class Estimator {
 public:
  explicit Estimator(std::vector<StoredTiming> stored, EstimatorOptions options = {});

  /// The cell's estimate; the stored cell with hash `exclude` (e.g. the cell itself, to see how
  /// well it would have been estimated) is not used. Throws ConfigError for a dataset whose
  /// shape is unknown, and dkp::Error naming the cell when its calibration fails.
  CellEstimate estimate(const RunSpec& cell, const std::string& exclude = "");

  /// The stored timing of the cell with this hash, if the store holds it.
  const StoredTiming* stored(const std::string& hash) const;

  size_t calibrations() const { return calibrations_.size(); }
  double calibration_seconds() const;

 private:
  std::vector<StoredTiming> stored_;
  std::map<std::string, std::vector<size_t>> by_key_;  ///< cost key -> indices into stored_
  std::map<std::string, size_t> by_hash_;
  std::map<std::string, Calibration> calibrations_;
  /// The model shapes (a calibration key at depth 0) whose calibration at some depth was slow.
  std::set<std::string> slow_shapes_;
  EstimatorOptions options_;
};

/// The wall time of running cells of these durations on `slots` single-thread slots (machines x
/// cores), each cell on one slot, longest first onto the least loaded slot; 0 for no cells.
/// At least the longest cell and the total over the slots.
double makespan(std::vector<double> seconds, size_t slots);

/// A grid's pending cells, estimated.
struct GridEstimate {
  size_t cells = 0;
  size_t pending = 0;
  size_t stored = 0;         ///< pending cells estimated from stored timings
  size_t calibrated = 0;     ///< pending cells estimated from a calibration
  size_t not_estimated = 0;  ///< pending cells without an estimate (CellEstimate::not_estimated)
  double cpu_s = 0.0;
  double longest_s = 0.0;
  std::vector<CellEstimate> estimates;  ///< one per pending cell, grid order
};

/// Estimates `pending` (the pending cells of a grid of `cells` cells).
GridEstimate estimate_cells(Estimator& estimator, const std::vector<RunSpec>& pending,
                            size_t cells);

/// "45 s", "12 min", "3.4 h", "5.2 d" (days past 48 hours).
std::string format_hours(double seconds);

}  // namespace dkp::experiments
