// Experiment grids: a YAML file that names a paper table family, the training protocol and the
// axes of the grid (datasets, splits, depths, models with their inference/posterior, kernels),
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
//   axes:
//     datasets: [boston, concrete]   # UCI short names
//     splits: all              # or a list of split indices; all = 20 (protein 5)
//     depths: [2, 3, 4, 5]
//     kernels: [se]            # optional, default [protocol.kernel]
//     models:                  # model: sgp | dgp | nngp | diwp | dwp
//       - {model: dgp, inference: global-inducing}     # dgp: inference dsvi | global-inducing
//       - {model: dwp, posterior: [gw, agw, abgw]}     # dwp: posterior gw | agw | abgw
//       - {model: sgp, inducing: [100, 500]}           # sgp is single-layer (depth 1)
//       # an entry may also set depths, kernels and any protocol key except kernel
//   overrides:                 # optional: protocol values for matching cells, applied in order
//     - when: {dataset: [kin8nm, naval]}      # keys: dataset split model inference posterior
//       set: {train_samples: 1}               #       depth kernel inducing
//   profiles:                  # optional: named variants merged on top (--profile NAME)
//     quick:
//       description: "3 splits, 2000 steps"
//       protocol: {steps: 2000, lr_schedule: [[0, 0.01], [1000, 0.001]]}
//       axes: {splits: [0, 1, 2]}             # replaces the listed axes
//       overrides: [...]                      # appended after the grid's overrides
//
// The profile "full" is the grid as written unless the file defines it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "models/diwp_defaults.hpp"

namespace dkp::experiments {

/// One step of a piecewise-constant learning-rate schedule: from `step` on, use `lr`.
struct LrPoint {
  long step = 0;
  double lr = 0.0;
  bool operator==(const LrPoint&) const = default;
};

/// Renders a schedule as "0:0.01,10000:0.001" (the dkp run --lr-schedule syntax).
std::string format_lr_schedule(const std::vector<LrPoint>& schedule);
/// Parses "0:0.01,10000:0.001"; throws ConfigError when malformed (first step must be 0,
/// steps strictly increasing, learning rates finite and positive).
std::vector<LrPoint> parse_lr_schedule(const std::string& text);

/// Training and evaluation protocol of one run.
struct Protocol {
  long steps = 0;
  std::vector<LrPoint> lr_schedule;
  long kl_anneal = 0;
  long train_samples = 0;
  long test_samples = 0;
  long inducing = 0;
  long batch = 0;
  std::string width = "input";
  uint64_t seed = 0;
  /// MNIST's pixels: "unit" (in [0, 1], as the DSVI reference code) or "standard" (minus the
  /// training images' mean pixel value, over their standard deviation: PyTorch's usual MNIST
  /// normalisation, as the DKP paper's reference code); UCI inputs are always standardised.
  std::string pixels = "unit";
  /// MNIST: the pixels (after `pixels`) times this factor (`dkp run --pixel-scale`): the Gram
  /// models' input Gram, hence their output layer's prior variance, scales with its square. In
  /// the hash only when not 1.
  double pixel_scale = 1.0;
  /// sgp and dgp dsvi: the SE kernels' initial lengthscales and variance (`dkp run
  /// --init-lengthscale/--init-variance`); 0 keeps the model's (1 and 1). In the hash only when
  /// set, so cells without them keep their hashes.
  double init_lengthscale = 0.0;
  double init_variance = 0.0;
  bool operator==(const Protocol&) const = default;
};

/// One cell of a grid: everything `dkp run` needs, plus where its results go.
struct RunSpec {
  std::string grid;  ///< grid name (directory under the results root; not part of the hash)
  std::string dataset;
  int split = 0;
  std::string model;
  std::string inference;  ///< dgp only: dsvi | global-inducing
  std::string posterior;  ///< dwp only: gw | agw | abgw
  int depth = 1;
  std::string kernel;
  Protocol protocol;
  /// DIWP options of `dkp run` beyond the grid axes (grid cells keep the defaults). Each joins
  /// canonical() and run_args() only when it differs from its default, so default cells keep
  /// their hash; delta_init joins them whenever it is not 1, the first default (the DIWP's
  /// default is now e^4, so results computed at 1 keep their hash and are never taken for
  /// results at e^4).
  double delta_init = models::kDiwpDeltaInit;  ///< --delta-init
  std::string diwp_dof = "point";              ///< --diwp-dof point | batch
  /// DWP option of `dkp run`, joining the hash the same way (--stl): on (the Bartlett
  /// parameters, GW paper appendix F), off, or mixing (A-GW / AB-GW: A' and B as well).
  std::string stl = "on";
  /// DWP A-GW / AB-GW option of `dkp run` (--a-prime-scale), joining the hash the same way.
  double a_prime_scale = 1.0;
  /// DWP option of `dkp run` (--mu-param direct | bayesfunc), joining the hash the same way.
  std::string mu_param = "direct";
  /// Global-inducing DGP options of `dkp run`, joining the hash the same way: ARD lengthscales
  /// in every layer (--hidden-ard) and the pseudo-likelihood precision shared by a layer's
  /// output columns or one per column (--gi-precision shared | per-output).
  bool hidden_ard = false;
  std::string gi_precision = "shared";

