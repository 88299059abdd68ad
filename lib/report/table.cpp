#include "report/table.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <boost/math/distributions/fisher_f.hpp>

#include "util/error.hpp"

namespace dkp::report {

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Paired differences a - b over the splits both have.
std::vector<double> paired(const std::map<int, double>& a, const std::map<int, double>& b) {
  std::vector<double> d;
  for (const auto& [split, va] : a) {
    const auto it = b.find(split);
    if (it != b.end()) d.push_back(va - it->second);
  }
  return d;
}

}  // namespace

SampleStats stats_of(const std::vector<double>& x) {
  SampleStats s;
  s.n = x.size();
  if (s.n == 0) return s;
  double sum = 0;
  for (double v : x) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n >= 2) {
    double ss = 0;
    for (double v : x) ss += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(ss / static_cast<double>(s.n - 1));
    s.se = s.sd / std::sqrt(static_cast<double>(s.n));
  }
  return s;
}

bool higher_is_better(const std::string& metric) {
  if (ends_with(metric, "_s") || metric.find("rmse") != std::string::npos ||
      metric.find("error") != std::string::npos) {
    return false;
  }
  return true;
}

std::optional<double> metric_value(const CellRecord& c, const std::string& metric) {
  const auto it = c.values.find(metric);
  if (it != c.values.end() && std::isfinite(it->second)) return it->second;
  if (metric == "test_acc_pct") {  // the papers print accuracy in percent; dkp run a fraction
    const auto a = c.values.find("test_acc");
    if (a != c.values.end() && std::isfinite(a->second)) return 100.0 * a->second;
    return std::nullopt;
  }
  if (metric == "elbo_total" || metric == "elbo_tail_total") {
    // The ELBO summed over the training points (the compositional paper's Table 1), from the
    // mean of the run's final estimates (elbo_mean; elbo, the first, when absent), or for
    // elbo_tail_total from the training trace's mean over the last tenth of the steps
    // (elbo_tail): per-datapoint ELBOs times n_train.
    const bool tail = metric == "elbo_tail_total";
    auto v = c.values.find(tail ? "elbo_tail" : "elbo_mean");
    if (!tail && v == c.values.end()) v = c.values.find("elbo");
    const auto n = c.values.find("n_train");
    if (v == c.values.end() || n == c.values.end() || !std::isfinite(v->second))
      return std::nullopt;
    return v->second * n->second;
  }
  if (metric == "epoch_time_s") {
    // Key names of dkp run (step_s, train_s) and the longer spellings are both accepted.
    auto get = [&](std::initializer_list<const char*> keys) -> std::optional<double> {
      for (const char* k : keys) {
        if (const auto v = c.values.find(k); v != c.values.end() && std::isfinite(v->second)) {
          return v->second;
        }
      }
      return std::nullopt;
    };
    if (const auto e = get({"epoch_s"})) return e;
    const auto n_train = get({"n_train"});
    if (!n_train || *n_train < 1) return std::nullopt;
    const double batch = get({"batch"}).value_or(static_cast<double>(c.batch));
    if (!(batch >= 1)) return std::nullopt;
    const double steps_per_epoch = std::ceil(*n_train / std::min(batch, *n_train));
    if (const auto st = get({"step_time_s", "step_s"})) return *st * steps_per_epoch;
    const auto tt = get({"train_time_s", "train_s"});
    const double steps = get({"steps"}).value_or(static_cast<double>(c.steps));
    if (tt && steps >= 1) return *tt / steps * steps_per_epoch;
  }
  return std::nullopt;
}

std::optional<double> cell_cost_s(const CellRecord& c) {
  auto get = [&](const char* key) -> std::optional<double> {
    const auto it = c.values.find(key);
    if (it == c.values.end() || !std::isfinite(it->second)) return std::nullopt;
    return it->second;
  };
  const auto train = get("train_s");
  if (!train || *train < 0) return std::nullopt;
  double cost = *train;
  const double steps = get("steps").value_or(static_cast<double>(c.steps));
  const double resumed = get("resumed_from_step").value_or(0.0);
  if (resumed > 0 && steps > resumed) cost *= steps / (steps - resumed);
  const auto predict = get("predict_s");
  if (predict && *predict > 0) cost += *predict;
  return cost;
}

