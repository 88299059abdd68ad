// The data fingerprints of `dkp grid status|run` and `dkp tables`: the SHA-256 `dkp run` records
// as data_sha256 (run_setup.hpp: run_data_sha256, from the files alone), of the data now present
// under the data root --data resolves to, so that a result made from other data is stale.
#pragma once

#include <optional>
#include <string>

#include "experiments/store.hpp"

namespace dkp::cli {

/// Fingerprints of the data under the root that `data_option` (--data) resolves to, computed once
/// per (dataset, split) and cached; a dataset that is not installed or cannot be read has none
/// (its cells are not checked). nullopt, after one info line saying the check is skipped, when no
/// data root is found.
std::optional<experiments::DataFingerprints> data_fingerprints(const std::string& data_option);

}  // namespace dkp::cli