  /// Canonical serialisation (one "key=value" line per field, fixed order, versioned).
  std::string canonical() const;
  /// The inverse of canonical() (grid left empty); throws DataError naming the offending line or
  /// key when `text` is not exactly the canonical form of some spec.
  static RunSpec parse_canonical(const std::string& text);
  /// First 16 hex characters of the SHA-256 of canonical(). `dkp run` writes it to result.json
  /// as "config_hash"; a cell is done when its run directory holds a result with this hash.
  std::string hash() const;
  /// <results_root>/<grid>/<dataset>/split<k>/<hash>
  std::filesystem::path run_dir(const std::filesystem::path& results_root) const;
  /// Short human label, e.g. "boston/split0 dwp-agw d5 se".
  std::string label() const;
  /// Model label as in the tables, e.g. "dwp-agw", "dgp-dsvi", "sgp-m100", "nngp".
  std::string model_label() const;
  /// Arguments after the program name: run --dataset ... --out DIR --quiet (plus `extra`, e.g.
  /// {"--data", ROOT}, inserted before --out).
  std::vector<std::string> run_args(const std::filesystem::path& results_root,
                                    const std::vector<std::string>& extra = {}) const;
  /// A complete shell command line: `dkp_path` followed by run_args, shell-quoted where needed.
  std::string command_line(const std::string& dkp_path, const std::filesystem::path& results_root,
                           const std::vector<std::string>& extra = {}) const;
};

/// Checks a spec's values and model/inference/posterior combination (used by expansion and by
/// `dkp run` on its options); throws ConfigError naming the offending value.
void validate_run_spec(const RunSpec& spec);

/// Model names the grids and `dkp run` know.
const std::vector<std::string>& known_models();
/// Number of Gal & Ghahramani splits of a UCI dataset (20, protein 5), 1 for MNIST (its fixed
/// train/test split); throws ConfigError for an unknown dataset.
int uci_split_count(const std::string& dataset);

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
  std::vector<RunSpec> cells;         ///< the expanded grid, in run order (split-major)
};

/// The cell of `grid` whose configuration hash is `hash`, or starts with it (a prefix of at least
/// 4 characters that names one cell): `dkp grid run/verify --cell`. ConfigError when the text is
/// shorter, names no cell (pointing at `dkp grid status --verbose`) or several (naming two).
const RunSpec& find_cell(const Grid& grid, const std::string& hash);

/// Table families known to `dkp tables`.
const std::vector<std::string>& known_families();

/// Loads and validates a grid file and expands it with the given profile.
Grid load_grid(const std::filesystem::path& file, const std::string& profile = "full");
/// Same from text; `filename` is used in error messages and as the default grid name.
Grid parse_grid(const std::string& text, const std::string& filename,
                const std::string& profile = "full");

/// Quotes a word for a POSIX shell when it contains anything but [A-Za-z0-9_./:,=+-].
std::string shell_quote(const std::string& word);

}  // namespace dkp::experiments
