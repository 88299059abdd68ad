// One run end to end: a spec's data, model, training (checkpoints, trace, stop requests), the
// evaluation in the papers' conventions and the run directory's manifest.json and result.json (the
// one writer of both; store.hpp reads them). `dkp run` is options -> RunSpec + RunOptions ->
// run_cell -> printed result; the grid runner (runner.hpp) starts one `dkp run` per cell; the
// library example (examples/) calls run_cell itself.
//
// The run directory holds manifest.json (written before training: what the run is), checkpoint.bin
// and trace.csv (during training), result.json (at the end) and run.lock (held while a process
// runs it). Every file is written atomically (util::write_file_atomic).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "experiments/run_spec.hpp"
#include "training/trainer.hpp"
#include "util/json.hpp"

namespace dkp::experiments {

/// What a run needs beyond its spec: where it goes, where the data are, how it is executed and
/// reported. None of it changes the numbers of a run except `threads` (as --threads) and, at
/// round-off, `blas_threads`.
struct RunOptions {
  std::filesystem::path out;  ///< the run directory (created when missing)
  /// As --data: a directory, or "" for $DKP_DATA, ./data, ../shared/data (data::resolve_data_root).
  std::string data_root;
  int threads = 1;  ///< threads sharing the Monte Carlo samples (--threads; in the results)
  /// OpenBLAS threads inside each BLAS and LAPACK call (--blas-threads): for a step of a few large
  /// matrix products (the CIFAR-10 DIWP's 3072 x 3072 input layer), where --threads has no
  /// samples to share. Results may differ from one thread's at round-off. The manifest and the
  /// result record the count OpenBLAS runs (its build or limit may give fewer, with a warning).
  int blas_threads = 1;
  /// The memory the run may take (--max-memory, bytes): the memory guard (memory_guard.hpp)
  /// refuses a run whose lower bound exceeds it before building the model; nullopt: what the
  /// process may take (platform::available_memory_bytes).
  std::optional<uint64_t> max_memory;
  /// Independent estimates of the final ELBO (elbo_mean, elbo_se); nullopt: 10, or 1 for a
  /// deterministic ELBO (sgp, dgp aep).
  std::optional<int> elbo_repeats;
  /// The KL annealing asked for, recorded as kl_anneal beside the spec's (kl_anneal_effective)
  /// when they differ (`dkp run` cuts its default 1000 to --steps); nullopt: the spec's.
  std::optional<long> kl_anneal_requested;
  size_t log_every = 500;          ///< progress line every N steps (0: never)
  size_t checkpoint_every = 1000;  ///< checkpoint every N steps (0: only on a stop request)
  /// trace.csv row period (0: no trace); nullopt: training::auto_trace_every(steps).
  std::optional<size_t> trace_every;
  /// Refuse a fresh run on a built-in dataset whose files differ from the pinned checksums
  /// (builtin_data_damage; --strict-data); without it, a warning.
  bool strict_data = false;
  /// Resume a legacy (format 1) checkpoint, which records no configuration, data or checksum
  /// and so cannot be checked (--resume-legacy); without it such a checkpoint is refused.
  bool resume_legacy = false;
  /// Rerun from the start even when a result of this configuration exists (discards a checkpoint;
  /// replaces a result or checkpoint of another configuration, of other data, or a damaged one,
  /// which are refused without it).
  bool force = false;
  /// Also write the per-test-point predictions CSV here (predictions_csv, class_predictions_csv);
  /// empty: none.
  std::filesystem::path predictions;
  /// The manifest's "config": the options as the caller had them (`dkp run`: every option, given
  /// or default). An empty object by default.
  util::Json config = util::Json::object();
  /// Installs the SIGINT/SIGTERM handlers (training::install_signal_handlers) before training.
  /// Either way a stop request (training::stop_requested(): the handlers set it; so may a
  /// `progress` callback) ends the run with a checkpoint to resume, as RunStatus::interrupted.
  bool install_signal_handlers = true;
  /// Called after every training step, after the progress line.
  training::ProgressFn progress;
};

enum class RunStatus {
  done,         ///< trained, evaluated, result.json written
  reused,       ///< result.json of this configuration and data was there: nothing done
  busy,         ///< another process holds the run directory's lock: nothing read or written
  interrupted,  ///< a stop request: the checkpoint holds the parameters, the same call resumes
};

struct RunOutcome {
  RunStatus status = RunStatus::done;
  /// busy and interrupted: what happened, one line (`dkp run` prints "dkp run: <message>").
  std::string message;
  /// done: the result.json written.
  util::Json result;
};

/// Runs `spec` into options.out. Takes the directory's lock first (busy when another process holds
/// it) and checks what the directory holds before the data are read: a result of this
/// configuration from the data now present is reused; one without a data fingerprint is reused
/// with a warning; a result of other data is a DataError; a result or checkpoint of another
/// configuration, a damaged checkpoint or one beyond the spec's steps is a ConfigError or DataError
/// (options.force discards them). A checkpoint of this configuration and data is resumed; the
/// resumed run's numbers are those of an uninterrupted one. A run that fails before its manifest
/// is written leaves no directory it made behind.
RunOutcome run_cell(const RunSpec& spec, const RunOptions& options);

}  // namespace dkp::experiments
