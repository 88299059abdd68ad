// Monte Carlo evaluation of a model split across threads: the S samples of an ELBO estimate (with
// its gradient) or of a prediction are divided into groups, each group evaluated on its own tape
// and its own random stream, on its own thread, and the groups combined in a fixed order.
//
// Numbers. threads = 1 evaluates all S samples with the caller's stream: exactly a plain
// model.elbo / model.predict call (and the numbers of every run made before threads existed).
// threads = T > 1 splits the samples into min(T, S) groups of near-equal size (sample_groups);
// group g draws from stream.child("sample-group", g). The result depends on T (other noise, the
// same distribution) but never on the scheduling: a run with T threads is reproducible, on any
// machine with any number of cores.
//
// The ELBO of the groups combines exactly: each group's estimate is per datapoint and per sample
// (models/model.hpp assemble_elbo), so the S-sample estimate is sum_g (S_g / S) elbo_g, and so is
// its gradient. BLAS stays single-threaded inside every group.
#pragma once

#include <functional>
#include <vector>

#include "models/model.hpp"
#include "platform/parallel.hpp"
#include "random/stream.hpp"

namespace dkp::training {

/// Group sizes for `samples` samples on `threads` threads: min(threads, samples) groups (at least
/// one), sizes differing by at most one, larger groups first. Throws ConfigError on 0 samples or 0
/// threads.
std::vector<size_t> sample_groups(size_t samples, size_t threads);

/// platform::parallel_for, where the training code has always found it.
using platform::parallel_for;

/// A per-datapoint ELBO estimate and, when asked for, its gradient.
struct ElboGradient {
  double elbo = 0.0;
  double expected_loglik = 0.0;  ///< as models::ElboEstimate
  double kl = 0.0;
  autodiff::ParamMap grad;  ///< d elbo / d parameter (empty unless with_grad)
  linalg::CholStats chol;   ///< the evaluation's Cholesky factorisations (all groups' tapes)
  /// Wall seconds of each sample group's evaluation, group order (one entry with one group). The
  /// call waits for the slowest; a spread between equal groups means unequal cores.
  std::vector<double> group_seconds;
};

/// model.elbo(params, X, y, n_train, samples, kl_weight, noise) (and its gradient) with the
/// samples split over `threads` threads as described above; one call on this thread when the
/// model's ELBO is deterministic (Model::deterministic_elbo), which a split would only repeat.
ElboGradient elbo_gradient(const models::Model& model, const autodiff::ParamMap& params,
                           const arma::mat& X, const arma::vec& y, double n_train, size_t samples,
                           double kl_weight, random::Stream& noise, size_t threads, bool with_grad);

/// model.predict(params, X, samples, rng, keep_hidden) with the samples split over `threads`
/// threads: the groups' columns (and hidden samples) side by side, group 0 first.
models::Predictive predict(const models::Model& model, const autodiff::ParamMap& params,
                           const arma::mat& X, size_t samples, random::Stream& rng, size_t threads,
                           bool keep_hidden = false);

}  // namespace dkp::training
