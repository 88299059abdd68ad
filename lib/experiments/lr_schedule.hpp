// Learning-rate schedules: piecewise constant, written "0:0.01,10000:0.001" (dkp run
// --lr-schedule) or [[0, 0.01], [10000, 0.001]] (a grid's protocol.lr_schedule).
#pragma once

#include <string>
#include <vector>

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
/// The checks parse_lr_schedule makes (first step 0, steps strictly increasing, learning rates
/// finite and positive), for a schedule from elsewhere; `where` prefixes the ConfigError's message.
void check_lr_schedule(const std::vector<LrPoint>& schedule, const std::string& where);

}  // namespace dkp::experiments
