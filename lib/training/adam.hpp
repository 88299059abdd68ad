// Adam (Kingma & Ba 2015, "Adam: A method for stochastic optimization", Algorithm 1) over a set of
// named matrices, MINIMISING a loss: the caller passes the gradient of the loss (for the ELBO,
// the gradient of -ELBO). Hyperparameters follow ensmallen's style: constructor defaults plus
// getter/setter pairs. The per-run state (m, v, t) sits in AdamState, which serialises exactly so
// that a resumed run is bit-identical to an uninterrupted one.
//
// One step with gradient g for each parameter theta (t counts steps, starting at 1):
//     m     <- beta1 m + (1 - beta1) g
//     v     <- beta2 v + (1 - beta2) g^2                     (elementwise)
//     theta <- theta - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// This is the arrangement torch.optim.Adam (1.13, amsgrad off, no weight decay) computes; it
// equals the paper's theta - lr mhat / (sqrt(vhat) + eps) up to rounding.
#pragma once

#include <armadillo>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "autodiff/params.hpp"

namespace dkp::training {

/// Parameter values (or gradients) by name.
using ParameterSet = autodiff::ParamMap;

/// Adam's per-run state: first and second moment estimates per parameter and the step count.
struct AdamState {
  uint64_t t = 0;  ///< steps taken
  ParameterSet m;  ///< first-moment estimates (same names and shapes as the parameters)
  ParameterSet v;  ///< second-moment estimates
  /// Steps already taken when a parameter was first moved, for a parameter held still at first
  /// (Adam::step's `held`); its bias correction counts its own steps, t - start, as torch's
  /// per-parameter step count does. Absent: 0 (moved from the first step).
  std::map<std::string, uint64_t> start;

  /// Exact text form (hexadecimal floating point; see training/exact_io.hpp):
  ///   dkp-adam-state v1 / t <t> / count <n> / per parameter "m <name> <rows> <cols> <values>"
  ///   and "v <name> ..." lines / "start <name> <k>" per entry of `start` / end
  std::string serialise() const;
  /// Parses serialise()'s output; throws dkp::DataError on malformed or inconsistent text.
  static AdamState deserialise(const std::string& text);

  friend bool operator==(const AdamState& a, const AdamState& b);
};

class Adam {
 public:
  explicit Adam(double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8);

  //! Exponential decay rate of the first-moment estimate, in [0, 1).
  double beta1() const { return beta1_; }
  void set_beta1(double beta1);
  //! Exponential decay rate of the second-moment estimate, in [0, 1).
  double beta2() const { return beta2_; }
  void set_beta2(double beta2);
  //! Added to the denominator for numerical stability, > 0.
  double eps() const { return eps_; }
  void set_eps(double eps);

  /// One Adam step that decreases the loss whose gradient is `grads`, with learning rate `lr`
  /// (>= 0). `grads` must have exactly the names of `params`, with equal shapes, and finite values;
  /// otherwise dkp::Error is thrown and neither `params` nor the state is changed. Moments are
  /// created (zero) for parameters seen for the first time; a parameter whose shape differs from
  /// its stored moments is an error. Parameters named in `held` are left as they are, and their
  /// moments are not created until the first step that moves them (whose bias correction then
  /// starts afresh: AdamState::start).
  void step(ParameterSet& params, const ParameterSet& grads, double lr,
            const std::set<std::string>& held = {});

  /// Steps taken so far.
  uint64_t steps_taken() const { return state_.t; }

  const AdamState& state() const { return state_; }
  /// Replaces the state (e.g. from a checkpoint). Throws dkp::DataError if m and v disagree in
  /// names or shapes.
  void set_state(AdamState state);
  /// Forgets the moments and the step count.
  void reset() { state_ = AdamState{}; }

 private:
  double beta1_, beta2_, eps_;
  AdamState state_;
};

}  // namespace dkp::training