bool Selector::matches(const CellRecord& c) const {
  return c.model == model && c.inference == inference && c.posterior == posterior &&
         (inducing == 0 || c.inducing == inducing) && (depth == 0 || c.depth == depth);
}

int Table::incomplete() const {
  int n = 0;
  for (const auto& r : rows)
    for (const auto& e : r.entries)
      if (e.status != "ok" && e.status != "absent") ++n;
  return n;
}

namespace {

// 2 sqrt(sigma_p^2 (1/n + 1/n_p) + r^2): the "mean" rule's tolerance for n of our splits against
// the paper's n_p of split sd sigma_p. Our own scatter does not enter (the spread check tests it).
double mean_tolerance(size_t n, double sigma_p, int n_p, double rounding) {
  const double v =
      sigma_p * sigma_p * (1.0 / static_cast<double>(n) + 1.0 / static_cast<double>(n_p));
  return 2.0 * std::sqrt(v + rounding * rounding);
}

// The spread check: sets the entry's ratio, limit and flag when both spreads are known.
void check_spread(Entry& e, size_t n, double sd, double sigma_p, int n_p) {
  if (n < 2 || n_p < 2 || !(sigma_p > 0)) return;
  e.spread_ratio = (sd * sd) / (sigma_p * sigma_p);
  const boost::math::fisher_f f(static_cast<double>(n - 1), static_cast<double>(n_p - 1));
  e.spread_limit = boost::math::quantile(boost::math::complement(f, 0.01));
  e.wider_spread = *e.spread_ratio > *e.spread_limit;
}

// The paper's printed error as a standard error of its mean, widened by the error's rounding;
// 0 without a printed error.
double paper_se(const RefRow& r, int n_fallback) {
  if (!r.error) return 0.0;
  RefRow widened = r;
  widened.error = std::hypot(*r.error, r.error_rounding_sd());
  return widened.standard_error(n_fallback);
}

bool is_paired_best(const Entry& e) {
  return e.ref && e.ref->error_kind == "2se_paired" && !e.ref->error;
}

void judge_entry(const TableSpec& spec, const Table& t, const Row& row, Entry& e) {
  e.agree = "n/a";
  e.rule.clear();
  e.tolerance.reset();
  e.compared_ours.reset();
  e.compared_paper.reset();
  e.compared_to.clear();
  e.sign_flip = false;
  e.spread_ratio.reset();
  e.spread_limit.reset();
  e.wider_spread = false;
  if (!e.mean || !e.ref || spec.no_verdict) return;
  const RefRow& ref = *e.ref;
  std::vector<double> xs;
  for (const auto& [split, v] : e.by_split) xs.push_back(v);
  const SampleStats ours = stats_of(xs);
  const double r = ref.rounding_sd();
  const std::string& metric = row.metric;
  auto decide = [&](const std::string& rule, double tol, double a, double b) {
    e.rule = rule;
    e.tolerance = tol;
    e.compared_ours = a;
    e.compared_paper = b;
    e.agree = std::fabs(a - b) <= tol ? "yes" : "no";
  };

  if (ref.error_kind == "2se_paired") {
    if (is_paired_best(e)) {
      if (ours.n >= 2) decide("paired-best", 2.0 * std::hypot(ours.se, r), ours.mean, ref.mean);
      return;
    }
    const Entry* best = nullptr;
    for (const auto& o : row.entries)
      if (&o != &e && is_paired_best(o)) best = &o;
    const std::optional<double> sigma_p = ref.spread_sd();
    if (!best || !sigma_p) return;
    const SampleStats d = stats_of(paired(e.by_split, best->by_split));
    if (d.n == 0) return;
    const double rd = std::hypot(r, best->ref->rounding_sd());
    decide("paired", mean_tolerance(d.n, *sigma_p, ref.n_splits, rd), d.mean,
           ref.mean - best->ref->mean);
    e.compared_to = best->column;
    check_spread(e, d.n, d.sd, *sigma_p, ref.n_splits);
    return;
  }
  if (e.n_expected == 1) {
    const auto sd_run = t.run_sd.find(metric);
    if (e.n_done != 1 || sd_run == t.run_sd.end()) return;
    decide("single",
           2.0 * std::sqrt(sd_run->second * sd_run->second + std::pow(paper_se(ref, 1), 2) + r * r),
           ours.mean, ref.mean);
    return;
  }
  const bool difference = spec.columns.at(e.col).minus.has_value();
  const std::optional<double> sigma_p = ref.spread_sd();
  const int n_p = ref.n_splits > 0 ? ref.n_splits : e.n_expected;
  if (sigma_p && n_p >= 2) {
    decide(difference ? "difference" : "mean", mean_tolerance(ours.n, *sigma_p, n_p, r), ours.mean,
           ref.mean);
    check_spread(e, ours.n, ours.sd, *sigma_p, n_p);
  } else if (ours.n >= 2) {
    decide("fallback", 2.0 * std::sqrt(ours.se * ours.se + std::pow(paper_se(ref, n_p), 2) + r * r),
           ours.mean, ref.mean);
  } else {
    return;
  }
  if (difference && ref.error) {
    const double se_p = ref.standard_error(n_p);
    if (std::fabs(ref.mean) > 2.0 * se_p && ours.mean * ref.mean < 0) {
      e.sign_flip = true;
      e.agree = "no";
    }
  }
}

}  // namespace

