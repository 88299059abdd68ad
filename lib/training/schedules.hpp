// Learning-rate and KL-annealing schedules.
//
// Step convention (both schedules): `step` is the 0-based index of the optimisation step about to
// be taken, i.e. the number of steps already completed. A run of 20000 steps queries steps 0 ..
// 19999.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dkp::training {

/// A piecewise-constant learning rate: `initial` until the first drop, then each drop's value
/// from its step on. Example: LrSchedule::steps(1e-2, {{10000, 1e-3}}) gives 1e-2 for steps
/// 0 .. 9999 and 1e-3 from step 10000 on.
class LrSchedule {
 public:
  /// The same learning rate at every step (lr > 0, finite).
  static LrSchedule constant(double lr);
  /// `initial`, then drops[i].second from step drops[i].first on. Drop steps must be strictly
  /// increasing and > 0; every rate must be positive and finite (dkp::ConfigError otherwise).
  static LrSchedule steps(double initial, std::vector<std::pair<uint64_t, double>> drops);

  /// The learning rate for 0-based step `step`.
  double at(uint64_t step) const;

  double initial() const { return initial_; }
  const std::vector<std::pair<uint64_t, double>>& drops() const { return drops_; }
  /// e.g. "0.01, 0.001 from step 10000".
  std::string describe() const;

 private:
  LrSchedule(double initial, std::vector<std::pair<uint64_t, double>> drops);
  double initial_;
  std::vector<std::pair<uint64_t, double>> drops_;
};

/// Linear KL annealing: the KL term's weight is min(1, step / K) for 0-based step `step`, so it is
/// 0 at the first step, reaches 1 at step K and stays there; K = 0 means the weight is always 1.
/// This is the bayesfunc convention (examples/simple.ipynb: `min(i/500., 1.)` with
/// `for i in range(...)`, notes/reference-implementations.md).
class KlAnnealing {
 public:
  explicit KlAnnealing(uint64_t steps = 0) : steps_(steps) {}
  double weight(uint64_t step) const;
  uint64_t steps() const { return steps_; }

 private:
  uint64_t steps_;
};

}  // namespace dkp::training
