// Run specs: one cell of a grid, i.e. everything `dkp run` needs (dataset, split, model and its
// variant, depth, kernel, protocol, model options), its canonical text and configuration hash,
// where its results go, its `dkp run` command line, and the validation of its values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "experiments/lr_schedule.hpp"
#include "models/factory.hpp"
#include "models/options.hpp"

namespace dkp::experiments {

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
  bool operator==(const Protocol&) const = default;
};

/// One cell of a grid: everything `dkp run` needs, plus where its results go.
struct RunSpec {
  std::string grid;  ///< grid name (directory under the results root; not part of the hash)
  std::string dataset;
  /// A user dataset's fingerprint (data::DatasetInfo::fingerprint: its CSV, columns, task and
  /// split rule), written to the canonical text as `data=`; empty for the papers' datasets, whose
  /// hashes it leaves alone.
  std::string data_fingerprint;
  int split = 0;
  std::string model;
  /// The model's approximate posterior (models/registry.hpp) is one axis with two names: `dkp run
  /// --posterior` and `--inference`, the grids' `posterior:` and `inference:`. A spec holds it in
  /// either field (posterior_name()); canonical(), run_args() and model_label() write it under
  /// the model's key (models::posterior_key: dgp's is "inference", the others' "posterior"), so
  /// the hash does not depend on the field; set_posterior() and parse_canonical() use that field.
  std::string inference;  ///< dgp: dsvi | global-inducing | aep
  std::string posterior;  ///< dwp: gw | agw | abgw
  int depth = 1;
  std::string kernel;
  Protocol protocol;
  /// The model options (models/options.hpp): `dkp run`'s option flags, a grid's `options:`.
  /// canonical() writes an option its model takes when it differs from the option's hash
  /// baseline (its default; delta_init: 1), so cells at the defaults keep their hashes;
  /// run_args() passes every option that differs from its default.
  models::OptionValues options;

  /// The posterior: `posterior`, or `inference` when that is empty.
  const std::string& posterior_name() const;
  /// Sets the posterior in the field the model's canonical text names (inference for dgp,
  /// posterior otherwise) and clears the other; `model` must be set first.
  void set_posterior(const std::string& name);

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
  /// The grid runner's arguments: run --spec <canonical()> (plus `extra`) --out DIR --quiet. The
  /// child reads the configuration the cell's hash is made of, not flags rebuilt from it.
  std::vector<std::string> spec_args(const std::filesystem::path& results_root,
                                     const std::vector<std::string>& extra = {}) const;
  /// A complete shell command line: `dkp_path` followed by run_args, shell-quoted where needed.
  std::string command_line(const std::string& dkp_path, const std::filesystem::path& results_root,
                           const std::vector<std::string>& extra = {}) const;
};

/// Checks a spec's values, and its model, posterior, depth, kernel and model options by the
/// model registry's rules (models::check_spec; used by expansion and by `dkp run` on its
/// options); throws ConfigError naming the offending value. The dataset is looked up in the
/// dataset table (data/datasets.hpp) with `data_root` for user datasets (empty: $DKP_DATA and its
/// fallbacks).
void validate_run_spec(const RunSpec& spec, const std::filesystem::path& data_root = {});

/// The hidden width a width rule gives on data with d0 input features: "input" (d0),
/// "min(input,30)" or a positive integer; ConfigError otherwise.
size_t resolve_width(const std::string& rule, size_t d0);

/// The model a spec describes, as `dkp run` builds it: hidden width `width` (resolve_width) and
/// `classes` (0: regression).
models::ModelSpec model_spec(const RunSpec& spec, size_t width, size_t classes);

/// Quotes a word for a POSIX shell when it contains anything but [A-Za-z0-9_./:,=+-].
std::string shell_quote(const std::string& word);

}  // namespace dkp::experiments