void judge_table(Table& t) {
  for (auto& row : t.rows)
    for (auto& e : row.entries) judge_entry(t.spec, t, row, e);
}

const std::vector<std::pair<std::string, std::string>>& agreement_rules() {
  static const std::vector<std::pair<std::string, std::string>> rules = {
      {"mean",
       "a mean over n of our splits against the paper's over its n_p, when the paper's "
       "split-to-split sd σ_p is known (from its printed error and kind, the error widened by its "
       "rounding): |ours − paper| ≤ 2 √(σ_p² (1/n + 1/n_p) + r²), r the sd of the paper's "
       "rounding to its printed digits: the difference of two means of n and n_p splits of one "
       "spread, the paper's. Our own scatter does not enter, so a few splits can neither widen "
       "the tolerance by scattering nor narrow it by lying close (the spread check tests our "
       "scatter), and one split is enough"},
      {"difference",
       "a column of paired differences A − B: the mean rule on our per-split differences, and a "
       "disagreement also when the paper's difference exceeds two of its standard errors and "
       "ours has the opposite sign"},
      {"paired",
       "an error printed as two standard errors of the paired difference to the row's best method "
       "(DKP Table 1): our per-split difference to that method against the paper's difference of "
       "printed means, by the mean rule (σ_p of the difference from half the printed error; r of "
       "the two rounded means)"},
      {"paired-best",
       "that best method's own mean, of which the paper prints no error: |ours − paper| ≤ 2 "
       "√(se² + r²), se our standard error over n ≥ 2 splits"},
      {"single",
       "a grid of one split (MNIST, CIFAR-10): our one run against the paper's value, |ours − "
       "paper| ≤ 2 √(sd_run² + e_p² + r²), sd_run our run-to-run sd from the grid's seed "
       "replicates (no verdict without them), e_p the paper's printed error"},
      {"fallback",
       "σ_p unknown (the paper prints no error, or no split count): |ours − paper| ≤ 2 √(se² + "
       "se_p² + r²), se ours over n ≥ 2 splits, se_p the paper's printed error as a standard "
       "error"},
      {"spread",
       "beside the verdict, where σ_p and our s over n ≥ 2 splits are known: ours scatters more "
       "than the paper's when s² / σ_p² exceeds the one-sided 99% point of F(n − 1, n_p − 1)"},
  };
  return rules;
}

