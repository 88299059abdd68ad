// Experiment grids: a YAML file that names a paper table family, the training protocol and the
// axes of the grid (datasets, splits, depths, models with their posteriors, kernels),
// with optional overrides and profiles. Loading validates the schema strictly: unknown keys,
// wrong types and impossible values are dkp::ConfigError naming file:line:column and the key.
// Expansion turns a grid into RunSpecs, one per cell, each with a stable configuration hash.
//
// Schema (every key is checked; see experiments/*.yaml for real grids):
//
//   name: gw-tables            # optional, default: the file stem; names results/runs/<name>/
//   family: gw-uci             # table family: dkp-uci | gw-uci | agw-uci | agw-runtime |
//                              #               dsvi-uci | generic
//   reference: agw             # optional (generic family): paper key used for reference values
//   description: "..."         # optional, free text
//   protocol:                  # all keys required except kernel (default se) and width
//     steps: 20000             # Adam steps (> 0)
//     lr_schedule: [[0, 1.0e-2], [10000, 1.0e-3]]   # [step, lr]; first step 0, increasing, < steps
//     kl_anneal: 1000          # KL weight rises linearly from 0 to 1 over this many steps (0:
//     none) train_samples: 10        # Monte Carlo samples per training step   (dkp run --samples)
//     test_samples: 100        # posterior samples at test time
//     inducing: 100            # inducing points
//     batch: 10000             # minibatch size (dkp run clamps it to the training-set size)
//     kernel: se               # se | relu (used when axes.kernels is absent)
//     width: input             # hidden width rule: input (= N0) | min(input,30) | integer
//     seed: 0                  # master seed of every run
//     options: {stl: off}      # optional: model options (models/options.hpp) by name, for the
//                              # cells whose model takes them (a list of values: a sweep)
//   axes:
//     datasets: [boston, concrete]   # UCI short names
//     splits: all              # or a list of split indices; all = 20 (protein 5)
//     depths: [2, 3, 4, 5]
//     kernels: [se]            # optional, default [protocol.kernel]
//     models:                  # model: sgp | dgp | nngp | diwp | dwp (models/registry.hpp)
//       - {model: dgp, inference: global-inducing}     # dgp: dsvi | global-inducing | aep
//       - {model: dwp, posterior: [gw, agw, abgw]}     # dwp: gw | agw | abgw
//       - {model: sgp, inducing: [100, 500]}           # sgp is single-layer (depth 1)
//       # posterior: and inference: name the same axis (the approximate posterior), any model
//       # an entry may also set depths, kernels, any protocol key except kernel, and options:
//       # (each must be the model's: {model: diwp, options: {delta_init: [1, 10]}})
//     options: {a_prime_scale: [1, 10]}  # optional: as protocol.options, over them
//   overrides:                 # optional: protocol values for matching cells, applied in order
//     - when: {dataset: [kin8nm, naval]}      # keys: dataset split model inference posterior
//       set: {train_samples: 1}               #       depth kernel inducing
//   profiles:                  # optional: named variants merged on top (--profile NAME)
//     quick:
//       description: "3 splits, 2000 steps"
//       tables: true                          # optional: `dkp tables DIR` (make tables) also
//                                             # writes this profile's tables (not counted)
//       replicates: true                      # optional, with tables: true and a protocol of
//                                             # `seed` alone: seed replicates, whose pairs with
//                                             # the full profile's single runs measure our
//                                             # run-to-run sd (report::apply_replicates)
//       protocol: {steps: 2000, lr_schedule: [[0, 0.01], [1000, 0.001]]}
//       axes: {splits: [0, 1, 2]}             # replaces the listed axes
//       overrides: [...]                      # appended after the grid's overrides
//
// The profile "full" is the grid as written unless the file defines it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/names.hpp"
#include "experiments/run_spec.hpp"

namespace dkp::experiments {

/// A loaded, validated grid with the selected profile merged in.
struct Grid {
  std::filesystem::path file;
  std::string name;
  std::string family;
  std::string reference;  ///< paper key for reference values (generic family)
  std::string description;
  std::string profile = "full";
  std::string profile_description;
  std::vector<std::string> profiles;  ///< profiles defined in the file
  /// Profiles marked `tables: true`: `dkp tables DIR` writes their tables beside the full
  /// profile's, as tables of another protocol (report::Table::extra).
  std::vector<std::string> tabulated_profiles;
  /// The selected profile is marked `replicates: true`: its cells are the full profile's with
  /// another seed, and its tables give the full profile's single runs their run-to-run sd.
  bool replicates = false;
  std::vector<RunSpec> cells;  ///< the expanded grid, in run order (split-major)
  /// Set by keep_splits_below: only the cells of splits below it are kept (0: all of them).
  uint64_t split_limit = 0;
};

/// Drops the cells of splits numbered n and above, and records n in split_limit: `dkp tables
/// --splits n` reads the tables, verdicts and claims as they stood with the first n splits. n = 0
/// is a ConfigError (no cell would be left).
void keep_splits_below(Grid& grid, uint64_t n);

/// The cell of `grid` whose configuration hash is `hash`, or starts with it (a prefix of at least
/// 4 characters that names one cell): `dkp grid run/verify --cell`. ConfigError when the text is
/// shorter, names no cell (pointing at `dkp grid status --verbose`) or several (naming two).
const RunSpec& find_cell(const Grid& grid, const std::string& hash);

/// Table families known to `dkp tables`.
const std::vector<std::string>& known_families();

/// Loads and validates a grid file and expands it with the given profile. User datasets
/// (data/datasets.hpp) are looked up under `data_root` (empty: $DKP_DATA and its fallbacks).
Grid load_grid(const std::filesystem::path& file, const std::string& profile = "full",
               const std::filesystem::path& data_root = {});
/// Same from text; `filename` is used in error messages and as the default grid name.
Grid parse_grid(const std::string& text, const std::string& filename,
                const std::string& profile = "full", const std::filesystem::path& data_root = {});

}  // namespace dkp::experiments
