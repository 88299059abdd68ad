// The grids' vocabulary: the names of models and kernels (from the model registry,
// models/registry.hpp, where the models' posteriors are too), table families, width and pixel
// rules, dataset names and split counts, and the small string helpers the grid
// schema and the run-spec checks share (membership, joining, "did you mean" distances).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dkp::experiments {

/// Model names the grids and `dkp run` know (the registry's models::model_names()).
const std::vector<std::string>& known_models();
/// Kernel names the grids and `dkp run` know (the registry's models::kernel_names()).
const std::vector<std::string>& known_kernels();
/// Number of Gal & Ghahramani splits of a UCI dataset (20, protein 5), 1 for MNIST (its fixed
/// train/test split), the toy's trials (10, data::kToyTrials); throws ConfigError for an unknown
/// dataset.
int uci_split_count(const std::string& dataset);

/// Table families known to `dkp tables`.
const std::vector<std::string>& known_families();

/// A dataset's canonical name: an image dataset's, the toy's, or the UCI short name of any accepted
/// spelling; throws ConfigError listing the known names.
std::string canonical_dataset(const std::string& name);

/// The values of the protocol's rules.
extern const std::vector<std::string> kWidthRules;  ///< input | min(input,30) (or an integer)
extern const std::vector<std::string> kPixelRules;  ///< unit | standard

bool contains(const std::vector<std::string>& v, const std::string& s);
std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
/// A positive integer of at most 9 digits (a width given as a number).
bool is_width_integer(const std::string& w);
/// Levenshtein distance (the schema's "did you mean" suggestions).
size_t edit_distance(const std::string& a, const std::string& b);
/// The shortest text that reads back as x ("0.01", "1e-06").
std::string format_double(double x);

}  // namespace dkp::experiments
