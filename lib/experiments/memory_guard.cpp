#include "experiments/memory_guard.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "platform/memory.hpp"
#include "util/error.hpp"

namespace dkp::experiments {

MemoryBound step_memory_lower_bound(const RunSpec& spec, size_t n_train) {
  const double n = double(std::max<size_t>(n_train, 1));
  const double m = std::min(double(std::max<long>(spec.protocol.inducing, 0)), n);
  const double b = std::min(double(std::max<long>(spec.protocol.batch, 1)), n);
  const double s = double(std::max<long>(spec.protocol.train_samples, 1));
  const double l = spec.model == "sgp" ? 1.0 : double(std::max(spec.depth, 1));
  const std::string& post = spec.posterior_name();
  constexpr double kDouble = 8.0;
  MemoryBound r;
  // Every model with inducing points: the M x M kernel and its Cholesky factor per layer.
  double doubles = 2.0 * l * m * m;
  auto count = [](double k, const char* what) {
    return fmt::format("{:g} {}{}", k, what, k == 1.0 ? "" : "s");
  };
  std::string terms = fmt::format("2 M^2 x {} (M = {:g})", count(l, "layer"), m);
  if (spec.model == "sgp") {
    doubles += b * m;
    terms += fmt::format(" + B x M (B = {:g})", b);
  } else if (spec.model == "dgp" && (post == "dsvi" || post == "aep")) {
    const double samples = post == "aep" ? 1.0 : s;
    doubles += samples * l * b * m;
    terms += fmt::format(" + B x M x {} x {} (B = {:g})", count(samples, "sample"),
                         count(l, "layer"), b);
  } else if (spec.model == "dgp" || spec.model == "dwp" || spec.model == "diwp" ||
             spec.model == "nngp") {
    const double samples = spec.model == "nngp" ? 1.0 : s;
    doubles += samples * l * (m * m + b * m);
    terms += fmt::format(" + (M^2 + B x M) x {} x {} (B = {:g})", count(samples, "sample"),
                         count(l, "layer"), b);
  }
  r.bytes = doubles * kDouble;
  r.terms = terms + " doubles";
  return r;
}

void check_memory(const RunSpec& spec, size_t n_train, std::optional<uint64_t> limit,
                  const std::string& limit_source) {
  if (!limit) return;
  const MemoryBound b = step_memory_lower_bound(spec, n_train);
  if (b.bytes <= double(*limit)) return;
  throw ConfigError(fmt::format(
      "this run needs at least {} of memory ({}), more than the {} {}; reduce --samples, "
      "--inducing, --batch or --depth, or give --max-memory SIZE (e.g. 64G) to run it anyway",
      platform::format_bytes(b.bytes), b.terms, platform::format_bytes(double(*limit)),
      limit_source));
}

}  // namespace dkp::experiments
