// The memory guard of a run: before the model is built, a lower bound on the memory its training
// step must hold, from the shapes alone, checked against what the process may take
// (platform::available_memory_bytes) or `--max-memory`. A run that cannot fit is refused with the
// bound, the terms it comes from and the options that change it, instead of ending in an
// allocation failure (or the kernel's out-of-memory killer) partway through.
//
// The bound counts only arrays a step must hold at once, so that it does not refuse a run that
// would fit: per layer the inducing points' M x M kernel and its Cholesky factor; for the
// global-inducing DGP, the deep Wishart and inverse Wishart processes and the NNGP, per layer and
// training sample (the NNGP: one) an M x M matrix and the B x M cross terms of the batch's B
// points; for the DSVI and AEP DGPs the B x M cross-covariance per layer and sample (AEP: one);
// for the sparse GP the B x M cross-covariance. Peaks measured with /usr/bin/time (dkp run, 2
// steps) are 2-10 times the bound: e.g. boston DWP-GW depth 2, 50 samples, full batch: 172 MB
// against 44 MB; the DIWP 526 MB; protein SGP with 2000 inducing points 1.9 GB against 0.2 GB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "experiments/run_spec.hpp"

namespace dkp::experiments {

struct MemoryBound {
  double bytes = 0.0;
  std::string terms;  ///< what it is made of, e.g. "10 samples x 2 layers x P^2 / 2, P = 377"
};

/// The lower bound for `spec` on a training set of `n_train` points.
MemoryBound step_memory_lower_bound(const RunSpec& spec, size_t n_train);

/// Throws dkp::ConfigError when the bound exceeds `limit` (bytes; nullopt: no check), naming the
/// bound, its terms, the limit and where it comes from (`limit_source`), and the options that
/// shrink the run (--samples, --inducing, --batch, --depth) or lift the limit (--max-memory).
void check_memory(const RunSpec& spec, size_t n_train, std::optional<uint64_t> limit,
                  const std::string& limit_source);

}  // namespace dkp::experiments