void apply_replicates(std::vector<Table>& tables) {
  for (auto& rep : tables) {
    if (rep.replicate_of.empty()) continue;
    Table* base = nullptr;
    for (auto& t : tables)
      if (t.spec.name == rep.replicate_of && &t != &rep) base = &t;
    if (!base) continue;
    std::map<std::string, std::pair<double, int>> ss;  // metric -> sum (a - b)^2 / 2, pairs
    std::vector<std::string> used;
    for (const auto& rr : rep.rows) {
      for (const auto& br : base->rows) {
        if (br.metric != rr.metric || br.dataset != rr.dataset || br.kernel != rr.kernel ||
            br.depth != rr.depth)
          continue;
        for (const auto& re : rr.entries) {
          if (re.col >= br.entries.size() || re.n_expected != 1) continue;
          const Entry& be = br.entries[re.col];
          for (const auto& [split, a] : re.by_split) {
            const auto b = be.by_split.find(split);
            if (b == be.by_split.end()) continue;
            auto& [sum, n] = ss[rr.metric];
            sum += (a - b->second) * (a - b->second) / 2.0;
            ++n;
            const std::string cell = fmt::format("{} {}", br.dataset, re.column);
            if (!has(used, cell)) used.push_back(cell);
          }
        }
      }
    }
    if (ss.empty()) continue;
    std::map<std::string, double> sd;
    int pairs = 0;
    for (const auto& [metric, acc] : ss) {
      sd[metric] = std::sqrt(acc.first / acc.second);
      pairs = std::max(pairs, acc.second);
    }
    std::string cells;
    for (const auto& c : used) cells += (cells.empty() ? "" : ", ") + c;
    const std::string note =
        fmt::format("run-to-run sd from {} pair{} of seed replicates (table {} against {}: {})",
                    pairs, pairs == 1 ? "" : "s", rep.spec.name, base->spec.name, cells);
    for (Table* t : {base, &rep}) {
      t->run_sd = sd;
      t->run_sd_note = note;
      judge_table(*t);
    }
  }
}

std::string format_fixed(std::optional<double> x, int decimals) {
  if (!x) return "";
  std::string s = fmt::format("{:.{}f}", *x, decimals);
  // "-0.00" -> "0.00": a sign on a printed zero is noise.
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s = s.substr(1);
  return s;
}

std::string format_value(std::optional<double> x, const TableSpec& spec, const std::string& metric,
                         int extra) {
  const int decimals = spec.decimals + extra;
  if (!x) return "";
  if (std::find(spec.scientific.begin(), spec.scientific.end(), metric) != spec.scientific.end())
    return fmt::format("{:.{}e}", *x, decimals);
  return format_fixed(x, decimals);
}

