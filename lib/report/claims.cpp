#include "report/claims.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <boost/math/distributions/students_t.hpp>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"

namespace dkp::report {

namespace {

const std::vector<std::string> kClaimKeys = {
    "id",     "paper", "quote",     "section",  "note",   "table",   "metric",
    "better", "worse", "direction", "datasets", "depths", "kernels", "paper_metric",
};
const std::vector<std::string> kRequired = {"id",     "paper",  "quote", "section",  "table",
                                            "metric", "better", "worse", "direction"};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string join(const std::vector<std::string>& v, const std::string& sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// Reads claims.yaml's nodes with messages "file:line: ...key...".
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  std::string at(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return m.line < 0 ? file_ : fmt::format("{}:{}", file_, m.line + 1);
  }
  [[noreturn]] void fail(const YAML::Node& n, const std::string& key,
                         const std::string& msg) const {
    throw ConfigError(fmt::format("{}: key '{}': {}", at(n), key, msg));
  }
  std::string scalar(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string");
    if (n.Scalar().empty()) fail(n, key, "empty");
    return n.Scalar();
  }
  // A scalar or a non-empty list of scalars.
  std::vector<std::string> list(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsSequence()) {
      if (n.size() == 0) fail(n, key, "the list is empty");
      for (size_t i = 0; i < n.size(); ++i) {
        const std::string v = scalar(n[i], fmt::format("{}[{}]", key, i));
        if (has(out, v)) fail(n[i], key, fmt::format("'{}' is listed twice", v));
        out.push_back(v);
      }
    } else {
      out.push_back(scalar(n, key));
    }
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

Claim parse_claim(const Reader& R, const YAML::Node& node, size_t index) {
  const std::string path = fmt::format("claims[{}]", index);
  if (!node.IsMap()) R.fail(node, path, "expected a mapping (one claim)");
  Claim c;
  c.source = R.at(node);
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;
    const std::string name = k.IsScalar() ? k.Scalar() : std::string("?");
    if (!has(kClaimKeys, name)) {
      R.fail(k, path + "." + name, fmt::format("unknown key (allowed: {})", join(kClaimKeys)));
    }
    if (c.where.count(name)) R.fail(k, path + "." + name, "duplicate key");
    c.where[name] = R.at(it->second);
  }
  for (const auto& k : kRequired) {
    if (!node[k]) R.fail(node, path + "." + k, "missing (required: " + join(kRequired) + ")");
  }
  c.id = R.scalar(node["id"], path + ".id");
  const std::string p = "claim '" + c.id + "' ";
  for (const char ch : c.id) {
    if (!(std::islower(static_cast<unsigned char>(ch)) ||
          std::isdigit(static_cast<unsigned char>(ch)) || ch == '-')) {
      R.fail(node["id"], p + "id", "use lower-case letters, digits and '-' (it is an anchor)");
    }
  }
  c.paper = R.scalar(node["paper"], p + "paper");
  c.quote = R.scalar(node["quote"], p + "quote");
  c.section = R.scalar(node["section"], p + "section");
  if (node["note"]) c.note = R.scalar(node["note"], p + "note");
  c.table = R.scalar(node["table"], p + "table");
  c.metrics = R.list(node["metric"], p + "metric");
  if (node["paper_metric"]) {
    c.paper_metric = R.scalar(node["paper_metric"], p + "paper_metric");
    if (c.metrics.size() != 1) {
      R.fail(node["paper_metric"], p + "paper_metric", "needs exactly one tested metric");
    }
  }
  c.better = R.list(node["better"], p + "better");
  c.worse = R.list(node["worse"], p + "worse");
  for (const auto& b : c.better) {
    if (has(c.worse, b)) R.fail(node["worse"], p + "worse", "'" + b + "' is also in better");
  }
  const std::string dir = R.scalar(node["direction"], p + "direction");
  if (dir != "higher" && dir != "lower") {
    R.fail(node["direction"], p + "direction", "'" + dir + "' is not one of: higher, lower");
  }
  c.higher = dir == "higher";
  for (const auto& m : c.metrics) {
    if (higher_is_better(m) != c.higher) {
      R.fail(node["direction"], p + "direction",
             fmt::format("'{}' does not follow the metric {} ({} is better)", dir, m,
                         higher_is_better(m) ? "higher" : "lower"));
    }
  }
  if (node["datasets"]) c.datasets = R.list(node["datasets"], p + "datasets");
  if (node["kernels"]) c.kernels = R.list(node["kernels"], p + "kernels");
  if (node["depths"]) {
    for (const auto& s : R.list(node["depths"], p + "depths")) {
      const auto d = util::parse_integer(s);
      if (!d || *d < 1 || *d > 100) {
        R.fail(node["depths"], p + "depths", "'" + s + "' is not a depth (1..100)");
      }
      c.depths.push_back(static_cast<int>(*d));
    }
  }
  return c;
}

// Where a claim's key is, for messages of the evaluation.
std::string where(const Claim& c, const std::string& key) {
  const auto it = c.where.find(key);
  return it != c.where.end() ? it->second : c.source;
}

[[noreturn]] void fail_claim(const Claim& c, const std::string& key, const std::string& msg) {
  throw ConfigError(fmt::format("{}: key '{}' of claim '{}': {}", where(c, key), key, c.id, msg));
}

std::string row_label(const Table& t, const Row& r, bool with_metric) {
  std::vector<std::string> parts;
  if (with_metric) parts.push_back(metric_title(r.metric));
  if (!r.kernel.empty()) parts.push_back(r.kernel);
  parts.push_back(r.dataset);
  if (std::find(t.spec.row_keys.begin(), t.spec.row_keys.end(), "depth") != t.spec.row_keys.end()) {
    parts.push_back(fmt::format("depth {}", r.depth));
  }
  return join(parts);
}

const Entry* entry_of(const Row& r, const std::string& label) {
  for (const auto& e : r.entries) {
    if (e.column == label) return &e;
  }
  return nullptr;
}

// The row of `t` that holds the paper's values for row r: r, or with paper_metric the row of that
// metric with r's dataset, kernel and depth (nullptr when there is none).
const Row* paper_row_of(const Table& t, const Row& r, const std::string& paper_metric) {
  if (paper_metric.empty()) return &r;
  for (const auto& o : t.rows) {
    if (o.metric == paper_metric && o.dataset == r.dataset && o.kernel == r.kernel &&
        o.depth == r.depth) {
      return &o;
    }
  }
  return nullptr;
}

double mean_of(const std::map<int, double>& m) {
  double s = 0;
  for (const auto& [k, v] : m) s += v;
  return s / static_cast<double>(m.size());
}

// The cost in CPU hours of the cells missing for the first `k` planned splits (of both entries)
// that are not yet paired; each missing cell priced at its column's mean stored cost per split.
// nullopt when a missing cell's column has no timed cell.
std::optional<double> cost_of_more(const Entry& a, const Entry& b, const std::vector<int>& planned,
                                   const std::set<int>& paired, int k) {
  double seconds = 0;
  int taken = 0;
  for (int split : planned) {
    if (taken == k) break;
    if (paired.count(split)) continue;
    ++taken;
    for (const Entry* e : {&a, &b}) {
      if (e->by_split.count(split)) continue;
      if (e->cost_by_split.empty()) return std::nullopt;
      seconds += mean_of(e->cost_by_split);
    }
  }
  return seconds / 3600.0;
}

// `paper_row`: the row whose entries carry the paper's values (r itself, or the row of the
// claim's paper_metric); nullptr when the table has none.
ClaimRow compare(const Claim& c, const Row& r, const Entry& b, const Entry& w,
                 const Row* paper_row) {
  ClaimRow x;
  x.metric = r.metric;
  x.dataset = r.dataset;
  x.kernel = r.kernel;
  x.depth = r.depth;
  x.better = b.column;
  x.worse = w.column;
  const double sign = c.higher ? 1.0 : -1.0;
  const Entry* pb = paper_row ? entry_of(*paper_row, b.column) : nullptr;
  const Entry* pw = paper_row ? entry_of(*paper_row, w.column) : nullptr;
  if (pb && pw && pb->ref && pw->ref) x.paper_effect = sign * (pb->ref->mean - pw->ref->mean);
  std::vector<double> d;
  std::set<int> paired;
  for (const auto& [split, vb] : b.by_split) {
    const auto it = w.by_split.find(split);
    if (it == w.by_split.end()) continue;
    d.push_back(sign * (vb - it->second));
    paired.insert(split);
  }
  x.test = paired_t_test(d);
  std::vector<int> planned;
  for (int s : b.planned_splits) {
    if (std::find(w.planned_splits.begin(), w.planned_splits.end(), s) != w.planned_splits.end())
      planned.push_back(s);
  }
  x.planned = static_cast<int>(planned.size());
  if (x.test.lo && *x.test.lo > 0) {
    x.verdict = Verdict::supported;
  } else if (x.test.hi && *x.test.hi < 0) {
    x.verdict = Verdict::contradicted;
  } else {
    x.verdict = Verdict::undecided;
  }
  if (x.verdict != Verdict::undecided) return x;
  const int n = x.test.n;
  int target = 0;  // pairs to have
  if (n >= 2) {
    x.pairs_needed = pairs_to_decide(x.test.mean, x.test.sd);
    target = x.pairs_needed && *x.pairs_needed <= x.planned ? static_cast<int>(*x.pairs_needed)
                                                            : x.planned;
  } else {
    target = std::min(n + 1, x.planned);
  }
  x.more_splits = std::max(0, target - n);
  if (x.more_splits > 0) x.cost_h = cost_of_more(b, w, planned, paired, x.more_splits);
  return x;
}

std::string signed_value(double x, const ClaimResult& r, const std::string& metric) {
  TableSpec spec;
  spec.decimals = r.decimals;
  if (r.scientific) spec.scientific = {metric};
  // One place more than the table prints, up to four.
  std::string s = format_value(x, spec, metric, r.decimals < 4 ? 1 : 0);
  if (s.find_first_not_of("-0.e+") != std::string::npos && x > 0) s = "+" + s;
  return s;
}

std::string cost_text(double h) {
  return h < 0.1 ? fmt::format("{:.2f} CPU h", h) : fmt::format("{:.1f} CPU h", h);
}

std::string bold_verdict(Verdict v) {
  return "**" + verdict_name(v) + "**";
}

}  // namespace

std::vector<Claim> parse_claims(const std::string& text, const std::string& filename) {
  Reader R(filename);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}: invalid YAML: {}", filename, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap() || !root["claims"]) {
    throw ConfigError(
        fmt::format("{}: key 'claims': expected a mapping with a list 'claims'", filename));
  }
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string k = it->first.IsScalar() ? it->first.Scalar() : "?";
    if (k != "claims") R.fail(it->first, k, "unknown key (allowed: claims)");
  }
  const YAML::Node list = root["claims"];
  if (!list.IsSequence() || list.size() == 0) R.fail(list, "claims", "expected a non-empty list");
  std::vector<Claim> out;
  std::set<std::string> ids;
  for (size_t i = 0; i < list.size(); ++i) {
    Claim c = parse_claim(R, list[i], i);
    if (!ids.insert(c.id).second) {
      R.fail(list[i]["id"], "claim '" + c.id + "' id", "duplicate id");
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Claim> load_claims(const std::filesystem::path& file) {
  return parse_claims(util::read_file(file), file.string());
}

double t_quantile_975(int df) {
  const boost::math::students_t dist(static_cast<double>(df));
  return boost::math::quantile(dist, 0.975);
}

PairedTest paired_t_test(const std::vector<double>& d) {
  const SampleStats st = stats_of(d);
  PairedTest t;
  t.n = static_cast<int>(st.n);
  t.mean = st.mean;
  if (t.n < 2) return t;
  t.sd = st.sd;
  const double half = t_quantile_975(t.n - 1) * st.se;
  t.lo = t.mean - half;
  t.hi = t.mean + half;
  return t;
}

std::optional<long> pairs_to_decide(double mean, double sd) {
  const double m = std::fabs(mean);
  if (!(m > 0)) return std::nullopt;
  if (!(sd > 0)) return 2;
  // t_{n-1} > z = 1.959964 for every n, so no n <= (z sd / m)^2 decides: start there.
  const double z = 1.959963984540054;
  const double start = std::floor(z * z * sd * sd / (m * m));
  if (start > 1e9) return std::nullopt;
  for (long n = std::max(2L, static_cast<long>(start)); n <= 1000000000L; ++n) {
    if (t_quantile_975(static_cast<int>(n - 1)) * sd / std::sqrt(static_cast<double>(n)) < m) {
      return n;
    }
  }
  return std::nullopt;
}

std::string verdict_name(Verdict v) {
  switch (v) {
    case Verdict::supported:
      return "supported";
    case Verdict::contradicted:
      return "contradicted";
    case Verdict::undecided:
      break;
  }
  return "undecided";
}

Verdict claim_verdict(const std::vector<ClaimRow>& rows) {
  int testable = 0, supported = 0;
  for (const auto& r : rows) {
    if (r.verdict == Verdict::contradicted) return Verdict::contradicted;
    if (r.test.n >= 2) ++testable;
    if (r.verdict == Verdict::supported) ++supported;
  }
  return 2 * supported > testable && testable > 0 ? Verdict::supported : Verdict::undecided;
}

std::vector<ClaimResult> evaluate_claims(const std::vector<Claim>& claims,
                                         const std::vector<Table>& tables) {
  std::vector<ClaimResult> out;
  for (const auto& c : claims) {
    ClaimResult res;
    res.claim = c;
    const Table* t = nullptr;
    for (const auto& x : tables) {
      if (!x.extra && x.spec.name == c.table) t = &x;
    }
    if (!t) {
      out.push_back(std::move(res));
      continue;
    }
    res.evaluated = true;
    res.table_title = t->spec.title;
    res.decimals = t->spec.decimals;
    if (t->spec.paper != c.paper) {
      fail_claim(
          c, "paper",
          fmt::format("'{}' is not the paper of table {} ('{}')", c.paper, c.table, t->spec.paper));
    }
    for (const auto& m : c.metrics) {
      if (!has(t->spec.metrics, m)) {
        fail_claim(c, "metric",
                   fmt::format("'{}' is not a metric of table {} (metrics: {})", m, c.table,
                               join(t->spec.metrics)));
      }
      if (has(t->spec.scientific, m)) res.scientific = true;
    }
    if (!c.paper_metric.empty() && !has(t->spec.metrics, c.paper_metric)) {
      fail_claim(c, "paper_metric",
                 fmt::format("'{}' is not a metric of table {} (metrics: {})", c.paper_metric,
                             c.table, join(t->spec.metrics)));
    }
    std::vector<std::string> labels;
    for (const auto& col : t->spec.columns) labels.push_back(col.label);
    for (const auto& key : {"better", "worse"}) {
      for (const auto& l : std::string(key) == "better" ? c.better : c.worse) {
        if (!has(labels, l)) {
          fail_claim(c, key,
                     fmt::format("'{}' is not a column of table {} (columns: {})", l, c.table,
                                 join(labels)));
        }
      }
    }
    // Every row filter value must name rows of the table (a typo would select nothing).
    for (const auto& d : c.datasets) {
      if (std::none_of(t->rows.begin(), t->rows.end(),
                       [&](const Row& r) { return r.dataset == d; })) {
        fail_claim(c, "datasets", fmt::format("'{}' is not a dataset of table {}", d, c.table));
      }
    }
    for (const auto& k : c.kernels) {
      if (std::none_of(t->rows.begin(), t->rows.end(),
                       [&](const Row& r) { return r.kernel == k; })) {
        fail_claim(c, "kernels", fmt::format("'{}' is not a kernel of table {}", k, c.table));
      }
    }
    for (int dep : c.depths) {
      if (std::none_of(t->rows.begin(), t->rows.end(), [&](const Row& r) {
            for (const auto& e : r.entries)
              if (e.depth == dep) return true;
            return r.depth == dep;
          })) {
        fail_claim(c, "depths", fmt::format("{} is not a depth of table {}", dep, c.table));
      }
    }
    const bool with_metric = c.metrics.size() > 1;
    for (const auto& r : t->rows) {
      if (!has(c.metrics, r.metric)) continue;
      if (!c.datasets.empty() && !has(c.datasets, r.dataset)) continue;
      if (!c.kernels.empty() && !has(c.kernels, r.kernel)) continue;
      int in_row = 0;
      std::vector<std::string> missing;  // the row's comparisons without a pair
      for (const auto& bl : c.better) {
        for (const auto& wl : c.worse) {
          const Entry* b = entry_of(r, bl);
          const Entry* w = entry_of(r, wl);
          if (!b || !w || b->status == "absent" || w->status == "absent") continue;
          if (!c.depths.empty() &&
              std::find(c.depths.begin(), c.depths.end(), b->depth) == c.depths.end()) {
            continue;
          }
          ++in_row;
          ClaimRow x = compare(c, r, *b, *w, paper_row_of(*t, r, c.paper_metric));
          if (x.test.n == 0) {
            missing.push_back(bl + " − " + wl);
            continue;
          }
          res.rows.push_back(std::move(x));
        }
      }
      if (missing.empty()) continue;
      res.n_not_computed += static_cast<int>(missing.size());
      std::string label = row_label(*t, r, with_metric);
      if (static_cast<int>(missing.size()) < in_row) label += " (" + join(missing) + ")";
      res.not_computed.push_back(label);
    }
    for (const auto& x : res.rows) {
      res.supported += x.verdict == Verdict::supported;
      res.contradicted += x.verdict == Verdict::contradicted;
      res.undecided += x.verdict == Verdict::undecided;
    }
    res.verdict = claim_verdict(res.rows);
    out.push_back(std::move(res));
  }
  return out;
}

ClaimCounts count_claims(const std::vector<ClaimResult>& results) {
  ClaimCounts n;
  for (const auto& r : results) {
    if (!r.evaluated) {
      ++n.not_evaluated;
    } else if (r.verdict == Verdict::supported) {
      ++n.supported;
    } else if (r.verdict == Verdict::contradicted) {
      ++n.contradicted;
    } else {
      ++n.undecided;
    }
  }
  return n;
}

std::string claim_counts_text(const ClaimCounts& c) {
  std::string s = fmt::format("{} supported, {} contradicted, {} undecided", c.supported,
                              c.contradicted, c.undecided);
  if (c.not_evaluated > 0) s += fmt::format(", {} not evaluated", c.not_evaluated);
  return s;
}

namespace {

// A comparison's row as the claim tables name it: metric (when the claim has several), kernel,
// dataset, depth.
std::string row_label(const Claim& c, const ClaimRow& x) {
  std::vector<std::string> parts;
  if (c.metrics.size() > 1) parts.push_back(metric_title(x.metric));
  if (!x.kernel.empty()) parts.push_back(x.kernel);
  parts.push_back(x.dataset);
  if (x.depth > 0) parts.push_back(fmt::format("depth {}", x.depth));
  return join(parts);
}

// The undecided comparisons that the protocol's remaining splits would decide at their observed
// mean and spread, cheapest first (at most `limit`): where CPU decides the most per hour.
std::string cheapest_decisions(const std::vector<ClaimResult>& results, size_t limit) {
  struct Candidate {
    double hours;
    std::string line;
  };
  std::vector<Candidate> c;
  for (const auto& r : results) {
    if (!r.evaluated) continue;
    for (const auto& x : r.rows) {
      if (x.verdict != Verdict::undecided || x.test.n < 2 || !x.pairs_needed ||
          *x.pairs_needed > x.planned || !x.cost_h || x.more_splits <= 0)
        continue;
      c.push_back({*x.cost_h,
                   fmt::format("| [{}](#{}) | {} | {} − {} | {} of {} | {} more | {} |\n",
                               r.claim.id, r.claim.id, row_label(r.claim, x), x.better, x.worse,
                               *x.pairs_needed, x.planned, x.more_splits, cost_text(*x.cost_h))});
    }
  }
  if (c.empty()) return "";
  std::stable_sort(c.begin(), c.end(),
                   [](const Candidate& a, const Candidate& b) { return a.hours < b.hours; });
  std::string o = "## Cheapest decisions\n\n";
  o += fmt::format(
      "The undecided comparisons that the protocol's remaining splits would decide if the "
      "difference kept its observed mean and spread (the \"to decide\" column below), cheapest "
      "first: where a CPU hour decides the most. {} of {} shown; each claim's table has the "
      "rest.\n\n",
      std::min(limit, c.size()), c.size());
  o += "| claim | row | comparison | splits needed | splits to run | cost |\n";
  o += "| :-- | :-- | :-- | --: | --: | --: |\n";
  for (size_t i = 0; i < c.size() && i < limit; ++i) o += c[i].line;
  return o + "\n";
}

}  // namespace

std::string claims_markdown(const std::vector<ClaimResult>& results, const std::string& tables_link,
                            const std::string& summary_link) {
  const ClaimCounts counts = count_claims(results);
  std::string o = "<!-- Generated by dkp tables --summary (make tables). Do not edit. -->\n\n";
  o += "# The papers' claims, tested on our cells\n\n";
  o += "Each paper's stated conclusions that its tables support, from "
       "`results/reference/claims.yaml` (the quote, its section, and the table, metric, columns "
       "and rows that test it), tested on our cells as the tables aggregate them (the results "
       "page: [" +
       summary_link + "](" + summary_link +
       ")). Generated by `make tables` from the committed store; do not edit.\n\n";
  o += fmt::format("**Claims: {} (of {}).**\n\n", claim_counts_text(counts), results.size());

  o += "## How a claim is tested\n\n";
  o += "- **Comparisons.** A claim names a generated table, its metric, the column the paper "
       "says is better and the column(s) it says are worse, and its rows (datasets, depths, "
       "kernels; all of the table's when it names none). Each row and each (better, worse) pair "
       "of columns is one comparison.\n";
  o += "- **Paired differences.** For a comparison, the two columns' per-split values are "
       "paired by split over the splits both have done, and each pair gives the difference "
       "better − worse in the claimed direction (worse − better for a metric where lower is "
       "better, RMSE): a positive difference favours the claim.\n";
  o += "- **Paired t-test.** Over the n pairs, the mean difference d̄ and its sample standard "
       "deviation s (n − 1 in the denominator); the 95% two-sided interval is d̄ ± t(n−1, "
       "0.975) · s / √n, with t the Student-t quantile. Pairing by split removes what the "
       "splits share (a hard split is hard for both columns).\n";
  o += "- **A comparison's verdict.** *Supported* when the interval lies above 0; "
       "*contradicted* when it lies below 0; *undecided* otherwise, and always when fewer than "
       "two pairs are done (no spread to test against).\n";
  o += "- **A claim's verdict.** *Contradicted* when any of its comparisons is contradicted; "
       "else *supported* when more than half of its comparisons with at least two pairs are "
       "supported; else *undecided* (also when no comparison has two pairs). Comparisons not "
       "computed yet (no pair) do not count, and are listed under each claim. Each comparison "
       "is tested at the 5% level without a correction for their number: with many "
       "comparisons one may come out contradicted by chance alone (at most 2.5% each when the "
       "true difference is 0), which is why every comparison's interval is shown.\n";
  o += "- **One split.** MNIST and CIFAR-10 (and Rectangle-Images) have one train/test split: a "
       "comparison there is one pair, with no spread of its own, and stays undecided. The "
       "grids' seed replicates (`dkp-table2-seed1`) repeat only the NNGP, once, so they give no "
       "spread of a difference between two models; we use no other noise estimate.\n";
  o += "- **Splits to decide.** For an undecided comparison with n ≥ 2 pairs: the smallest "
       "number of pairs N with t(N−1, 0.975) · s / √N < |d̄|, i.e. at which a difference of "
       "the observed mean and spread would give an interval clear of 0 (in either direction); "
       "\"not within the paper's K splits\" when N exceeds the splits K the protocol has. Their "
       "cost: the cells still missing for the next splits of the protocol (up to N, or up to K "
       "when N is beyond it; the next split when fewer than two pairs are done), each priced at "
       "its column's mean over its stored cells of result.json's `train_s` (scaled up to all "
       "the steps when a run resumed from a checkpoint) + `predict_s`, in CPU hours (each cell "
       "runs on one thread). These are means of wall times, which other work on the machine "
       "lengthens; `dkp grid plan --estimate` prices whole grids from the smallest stored step "
       "times instead, a lower figure.\n";
  o += "- **The paper's effect** is the difference of its printed means, in the claimed "
       "direction; the papers print no paired error we could test it with.\n";
  o += "- **Quotes** are the papers' words; mathematical notation is written as plain text "
       "(A-GW for the paper's typeset Q_{A-GW}).\n\n";

  o += "## Summary\n\n";
  o += "| claim | paper | table | verdict | supported | contradicted | undecided | not "
       "computed |\n";
  o += "| :-- | :-- | :-- | :-- | --: | --: | --: | --: |\n";
  for (const auto& r : results) {
    const Claim& c = r.claim;
    if (!r.evaluated) {
      o += fmt::format("| [{}](#{}) | {} | {} | not evaluated | | | | |\n", c.id, c.id, c.paper,
                       c.table);
      continue;
    }
    o += fmt::format("| [{}](#{}) | {} | [{}]({}{}.md) | {} | {} | {} | {} | {} |\n", c.id, c.id,
                     c.paper, c.table, tables_link, c.table, bold_verdict(r.verdict), r.supported,
                     r.contradicted, r.undecided, r.n_not_computed);
  }
  o += "\n";
  o += cheapest_decisions(results, 15);

  for (const auto& r : results) {
    const Claim& c = r.claim;
    o += "## " + c.id + "\n\n";
    o += "> " + c.quote + "\n\n";
    std::string paper_name = c.paper;
    const auto pos = r.table_title.find(", Table");
    if (pos != std::string::npos && pos > 0) paper_name = r.table_title.substr(0, pos);
    o += fmt::format("— {}, {}.\n\n", paper_name, c.section);
    std::string rows_text;
    if (!c.kernels.empty()) rows_text += "kernels " + join(c.kernels) + "; ";
    rows_text += c.datasets.empty() ? "all datasets" : join(c.datasets);
    if (!c.depths.empty()) {
      std::vector<std::string> ds;
      for (int d : c.depths) ds.push_back(std::to_string(d));
      rows_text += "; depths " + join(ds);
    }
    std::vector<std::string> metrics;
    for (const auto& m : c.metrics) metrics.push_back(metric_title(m));
    o += fmt::format("Tested on [{}]({}{}.md), {} ({} is better): {} above {}; rows: {}.", c.table,
                     tables_link, c.table, join(metrics, " and "), c.higher ? "higher" : "lower",
                     join(c.better, " and "), join(c.worse, " and "), rows_text);
    if (!c.note.empty()) o += " " + c.note;
    o += "\n\n";
    if (!r.evaluated) {
      o += "Not evaluated: table " + c.table + " is not among the tables of this call.\n\n";
      continue;
    }
    o += fmt::format(
        "**Verdict: {}** ({} supported, {} contradicted, {} undecided of {} "
        "computed comparisons; {} not computed).\n\n",
        verdict_name(r.verdict), r.supported, r.contradicted, r.undecided, r.rows.size(),
        r.n_not_computed);
    if (!r.rows.empty()) {
      o += "| row | comparison | paper's effect | ours: mean [95% interval] | pairs | verdict | "
           "to decide |\n";
      o += "| :-- | :-- | --: | --: | --: | :-- | :-- |\n";
      for (const auto& x : r.rows) {
        const std::string paper = x.paper_effect ? signed_value(*x.paper_effect, r, x.metric) : "—";
        std::string ours = signed_value(x.test.mean, r, x.metric);
        if (x.test.lo) {
          ours += fmt::format(" [{}, {}]", signed_value(*x.test.lo, r, x.metric),
                              signed_value(*x.test.hi, r, x.metric));
        }
        std::string decide;
        if (x.verdict == Verdict::undecided) {
          const std::string price =
              x.cost_h ? cost_text(*x.cost_h) : "unpriced (a column has no timed cell)";
          if (x.planned <= 1) {
            decide = "one split in the protocol: not testable";
          } else if (x.test.n < 2) {
            decide = "one pair: no spread yet; the next split: " + price;
          } else if (!x.pairs_needed) {
            decide = fmt::format("mean 0: no number of splits (the protocol has {})", x.planned);
          } else if (*x.pairs_needed > x.planned) {
            decide = fmt::format("not within the paper's {} splits (needs {})", x.planned,
                                 *x.pairs_needed);
            if (x.more_splits > 0) {
              decide += fmt::format("; the {} remaining: {}", x.more_splits, price);
            }
          } else {
            decide = fmt::format("{} splits ({} more: {})", *x.pairs_needed, x.more_splits, price);
          }
        }
        o += fmt::format("| {} | {} − {} | {} | {} | {}{} | {} | {} |\n", row_label(c, x), x.better,
                         x.worse, paper, ours, x.test.n,
                         x.planned > x.test.n ? fmt::format(" of {}", x.planned) : "",
                         verdict_name(x.verdict), decide);
      }
      o += "\n";
    }
    if (!r.not_computed.empty()) {
      o += fmt::format(
          "Not computed yet (no split of both columns; all the row's comparisons "
          "unless named): {}.\n\n",
          join(r.not_computed, "; "));
    }
  }
  return o;
}

}  // namespace dkp::report
