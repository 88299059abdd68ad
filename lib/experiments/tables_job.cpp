#include "experiments/tables_job.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "experiments/store.hpp"
#include "experiments/verify.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

void add_trace_values(std::map<std::string, double>& values, const fs::path& trace_csv,
                      uint64_t steps) {
  std::error_code ec;
  if (!fs::exists(trace_csv, ec)) return;
  const auto rows = training::parse_trace_csv(util::read_file(trace_csv), trace_csv.string());
  if (const auto t = training::elbo_tail_mean(rows, steps)) {
    values["elbo_tail"] = t->mean;
    values["elbo_tail_se"] = t->se;
  }
}

std::vector<report::CellRecord> collect_records(const Grid& grid, const fs::path& results_root,
                                                const StatusOptions& options, StoreCheck* check) {
  std::vector<report::CellRecord> out;
  out.reserve(grid.cells.size());
  for (const auto& c : grid.cells) {
    report::CellRecord r;
    r.dataset = c.dataset;
    r.split = c.split;
    r.model = c.model;
    r.inference = c.inference;
    r.posterior = c.posterior;
    r.depth = c.depth;
    r.kernel = c.kernel;
    r.inducing = c.protocol.inducing;
    r.steps = c.protocol.steps;
    r.batch = c.protocol.batch;
    const CellStatus st = cell_status(c, results_root, options);
    auto noted = [&](std::vector<CellNote> StoreCheck::*list, const std::string& detail) {
      if (check) (check->*list).push_back({c.hash(), c.label(), detail});
    };
    switch (st.state) {
      case CellState::interrupted:
        r.state = "running";
        break;
      case CellState::damaged:
        r.state = "damaged";
        noted(&StoreCheck::damaged, st.detail);
        break;
      case CellState::stale:
        r.state = "stale";
        noted(&StoreCheck::stale, st.detail);
        break;
      default:
        r.state = to_string(st.state);
    }
    if (check && st.state != CellState::missing) ++check->present;
    if (st.state == CellState::done) {
      try {
        r.values = read_result_values(st.result);
        add_trace_values(r.values, st.result.parent_path() / "trace.csv", c.protocol.steps);
      } catch (const Error& e) {
        // Damaged since cell_status read it: reported as such.
        r.state = "damaged";
        noted(&StoreCheck::damaged, e.what());
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

template <class T, class Fn>
std::string range_of(const Grid& g, Fn get) {
  std::set<T> v;
  for (const auto& c : g.cells) v.insert(get(c));
  if (v.empty()) return "?";
  if (v.size() == 1) return fmt::format("{}", *v.begin());
  std::string s;
  for (const auto& x : v) {
    if (!s.empty()) s += '/';
    s += fmt::format("{}", x);
  }
  return s;
}

// "0-19", or "0-19 (protein 0-4)", or "0/1/5".
std::string split_summary(const Grid& g) {
  std::map<std::string, std::set<int>> by_dataset;
  for (const auto& c : g.cells) by_dataset[c.dataset].insert(c.split);
  auto render = [](const std::set<int>& s) {
    if (s.empty()) return std::string("?");
    if (*s.rbegin() - *s.begin() + 1 == static_cast<int>(s.size()) && s.size() > 2) {
      return fmt::format("{}-{}", *s.begin(), *s.rbegin());
    }
    std::string out;
    for (int x : s) {
      if (!out.empty()) out += '/';
      out += std::to_string(x);
    }
    return out;
  };
  std::map<std::string, std::vector<std::string>> groups;  // rendering -> datasets
  for (const auto& [ds, s] : by_dataset) groups[render(s)].push_back(ds);
  std::string main;
  size_t most = 0;
  for (const auto& [r, ds] : groups) {
    if (ds.size() > most) {
      most = ds.size();
      main = r;
    }
  }
  std::string out = main;
  for (const auto& [r, ds] : groups) {
    if (r == main) continue;
    std::string names;
    for (const auto& d : ds) {
      if (!names.empty()) names += ", ";
      names += d;
    }
    out += fmt::format(" ({} {})", names, r);
  }
  return out;
}

// " Model options: cdgp-jointly-gaussian marginalise=analytic; ...": the options the grid's cells
// set, per model (the tables' columns do not name them), or "".
std::string options_summary(const Grid& g) {
  std::set<std::string> parts;
  for (const auto& c : g.cells) {
    if (c.options.set_values().empty()) continue;
    std::string part = c.model_label();
    for (const auto& [name, value] : c.options.set_values()) part += " " + name + "=" + value;
    parts.insert(part);
  }
  if (parts.empty()) return "";
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? " Model options: " : "; ") + p;
  return out + ".";
}

// " Times measured on <CPU> with OpenBLAS <kernels> kernels (k cells); ...": the machines the
// done cells ran on, from their manifests, for tables of a time (they depend on the machine).
std::string machines_summary(const Grid& grid, const fs::path& results_root,
                             const StatusOptions& options) {
  std::map<std::string, size_t> machines;
  for (const auto& c : grid.cells) {
    const CellStatus st = cell_status(c, results_root, options);
    if (st.state != CellState::done) continue;
    const Provenance p = read_provenance(st.result.parent_path() / "manifest.json");
    ++machines[fmt::format("{} with OpenBLAS {} kernels",
                           p.cpu.empty() ? "an unrecorded CPU" : p.cpu,
                           p.blas_core.empty() ? "unrecorded" : p.blas_core)];
  }
  std::string out;
  for (const auto& [m, n] : machines) {
    out += fmt::format("{}{} ({} cell{})", out.empty() ? " Times measured on " : "; ", m, n,
                       n == 1 ? "" : "s");
  }
  return out.empty() ? out : out + ".";
}

}  // namespace

std::string protocol_summary(const Grid& g) {
  using C = const RunSpec&;
  const std::string protocol = fmt::format(
      "Protocol: {} Adam steps, learning-rate schedule (step:lr) {}, KL annealing over {} steps, "
      "{} training / {} test samples, {} inducing points, batch {}, seed {}; splits {}.",
      range_of<long>(g, [](C c) { return c.protocol.steps; }),
      range_of<std::string>(g, [](C c) { return format_lr_schedule(c.protocol.lr_schedule); }),
      range_of<long>(g, [](C c) { return c.protocol.kl_anneal; }),
      range_of<long>(g, [](C c) { return c.protocol.train_samples; }),
      range_of<long>(g, [](C c) { return c.protocol.test_samples; }),
      range_of<long>(g, [](C c) { return c.protocol.inducing; }),
      range_of<long>(g, [](C c) { return c.protocol.batch; }),
      range_of<uint64_t>(g, [](C c) { return c.protocol.seed; }), split_summary(g));
  return protocol + options_summary(g);
}

std::vector<report::Table> grid_tables(const Grid& grid, const fs::path& results_root,
                                       const std::vector<report::RefRow>& refs,
                                       const StatusOptions& options, StoreCheck* check) {
  const auto records = collect_records(grid, results_root, options, check);
  auto specs = report::family_tables(grid.family, records, grid.reference);
  std::vector<report::Table> out;
  for (auto& spec : specs) {
    if (grid.family == "generic") {
      spec.name = grid.name + spec.name.substr(std::string("generic").size());
      spec.title = fmt::format("Grid {}: {}", grid.name, spec.metrics.front());
    }
    if (grid.profile != "full") spec.name += "-" + grid.profile;
    report::Table t = report::build_table(spec, records, refs);
    t.profile = grid.profile;
    t.profile_description = grid.profile_description;
    if (grid.replicates)
      t.replicate_of = spec.name.substr(0, spec.name.size() - grid.profile.size() - 1);
    t.notes = protocol_summary(grid);
    if (std::find(spec.metrics.begin(), spec.metrics.end(), "epoch_time_s") != spec.metrics.end())
      t.notes += machines_summary(grid, results_root, options);
    if (spec.no_verdict)
      t.notes += " The paper's values, of its own machines, are shown beside ours but not judged.";
    if (grid.profile != "full") {
      t.notes += fmt::format(
          " Profile '{}'{}: not the paper's protocol.", grid.profile,
          grid.profile_description.empty() ? std::string() : " (" + grid.profile_description + ")");
    }
    if (grid.split_limit > 0) {
      t.notes += fmt::format(
          " Read with splits 0-{} only (dkp tables --splits {}): the verdicts of those splits, "
          "not of the store's whole sample.",
          grid.split_limit - 1, grid.split_limit);
    }
    t.notes += fmt::format(" Grid {}.", grid.file.filename().string());
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<fs::path> write_tables(const std::vector<report::Table>& tables,
                                   const fs::path& out_dir) {
  std::vector<fs::path> files;
  for (const auto& t : tables) {
    const fs::path tex = out_dir / (t.spec.name + ".tex");
    const fs::path csv = out_dir / (t.spec.name + ".csv");
    const fs::path md = out_dir / (t.spec.name + ".md");
    util::write_file_atomic(tex, report::to_latex(t));
    util::write_file_atomic(csv, report::to_csv(t));
    util::write_file_atomic(md, report::to_markdown(t));
    files.push_back(tex);
    files.push_back(csv);
    files.push_back(md);
  }
  return files;
}

}  // namespace dkp::experiments
