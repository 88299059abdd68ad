// What `dkp run` and `dkp predict` share: the hidden width rule, the model a run describes and
// the predictions CSV.
#pragma once

#include <memory>
#include <string>

#include "cli.hpp"
#include "data/standardise.hpp"
#include "data/uci.hpp"
#include "eval/metrics.hpp"
#include "experiments/grid.hpp"
#include "models/model.hpp"
#include "random/stream.hpp"

namespace dkp::cli {

/// Hidden width from the --width rule and the number of input features.
size_t resolve_width(const std::string& rule, size_t d0);

/// SHA-256 over the dataset's data, feature and target files and the split's index files (the
/// manifest's data_sha256).
std::string split_data_sha256(const data::UciDataset& ds, int split);

/// The model a run describes, initialised from the run's "init" stream as `dkp run` does.
std::unique_ptr<models::Model> make_run_model(const experiments::RunSpec& spec, size_t width,
                                              const data::RegressionSplit& split,
                                              const random::Stream& run);

/// Predictions CSV in original units: `index,mean,variance`, with `y` and `log_density` after
/// the index when `y` (original units) and the per-point log densities are given.
std::string predictions_csv(const data::RegressionSplit& split, const eval::MixtureMoments& mm,
                            const arma::vec* y = nullptr, const arma::vec* log_density = nullptr);

}  // namespace dkp::cli