Table build_table(const TableSpec& spec, const std::vector<CellRecord>& cells,
                  const std::vector<RefRow>& refs) {
  Table t;
  t.spec = spec;
  const bool rk_kernel = has(spec.row_keys, "kernel");
  const bool rk_depth = has(spec.row_keys, "depth");
  auto depth_ok = [&](int d) {
    return spec.depths.empty() ||
           std::find(spec.depths.begin(), spec.depths.end(), d) != spec.depths.end();
  };
  auto in_table = [&](const CellRecord& c) {
    if (!depth_ok(c.depth)) return false;
    for (const auto& col : spec.columns) {
      if (col.sel.matches(c) || (col.minus && col.minus->matches(c))) return true;
    }
    return false;
  };

  // Row keys in first-seen order (datasets, kernels) and ascending depth.
  std::vector<std::string> kernels, datasets;
  std::set<int> depth_set;
  for (const auto& c : cells) {
    if (!in_table(c)) continue;
    if (!has(datasets, c.dataset)) datasets.push_back(c.dataset);
    if (!has(kernels, c.kernel)) kernels.push_back(c.kernel);
    depth_set.insert(c.depth);
  }
  const std::vector<std::string> kernel_rows = rk_kernel ? kernels : std::vector<std::string>{""};
  const std::vector<int> depth_rows =
      rk_depth ? std::vector<int>(depth_set.begin(), depth_set.end()) : std::vector<int>{0};

  for (const auto& metric : spec.metrics) {
    for (const auto& kernel : kernel_rows) {
      for (const auto& dataset : datasets) {
        for (int depth : depth_rows) {
          Row row;
          row.metric = metric;
          row.kernel = kernel;
          row.dataset = dataset;
          row.depth = depth;
          bool any = false;
          for (size_t ci = 0; ci < spec.columns.size(); ++ci) {
            const ColumnSpec& col = spec.columns[ci];
            Entry e;
            e.column = col.label;
            e.col = ci;
            auto cell_in_row = [&](const CellRecord& c, const Selector& sel) {
              if (c.dataset != dataset || !depth_ok(c.depth) || !sel.matches(c)) return false;
              if (rk_kernel && c.kernel != kernel) return false;
              if (rk_depth && c.depth != depth) return false;
              return true;
            };
            // Per-split state and value of the column's (first) selector and of `minus`.
            std::map<int, std::string> state_a, state_b;
            std::map<int, double> val_a, val_b, cost_a, cost_b;
            for (const auto& c : cells) {
              if (cell_in_row(c, col.sel)) {
                state_a[c.split] = c.state;
                if (e.depth == 0) e.depth = c.depth;
                if (c.state == "done") {
                  if (const auto v = metric_value(c, metric)) val_a[c.split] = *v;
                  if (const auto s = cell_cost_s(c)) cost_a[c.split] = *s;
                }
              }
              if (col.minus && cell_in_row(c, *col.minus)) {
                state_b[c.split] = c.state;
                if (c.state == "done") {
                  if (const auto v = metric_value(c, metric)) val_b[c.split] = *v;
                  if (const auto s = cell_cost_s(c)) cost_b[c.split] = *s;
                }
              }
            }
            if (col.minus) {
              for (const auto& [split, st] : state_a) {
                if (!state_b.count(split)) continue;
                ++e.n_expected;
                e.planned_splits.push_back(split);
                const std::string& sb = state_b[split];
                if (val_a.count(split) && val_b.count(split)) {
                  e.by_split[split] = val_a[split] - val_b[split];
                  if (cost_a.count(split) && cost_b.count(split)) {
                    e.cost_by_split[split] = cost_a[split] + cost_b[split];
                  }
                } else if (st == "damaged" || sb == "damaged") {
                  ++e.n_damaged;
                } else if (st == "stale" || sb == "stale") {
                  ++e.n_stale;
                } else if (st == "failed" || sb == "failed") {
                  ++e.n_failed;
                } else if (st == "running" || sb == "running") {
                  ++e.n_running;
                }
              }
            } else {
              for (const auto& [split, st] : state_a) {
                ++e.n_expected;
                e.planned_splits.push_back(split);
                if (val_a.count(split)) {
                  e.by_split[split] = val_a[split];
                  if (cost_a.count(split)) e.cost_by_split[split] = cost_a[split];
                } else if (st == "damaged") {
                  ++e.n_damaged;
                } else if (st == "stale") {
                  ++e.n_stale;
                } else if (st == "failed") {
                  ++e.n_failed;
                } else if (st == "running") {
                  ++e.n_running;
                }
              }
            }
            if (rk_depth) e.depth = depth;
            e.n_done = static_cast<int>(e.by_split.size());
            if (e.n_expected > 0) any = true;
            std::vector<double> xs;
            for (const auto& [s, v] : e.by_split) xs.push_back(v);
            const SampleStats st = stats_of(xs);
            if (st.n >= 1) e.mean = st.mean;
            if (st.n >= 2) {
              e.sd = st.sd;
              e.se = st.se;
            }
            if (e.n_expected == 0) {
              e.status = "absent";  // not a cell of this grid
            } else if (e.n_done == e.n_expected) {
              e.status = "ok";
            } else if (e.n_done > 0) {
              e.status = "partial";
            } else if (e.n_damaged > 0) {
              e.status = "damaged";
            } else if (e.n_stale > 0) {
              e.status = "stale";
            } else if (e.n_failed > 0) {
              e.status = "failed";
            } else if (e.n_running > 0) {
              e.status = "running";
            } else {
              e.status = "missing";
            }
            // Reference value.
            const std::string ref_metric = col.ref_metric.empty() ? metric : col.ref_metric;
            // The first reference of each origin (the paper's, the reference code's) for the entry.
            const auto find_ref = [&](const std::string& origin) -> const RefRow* {
              for (const auto& r : refs) {
                if (r.origin != origin || r.paper != spec.paper) continue;
                if (!spec.paper_table.empty() && r.table != spec.paper_table) continue;
                if (r.dataset != dataset || r.metric != ref_metric) continue;
                if (r.model != col.ref_model || r.posterior != col.ref_posterior) continue;
                if (r.depth != 0 && r.depth != e.depth) continue;
                if (rk_kernel && !r.kernel.empty() && r.kernel != kernel) continue;
                return &r;
              }
              return nullptr;
            };
            if (const RefRow* r = find_ref("paper")) {
              e.ref = *r;
              e.ref_se = r->standard_error(e.n_expected);
            }
            if (const RefRow* r = find_ref("code")) e.code_ref = *r;
            row.entries.push_back(std::move(e));
          }
          if (!any) continue;

          // Best method, the table's error convention, bold.
          const bool higher = higher_is_better(metric);
          bool differences = false;
          for (const auto& col : spec.columns)
            if (col.minus) differences = true;
          int best = -1;
          if (!differences) {
            for (size_t i = 0; i < row.entries.size(); ++i) {
              const auto& e = row.entries[i];
              if (!e.mean) continue;
              if (best < 0 || (higher ? *e.mean > *row.entries[best].mean
                                      : *e.mean < *row.entries[best].mean)) {
                best = static_cast<int>(i);
              }
            }
          }
          if (best >= 0) row.entries[best].best = true;
          for (auto& e : row.entries) {
            switch (spec.convention) {
              case Convention::se:
                if (e.se) {
                  e.shown_error = e.se;
                  e.shown_error_kind = "se";
                }
                break;
              case Convention::sd:
                if (e.sd) {
                  e.shown_error = e.sd;
                  e.shown_error_kind = "sd";
                }
                break;
              case Convention::paired2se:
                if (best >= 0 && !e.best && e.mean) {
                  const auto d = paired(e.by_split, row.entries[best].by_split);
                  const SampleStats sd = stats_of(d);
                  if (sd.n >= 2) {
                    e.shown_error = 2.0 * sd.se;
                    e.shown_error_kind = "2se_paired";
                  }
                }
                break;
            }
          }
          if (best >= 0 && spec.bold != BoldRule::none) {
            auto& b = row.entries[best];
            if (spec.bold == BoldRule::best) {
              // Every method that prints the best value (ties at the printed precision), unless
              // every method prints the same value.
              const std::string top = format_value(b.mean, spec, row.metric);
              int with_values = 0, tied = 0;
              for (const auto& e : row.entries) {
                if (!e.mean) continue;
                ++with_values;
                tied += format_value(e.mean, spec, row.metric) == top;
              }
              if (!(tied == with_values && with_values > 1)) {
                for (auto& e : row.entries) {
                  if (e.mean && format_value(e.mean, spec, row.metric) == top) e.bold = true;
                }
              }
            } else {
              bool bold = true;
              for (const auto& e : row.entries) {
                if (&e == &b || !e.mean) continue;
                const SampleStats sd = stats_of(paired(b.by_split, e.by_split));
                if (sd.n < 2 || std::fabs(sd.mean) <= 2.0 * sd.se) bold = false;
              }
              b.bold = bold;
            }
          }
          // Agreement with the reference code, over the splits it was measured on (all of ours
          // when it names none): a single run each is compared within two of the code's se.
          for (auto& e : row.entries) {
            if (!e.code_ref) continue;
            std::vector<double> v;
            bool all = true;
            if (e.code_ref->splits.empty()) {
              for (const auto& [split, x] : e.by_split) v.push_back(x);
              all = e.n_done == e.n_expected;
            } else {
              for (int split : e.code_ref->splits) {
                const auto it = e.by_split.find(split);
                if (it == e.by_split.end()) {
                  all = false;
                } else {
                  v.push_back(it->second);
                }
              }
            }
            e.code_agree = "n/a";
            if (!all || v.empty()) continue;
            const SampleStats st = stats_of(v);
            e.code_ours = st.mean;
            if (st.n >= 2) e.code_ours_se = st.se;
            e.code_ref_se = e.code_ref->standard_error(int(v.size()));
            const double ours_se = st.n >= 2 ? st.se : 0.0;
            const double tol = 2.0 * std::sqrt(ours_se * ours_se + e.code_ref_se * e.code_ref_se);
            if (tol > 0) e.code_agree = std::fabs(st.mean - e.code_ref->mean) <= tol ? "yes" : "no";
          }
          t.rows.push_back(std::move(row));
        }
      }
    }
  }
  judge_table(t);
  return t;
}

}  // namespace dkp::report
