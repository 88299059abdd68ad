// The training loop (DESIGN.md section 4, "Doubly-stochastic training"): minibatches of training
// points, S Monte Carlo samples per step, Adam on the negative per-datapoint ELBO, a piecewise-
// constant learning-rate schedule, linear KL annealing, a progress line every N steps, checkpoints
// every N steps and on SIGINT/SIGTERM, and a clear error on a non-finite ELBO or gradient.
//
// Randomness: step t draws its Monte Carlo noise from run.child("mc-noise", t) and epoch e shuffles
// the data with run.child("minibatch-order", e). No random state is carried between steps, so a
// run resumed from a checkpoint (parameters, Adam state, step) is bit-identical to an
// uninterrupted one. With TrainOptions::threads = T > 1 each step's samples are split over T
// threads (training/mc.hpp): other noise than with one thread, and the same for every run with T.
#pragma once

#include <string_view>

#include <armadillo>
#include <atomic>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "models/model.hpp"
#include "random/stream.hpp"
#include "training/checkpoint.hpp"
#include "training/schedules.hpp"

namespace dkp::training {

struct TrainOptions {
  size_t steps = 20000;
  LrSchedule lr = LrSchedule::steps(1e-2, {{10000, 1e-3}});
  KlAnnealing kl{1000};                   ///< KL weight min(1, step / K); K = 0: always 1
  size_t samples = 10;                    ///< Monte Carlo samples per step
  size_t batch = 0;                       ///< minibatch size; 0 or >= N means full batch
  size_t threads = 1;                     ///< threads sharing each step's samples (mc.hpp)
  size_t log_every = 500;                 ///< progress line period (0: never)
  size_t checkpoint_every = 1000;         ///< checkpoint period in steps (0: only on signals)
  std::filesystem::path checkpoint_path;  ///< empty: no checkpoints, no resume
  size_t trace_every = 0;                 ///< trace row period in steps (0: no trace)
  std::filesystem::path trace_path;       ///< trace CSV (training/trace.hpp); empty: no trace
  /// Written into every checkpoint; a checkpoint to resume whose identity is known and differs
  /// from a known field here is refused (dkp::DataError). Empty fields: not checked.
  CheckpointIdentity identity;
};

/// Progress of one step, passed to the callback.
struct StepInfo {
  size_t step = 0;        ///< 1-based count of completed steps
  double elbo = 0.0;      ///< this step's per-datapoint ELBO estimate (annealed)
  double elbo_avg = 0.0;  ///< exponential moving average (weight 0.01)
  double expected_loglik = 0.0;
  double kl = 0.0;
  double kl_weight = 1.0;
  double lr = 0.0;
  double seconds = 0.0;   ///< wall time of the steps done in this process
  size_t first_step = 0;  ///< step this process started from (the checkpoint's, 0 if fresh)

  /// Steps per second of this process (a resumed run counts only the steps it has done).
  double steps_per_second() const {
    return seconds > 0 && step > first_step ? double(step - first_step) / seconds : 0.0;
  }
};

struct TrainReport {
  autodiff::ParamMap params;
  size_t steps = 0;
  size_t resumed_from = 0;     ///< step of the checkpoint resumed from (0: fresh)
  double train_seconds = 0.0;  ///< wall time of the steps done in this process
  double seconds_per_step = 0.0;
  StepInfo last;
  linalg::CholStats chol;  ///< Cholesky factorisations of the steps done in this process
};

/// Set by the SIGINT/SIGTERM handler installed by install_signal_handlers(); the loop then writes a
/// checkpoint and throws dkp::training::Interrupted; estimate_elbo checks it between chunks and
/// throws too (the final ELBO of a large dataset takes minutes). (Signals are process-wide by
/// nature; this flag is the one piece of global state, and it carries no numbers.)
std::atomic<bool>& stop_requested();
void install_signal_handlers();

/// Thrown on a stop request: by train() after it wrote a checkpoint, by estimate_elbo between
/// chunks.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using ProgressFn = std::function<void(const StepInfo&, const TrainOptions&)>;

/// Trains `model` on (X, y) and returns the final parameters. Resumes from
/// options.checkpoint_path when it exists; a checkpoint of another identity (options.identity)
/// or one beyond options.steps is a dkp::DataError naming the file. Throws dkp::Error on a
/// non-finite ELBO or gradient, and on a step whose ELBO cannot be evaluated after the first
/// (diverged parameters: the message names the step and the learning rate).
///
/// With a trace (trace_path set, trace_every > 0) a row is kept every trace_every steps and at the
/// last step, and the CSV is written atomically before every checkpoint and at the end. A fresh
/// run removes an old trace file; a resumed one keeps its rows up to the checkpoint's step (later
/// rows, written before an interruption overtook the checkpoint, are recomputed).
TrainReport train(const models::Model& model, const arma::mat& X, const arma::vec& y,
                  const TrainOptions& options, const random::Stream& run,
                  const ProgressFn& progress = {});

}  // namespace dkp::training

namespace dkp::training {

/// Default chunk of estimate_elbo: at most this many training points per evaluation.
inline constexpr size_t kElboChunk = 10000;

/// Per-datapoint ELBO (KL weight 1) on the whole training set, evaluated in chunks of at most
/// `chunk` points: sum_c (n_c / N) E log p(y_c | f) - mean_c KL_c, the samples of each chunk split
/// over `threads` threads (mc.hpp). Its Cholesky factorisations are added to `chol` (if given).
double estimate_elbo(const models::Model& model, const autodiff::ParamMap& params, const arma::mat& X,
                     const arma::vec& y, size_t samples, random::Stream& rng, size_t threads = 1,
                     size_t chunk = kElboChunk, linalg::CholStats* chol = nullptr);

/// R independent estimate_elbo estimates of the same parameters, to tell the Monte Carlo error of
/// a final ELBO: estimate r draws from parent.child(purpose, r), so estimate 0 is exactly the one
/// a single estimate_elbo call with parent.child(purpose, 0) gives.
struct ElboRepeats {
  double first = 0.0;  ///< estimate 0
  double mean = 0.0;   ///< mean of the R estimates
  double se = 0.0;     ///< standard error of that mean, sd / sqrt(R) (sd with R - 1); 0 when R = 1
  size_t repeats = 0;  ///< R
  linalg::CholStats chol;  ///< the R estimates' Cholesky factorisations
};

/// Throws ConfigError when repeats is 0.
ElboRepeats estimate_elbo_repeated(const models::Model& model, const autodiff::ParamMap& params,
                                   const arma::mat& X, const arma::vec& y, size_t samples,
                                   size_t repeats, const random::Stream& parent,
                                   std::string_view purpose, size_t threads = 1);

}  // namespace dkp::training
