// The pieces of a run (experiments/run.hpp, run_cell) that `dkp predict`, `dkp params`, `dkp bench
// model` and examples/ use too: a run's data and their fingerprint, the model a run describes, a
// trained run loaded back from its directory, the predictions CSVs and result.json's calibration
// keys.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "data/standardise.hpp"
#include "data/uci.hpp"
#include "eval/metrics.hpp"
#include "experiments/run_spec.hpp"
#include "models/model.hpp"
#include "random/stream.hpp"
#include "training/checkpoint.hpp"
#include "util/json.hpp"

namespace dkp::experiments {

/// SHA-256 over the dataset's data, feature and target files and the split's index files (the
/// manifest's data_sha256).
std::string split_data_sha256(const data::UciDataset& ds, int split);

/// The data fingerprint of a run (the manifest's data_sha256, as load_run_data computes it) from
/// the files alone, without parsing them: split_data_sha256 of a UCI split, data::images_sha256
/// of an image dataset. DataError when the dataset is not installed under `root`.
std::string run_data_sha256(const std::filesystem::path& root, const std::string& dataset,
                            int split);

/// A run's data: the split the model trains and is tested on, and its files' SHA-256 (the
/// manifest's data_sha256): a UCI dataset's split, or an image dataset's fixed train/test split
/// (MNIST, Rectangle-Images, CIFAR-10; split 0 only; data::image_split).
struct RunData {
  data::RegressionSplit split;
  std::string sha256;
};
RunData load_run_data(const std::filesystem::path& root, const std::string& dataset, int split,
                      const std::string& pixels = "unit", double pixel_scale = 1.0,
                      data::Scaling scaling = data::Scaling::train);
/// A cell's data as it trains on it: its dataset and split, with its protocol's pixel settings and
/// its `standardise` option (models/options.hpp).
RunData load_run_data(const std::filesystem::path& root, const RunSpec& spec);

/// The files of a built-in dataset (the papers' UCI sets, MNIST, CIFAR-10) checked against the
/// checksum list embedded from data-scripts/SHA256SUMS (data/checksums.hpp), as `dkp data verify
/// --only` does: the files whose contents differ or that are missing ("" when every listed file
/// matches, or the dataset has no listed files: the toy, Rectangle-Images, a user dataset).
std::string builtin_data_damage(const std::filesystem::path& root, const std::string& dataset);

/// The root of a run's random streams: Stream(seed), and on the toy, whose splits are trials of
/// one data set, Stream(seed).child(posterior, split) (data/toy.hpp), as `dkp toy` keys its trials.
random::Stream run_stream(const RunSpec& spec);

/// The model a run describes, initialised from the run's "init" stream as run_cell does.
std::unique_ptr<models::Model> make_run_model(const RunSpec& spec, size_t width,
                                              const data::RegressionSplit& split,
                                              const random::Stream& run);

/// A finished (or checkpointed) run (run_cell, `dkp run`), loaded back from its directory. Its
/// random streams derive from run_stream(spec), as in run_cell.
struct TrainedRun {
  RunSpec spec;
  int threads = 1;  ///< the run's --threads (manifest), 1 when not recorded
  data::RegressionSplit split;
  std::unique_ptr<models::Model> model;
  training::Checkpoint checkpoint;
};

/// Reads `dir`'s manifest.json (its canonical config must hash to its config_hash), loads the
/// dataset from `data_root_option` (as --data) and checks it against the manifest's
/// data_sha256, rebuilds the model as run_cell did and loads checkpoint.bin (warning when it is
/// short of the run's steps). ConfigError when `dir` is not a run directory or has no checkpoint,
/// DataError when the manifest, the data or the checkpoint do not match.
TrainedRun load_trained_run(const std::filesystem::path& dir, const std::string& data_root_option);

/// Predictions CSV in original units: `index,mean,variance` (the predictive mixture's moments).
std::string predictions_csv(const data::RegressionSplit& split, const eval::MixtureMoments& mm);

/// With the targets: `index,y,mean,variance,log_density,pit`, where `m` are the metrics against
/// the targets and `y_original` the targets in original units.
std::string predictions_csv(const data::RegressionSplit& split, const eval::RegressionMetrics& m,
                            const arma::vec& y_original);

/// Classification predictions CSV: `index,y,predicted,log_density,p_0..p_{C-1}` (the mixture's
/// class probabilities; y the labels), or without labels `index,predicted,p_0..p_{C-1}`.
std::string class_predictions_csv(const eval::ClassificationMetrics& m, const arma::vec& labels);
std::string class_predictions_csv(const arma::mat& class_prob);

/// The calibration keys of result.json: test_coverage_50, _90, _95 and test_calibration_error.
void add_calibration(util::Json& result, const eval::RegressionMetrics& m);
/// A classifier's calibration into result.json: test_ece and test_reliability (10 bins of
/// confidence: count, mean confidence, accuracy; eval::Reliability).
void add_calibration(util::Json& result, const eval::Reliability& r);

}  // namespace dkp::experiments
