#include "training/trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/parse.hpp"

namespace dkp::training {

std::string trace_csv(const std::vector<TraceRow>& rows) {
  std::string out(kTraceHeader);
  out += '\n';
  for (const TraceRow& r : rows) {
    // fmt's "{}" is the shortest text that reads back as the same double.
    out += fmt::format("{},{},{},{},{},{}\n", r.step, r.elbo, r.expected_loglik, r.kl, r.kl_weight,
                       r.lr);
  }
  return out;
}

std::vector<TraceRow> parse_trace_csv(std::string_view text, std::string_view where) {
  std::vector<TraceRow> rows;
  size_t line_no = 0;
  bool header = true;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (header) {
      if (line != kTraceHeader) {
        throw DataError(
            fmt::format("{}:1: header is '{}', expected '{}'", where, line, kTraceHeader));
      }
      header = false;
      continue;
    }
    std::vector<std::string_view> f;
    for (size_t start = 0;;) {
      const size_t comma = line.find(',', start);
      f.push_back(line.substr(start, comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (f.size() != 6) {
      throw DataError(
          fmt::format("{}:{}: {} fields, expected 6 ({})", where, line_no, f.size(), kTraceHeader));
    }
    TraceRow r;
    const auto [end, ec] = std::from_chars(f[0].data(), f[0].data() + f[0].size(), r.step);
    if (ec != std::errc() || end != f[0].data() + f[0].size() || f[0].empty()) {
      throw DataError(fmt::format("{}:{}: step is '{}', expected a count", where, line_no, f[0]));
    }
    double* dst[] = {&r.elbo, &r.expected_loglik, &r.kl, &r.kl_weight, &r.lr};
    for (size_t k = 0; k < 5; ++k) {
      const auto v = util::parse_double(f[k + 1]);
      if (!v) {
        throw DataError(fmt::format("{}:{}: field {} is '{}', expected a number", where, line_no,
                                    k + 2, f[k + 1]));
      }
      *dst[k] = *v;
    }
    if (!rows.empty() && r.step <= rows.back().step) {
      throw DataError(fmt::format("{}:{}: step {} does not follow step {}", where, line_no, r.step,
                                  rows.back().step));
    }
    rows.push_back(r);
  }
  if (header) throw DataError(fmt::format("{}: empty trace (no header)", where));
  return rows;
}

uint64_t auto_trace_every(uint64_t steps) {
  const uint64_t tens = (steps + 10 * kTraceMaxRows - 1) / (10 * kTraceMaxRows);
  return 10 * std::max<uint64_t>(1, tens);
}

}  // namespace dkp::training

namespace dkp::training {

std::optional<TailMean> elbo_tail_mean(const std::vector<TraceRow>& rows, uint64_t steps,
                                       double fraction, size_t batches) {
  if (rows.empty() || steps == 0 || batches < 2 || !(fraction > 0.0 && fraction <= 1.0) ||
      rows.back().step != steps) {
    return std::nullopt;
  }
  const double from = (1.0 - fraction) * static_cast<double>(steps);
  std::vector<double> x;
  for (const TraceRow& r : rows) {
    if (static_cast<double>(r.step) <= from) continue;
    if (r.kl_weight != 1.0 || !std::isfinite(r.elbo)) return std::nullopt;
    x.push_back(r.elbo);
  }
  if (x.size() < 2 * batches) return std::nullopt;
  TailMean t;
  t.rows = x.size();
  for (double v : x) t.mean += v;
  t.mean /= static_cast<double>(x.size());
  // Batch means of (nearly) equal consecutive runs of rows; their sample sd over sqrt(batches).
  std::vector<double> means(batches, 0.0);
  for (size_t b = 0; b < batches; ++b) {
    const size_t lo = b * x.size() / batches, hi = (b + 1) * x.size() / batches;
    for (size_t i = lo; i < hi; ++i) means[b] += x[i];
    means[b] /= static_cast<double>(hi - lo);
  }
  double bm = 0.0, ss = 0.0;
  for (double m : means) bm += m;
  bm /= static_cast<double>(batches);
  for (double m : means) ss += (m - bm) * (m - bm);
  t.se = std::sqrt(ss / static_cast<double>(batches - 1) / static_cast<double>(batches));
  return t;
}

}  // namespace dkp::training
