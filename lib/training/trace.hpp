// The training trace: one CSV row every N steps with that step's per-datapoint ELBO estimate (KL
// weight as annealed), its expected log-likelihood and KL terms, the KL weight and the learning
// rate, for ELBO curves (dkp run writes it to <out>/trace.csv, --trace-every N).
//
// The rows hold only quantities fixed by (seed, step), never wall time or the progress line's
// moving average, so a run resumed from a checkpoint writes the same file, byte for byte, as an
// uninterrupted one. Numbers are the shortest decimal text that reads back as the same double.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dkp::training {

struct TraceRow {
  uint64_t step = 0;  ///< 1-based count of completed steps
  double elbo = 0.0;  ///< that step's estimate, expected_loglik - kl_weight * kl
  double expected_loglik = 0.0;
  double kl = 0.0;
  double kl_weight = 0.0;
  double lr = 0.0;
};

/// The header line of the CSV (without the newline).
inline constexpr std::string_view kTraceHeader = "step,elbo,expected_loglik,kl,kl_weight,lr";

/// Rows a trace keeps at most when its period is chosen automatically (dkp run --trace-every auto).
inline constexpr uint64_t kTraceMaxRows = 1000;

/// The automatic trace period of a `steps`-step run: 10, or the smallest multiple of 10 that keeps
/// the trace within kTraceMaxRows rows (a 20,000-step run: every 20 steps). Bounds the size of a
/// cell of the committed result store (about 75 bytes a row).
uint64_t auto_trace_every(uint64_t steps);

/// The CSV text: header, then one line per row.
std::string trace_csv(const std::vector<TraceRow>& rows);

/// Reads trace_csv's text back. Throws dkp::DataError naming `where` and the line on a wrong
/// header, a wrong field count, a malformed number or steps that do not increase.
std::vector<TraceRow> parse_trace_csv(std::string_view text, std::string_view where);

/// The level the iterates hold at the end of training: the mean of the rows' ELBO over the last
/// `fraction` of the `steps` (rows with step > (1 - fraction) steps), with a standard error from
/// `batches` consecutive batch means, since neighbouring iterates are correlated. A final
/// estimate (result.json's elbo, elbo_mean) is one iterate's, and with a constant learning rate
/// the iterates' ELBO can wander by more than that estimate's standard error (the compositional
/// toy's, results/disagreements.md#compositional-toy-levels). nullopt when the window holds fewer
/// than 2 rows per batch, does not reach `steps`, or has a KL weight other than 1; batches >= 2.
struct TailMean {
  double mean = 0.0;
  double se = 0.0;
  size_t rows = 0;
};
std::optional<TailMean> elbo_tail_mean(const std::vector<TraceRow>& rows, uint64_t steps,
                                       double fraction = 0.1, size_t batches = 10);

}  // namespace dkp::training
