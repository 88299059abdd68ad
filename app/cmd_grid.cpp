// dkp grid plan|status|run|verify FILE: expand an experiment grid, list or run its pending cells,
// estimate what they cost (plan --estimate), or rerun some of its done cells and compare them with
// the stored results; dkp grid merge SRC... --into DST: bring stores together.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data_fingerprints.hpp"
#include "experiments/estimate.hpp"
#include "experiments/grid.hpp"
#include "experiments/merge.hpp"
#include "experiments/provenance.hpp"
#include "experiments/runner.hpp"
#include "experiments/store.hpp"
#include "experiments/store_index.hpp"
#include "experiments/verify.hpp"
#include "platform/blas_threads.hpp"
#include "platform/cpu.hpp"
#include "platform/dir_lock.hpp"
#include "platform/memory.hpp"
#include "platform/process.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/version.hpp"

namespace dkp::cli {

namespace {

namespace fs = std::filesystem;
namespace ex = dkp::experiments;

std::atomic<bool> g_stop{false};

extern "C" void on_stop_signal(int) {
  g_stop.store(true);
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// "FILE [--profile P] [--results DIR]": the grid and store of this command, for the remedies.
std::string grid_args(const ex::Grid& grid, const fs::path& results) {
  std::string s = ex::shell_quote(grid.file.string());
  if (grid.profile != "full") s += " --profile " + ex::shell_quote(grid.profile);
  if (results != fs::path("results/runs")) s += " --results " + ex::shell_quote(results.string());
  return s;
}

// The command that clears a cell's run directory and computes it afresh.
std::string force_command(const ex::Grid& grid, const fs::path& results, const std::string& hash) {
  return fmt::format("dkp grid run {} --force --cell {}", grid_args(grid, results), hash);
}

// Lists damaged and stale cells with what is wrong and the remedy.
void print_cells_to_force(const ex::Grid& grid, const fs::path& results,
                          const std::vector<ex::CellNote>& cells, const std::string& what) {
  if (cells.empty()) return;
  std::cout << fmt::format("{} {} cell{} (not recomputed without --force):\n", cells.size(), what,
                           cells.size() == 1 ? "" : "s");
  for (const auto& c : cells) {
    std::cout << fmt::format("  {} {}: {}\n    to recompute it: {}\n", c.hash, c.label, c.detail,
                             force_command(grid, results, c.hash));
  }
}

int grid_plan(const ex::Grid& grid, const fs::path& results, const po::variables_map& vm,
              const std::vector<std::string>& extra, const ex::StatusOptions& status) {
  std::vector<ex::RunSpec> pending;
  std::vector<ex::CellNote> damaged, stale;
  for (const auto& c : grid.cells) {
    const auto st = ex::cell_status(c, results, status);
    if (st.state == ex::CellState::damaged) {
      damaged.push_back({c.hash(), c.label(), st.detail});
    } else if (st.state == ex::CellState::stale) {
      stale.push_back({c.hash(), c.label(), st.detail});
    } else if (st.state != ex::CellState::done) {
      pending.push_back(c);
    }
  }
  // Not planned: `dkp run` would refuse them; they need `dkp grid run --force`.
  for (const auto* list : {&damaged, &stale}) {
    for (const auto& c : *list) {
      spdlog::warn("not planned: {} {} is {}: {}; to recompute it: {}", c.hash, c.label,
                   list == &damaged ? "damaged" : "stale", c.detail,
                   force_command(grid, results, c.hash));
    }
  }
  std::vector<ex::RunSpec> mine = pending;
  std::string shard_text = "all";
  if (vm.count("shard")) {
    const auto [i, n] = ex::parse_shard(vm["shard"].as<std::string>());
    mine = ex::shard(pending, i, n);
    shard_text = fmt::format("{}/{}", i, n);
  }
  const std::string dkp =
      vm.count("dkp") ? vm["dkp"].as<std::string>() : platform::self_executable().string();
  for (const auto& c : mine) std::cout << c.command_line(dkp, results, extra) << "\n";
  std::cout << std::flush;
  spdlog::info("grid {} (profile {}): {} cells, {} pending, shard {}: {} commands", grid.name,
               grid.profile, grid.cells.size(), pending.size(), shard_text, mine.size());
  return kExitOk;
}

// Whether the grid file has the profile ("full" always): several grids given to one command
// may not all have it.
bool has_profile(const fs::path& file, const std::string& profile, const fs::path& data_root) {
  if (profile == "full") return true;
  const auto& names = ex::load_grid(file, "full", data_root).profiles;
  return std::find(names.begin(), names.end(), profile) != names.end();
}

// A cell's status, and for a done one what its run took (ex::run_seconds) and its provenance.
struct StatusRow {
  ex::CellStatus status;
  const ex::RunSpec* cell = nullptr;
  double seconds = 0.0;
  ex::CellProvenance provenance;
};

// The provenance counts of done cells, each counted once.
report::ProvenanceCounts count_done(const std::map<std::string, ex::CellProvenance>& cells) {
  report::ProvenanceCounts c;
  for (const auto& [hash, p] : cells) ex::count_cell(p, c);
  return c;
}

// The cost of done cells in words: "the done cells ran 12.3 CPU hours".
std::string ran_text(size_t done, double seconds) {
  if (done == 0) return "";
  return fmt::format("; the {} ran {:.1f} CPU hours", done == 1 ? "done cell" : "done cells",
                     seconds / 3600.0);
}

// Prints a grid's status (every cell with `verbose`) and records its done cells' run times by
// hash in `done` and their provenance in `provenance` (a cell of several grids is one entry).
int grid_status(const ex::Grid& grid, const fs::path& results, bool verbose,
                const ex::StatusOptions& status, std::map<std::string, double>* done = nullptr,
                std::map<std::string, ex::CellProvenance>* provenance = nullptr) {
  size_t counts[ex::kCellStates] = {};
  std::vector<StatusRow> rows;
  std::map<std::string, ex::CellProvenance> mine;
  double seconds = 0.0;
  for (const auto& c : grid.cells) {
    StatusRow r{ex::cell_status(c, results, status), &c, 0.0, {}};
    ++counts[static_cast<int>(r.status.state)];
    if (r.status.state == ex::CellState::done) {
      r.seconds = ex::run_seconds(ex::read_result_values(r.status.result));
      seconds += r.seconds;
      if (done) (*done)[c.hash()] = r.seconds;
      r.provenance = ex::read_cell_provenance(r.status.result.parent_path());
      mine[c.hash()] = r.provenance;
      if (provenance) (*provenance)[c.hash()] = r.provenance;
    }
    rows.push_back(std::move(r));
  }
  if (verbose) {
    for (const auto& r : rows) {
      const ex::CellStatus& st = r.status;
      const std::string mark =
          st.state == ex::CellState::done ? ex::provenance_mark(r.provenance) : std::string();
      std::cout << fmt::format(
          "{:<11} {} {}{}{}{}\n", ex::to_string(st.state), r.cell->hash(), r.cell->label(),
          st.state == ex::CellState::done ? "  (" + ex::format_hours(r.seconds) + ")" : "",
          mark.empty() ? "" : "  " + mark, st.detail.empty() ? "" : "  -- " + st.detail);
    }
  }
  auto n = [&](ex::CellState s) { return counts[static_cast<int>(s)]; };
  std::cout << fmt::format(
      "grid {} (profile {}, {}): {} cells: done {}, running {}, interrupted {}, missing {}, failed "
      "{}, damaged {}, stale {}{}\n",
      grid.name, grid.profile, (results / grid.name).string(), grid.cells.size(),
      n(ex::CellState::done), n(ex::CellState::running), n(ex::CellState::interrupted),
      n(ex::CellState::missing), n(ex::CellState::failed), n(ex::CellState::damaged),
      n(ex::CellState::stale), ran_text(n(ex::CellState::done), seconds));
  if (!mine.empty()) {
    const report::ProvenanceCounts pc = count_done(mine);
    std::cout << fmt::format("provenance: {}\n", report::provenance_line(pc, "done cells"));
    if (pc.mismatched) {
      std::cout << fmt::format(
          "{} done cell{} did not reproduce when verified at a clean commit (verified.json; "
          "{}'{}' recomputes one)\n",
          pc.mismatched, pc.mismatched == 1 ? "" : "s",
          verbose ? "marked MISMATCH above; "
                  : fmt::format("'dkp grid status {} --verbose' marks them, ",
                                grid_args(grid, results)),
          force_command(grid, results, "HASH"));
    }
  }
  std::string to_force;
  if (n(ex::CellState::damaged)) {
    to_force = fmt::format(
        "{} damaged (a malformed result.json, manifest.json or trace.csv, or one modified since "
        "dkp wrote it)",
        n(ex::CellState::damaged));
  }
  if (n(ex::CellState::stale)) {
    to_force += fmt::format("{}{} stale (made from other data than the data now present)",
                            to_force.empty() ? "" : " and ", n(ex::CellState::stale));
  }
  if (!to_force.empty()) {
    std::cout << fmt::format(
        "{}: not recomputed without --force; {}'{}' recomputes one\n", to_force,
        verbose
            ? ""
            : fmt::format("'dkp grid status {} --verbose' lists them, ", grid_args(grid, results)),
        force_command(grid, results, "HASH"));
  }
  return kExitOk;
}

int grid_run(const ex::Grid& grid, const fs::path& results, int jobs,
             const std::vector<std::string>& extra, const std::string& data_option, bool force,
             const std::string& cell, bool allow_dirty) {
  if (allow_dirty && tree_state() != TreeState::clean &&
      ex::committed_store_checkout(results).has_value()) {
    spdlog::warn(
        "--allow-dirty: computing into the committed store {} with a dkp built from a {} work "
        "tree (git_sha {}); the cells' manifest.json records it",
        results.string(), to_string(tree_state()), git_sha());
  }
  std::vector<ex::RunSpec> cells = grid.cells;
  if (!cell.empty()) {
    const ex::RunSpec& c = ex::find_cell(grid, cell);
    // --force never clears a directory another process is writing.
    if (const platform::LockProbe p = platform::probe_lock(c.run_dir(results)); force && p.held) {
      throw Error(fmt::format(
          "cell {} ({}) is being run by {} ({}): not clearing it while that process runs", c.hash(),
          c.label(), p.holder, platform::lock_file(c.run_dir(results)).string()));
    }
    cells = {c};
  }
  // Cells on optional data that is not installed are skipped, not failed. Without a data root at
  // all nothing is skipped: every cell then fails with dkp run's own message.
  std::vector<ex::RunSpec> skipped;
  try {
    skipped = ex::take_cells_without_data(cells, data::resolve_data_root(data_option));
  } catch (const DataError&) {
  }
  if (!skipped.empty()) {
    std::set<std::string> names;
    for (const auto& c : skipped) names.insert(c.dataset);
    for (const auto& n : names) {
      std::cout << fmt::format("skipping the cells on {}: {}\n", n, data::not_installed_note(n));
    }
  }
  auto fingerprints = data_fingerprints(data_option);
  ex::RunnerOptions opt;
  opt.jobs = jobs;
  opt.exe = platform::self_executable().string();
  opt.extra_args = extra;
  opt.stop = &g_stop;
  opt.force = force;
  if (fingerprints) opt.status.data = &*fingerprints;
  catch_stop_signals();
  const auto sum = ex::run_cells(cells, results, opt);
  std::cout << sum.line()
            << (skipped.empty() ? ""
                                : fmt::format(", skipped {} (data not installed)", skipped.size()))
            << "\n";
  if (!sum.failed_cells.empty()) {
    std::cout << fmt::format(
        "failed cells (see error.json in their run directories; 'dkp grid "
        "status {} --verbose'):\n",
        grid.file.string());
    for (const auto& l : sum.failed_cells) std::cout << "  " << l << "\n";
  }
  if (sum.running_elsewhere) {
    std::cout << fmt::format(
        "{} cell{} being computed by another process, left to it ('dkp grid status {}' shows "
        "when they are done)\n",
        sum.running_elsewhere, sum.running_elsewhere == 1 ? " is" : "s are",
        grid_args(grid, results));
  }
  print_cells_to_force(grid, results, sum.damaged_cells,
                       "damaged (a malformed result.json, manifest.json or trace.csv, or one "
                       "modified since dkp wrote it)");
  print_cells_to_force(grid, results, sum.stale_cells, "stale (made from other data)");
  std::cout << std::flush;
  if (sum.interrupted || sum.not_started) return 130;
  return sum.ok() ? kExitOk : kExitError;
}

// Reruns done cells into a scratch directory (lib/experiments/verify.hpp); the store is only read.
int grid_verify(const ex::Grid& grid, const fs::path& results, const po::variables_map& vm,
                const std::vector<std::string>& extra) {
  if (vm.count("cells") && vm.count("cell")) {
    throw UsageError("--cells and --cell exclude each other");
  }
  ex::VerifySelection sel;
  if (vm.count("cells")) {
    const long k = vm["cells"].as<long>();
    if (k < 1) throw UsageError(fmt::format("--cells {}: must be at least 1", k));
    sel.cells = static_cast<size_t>(k);
  }
  if (vm.count("cell")) sel.cell = vm["cell"].as<std::string>();
  sel.seed = vm["seed"].as<uint64_t>();
  // --record leaves a verdict in the store that says "verified at <commit>": only a binary built
  // from a clean commit can say that.
  const bool record = vm.count("record") > 0;
  if (record && tree_state() != TreeState::clean) {
    throw Error(fmt::format(
        "--record: this dkp was built from a {} work tree (git_sha {}): a verification is "
        "recorded only by a binary built from a clean commit (commit or stash the changes and "
        "rebuild; `dkp --version` shows the tree's state)",
        to_string(tree_state()), git_sha()));
  }
  const ex::ChosenCells chosen = ex::select_cells_to_verify(grid, results, sel);
  if (!chosen.note.empty()) std::cout << chosen.note << "\n" << std::flush;

  ex::VerifyOptions opt;
  opt.jobs = vm["jobs"].as<int>();
  opt.exe = platform::self_executable().string();
  opt.extra_args = extra;
  opt.stop = &g_stop;
  // Progress of the reruns on stderr; the verdicts on stdout.
  opt.log = vm.count("quiet") ? nullptr : &std::cerr;
  size_t recorded = 0;
  opt.on_verdict = [&](const ex::CellVerdict& v) {
    std::cout << ex::verdict_line(v, opt.tolerance) << "\n";
    if (v.state == ex::CellVerdict::State::mismatch) {
      // Where the stored result is: this grid's run directory, or another grid's.
      const bool here = v.stored_dir == v.cell.run_dir(results);
      std::cout << fmt::format(
          "  to recompute it: {}{}\n",
          here ? force_command(grid, results, v.cell.hash())
               : fmt::format(
                     "dkp grid run experiments/{}.yaml --force --cell {}{}",
                     v.stored_dir.parent_path().parent_path().parent_path().filename().string(),
                     v.cell.hash(),
                     results != fs::path("results/runs")
                         ? " --results " + ex::shell_quote(results.string())
                         : std::string()),
          here ? "" : " (its result is stored under that grid)");
    }
    if (record && v.state != ex::CellVerdict::State::failed) {
      const fs::path file = ex::record_verification(v, opt.tolerance);
      ++recorded;
      std::cout << fmt::format("  recorded {}\n", file.string());
    }
    std::cout << std::flush;
  };
  spdlog::info(
      "grid {} (profile {}): rerunning {} of its {} done cells (seed {}) in a scratch "
      "directory",
      grid.name, grid.profile, chosen.cells.size(), chosen.done, sel.seed);
  // Which cells, and what their stored runs took, before the reruns start.
  for (size_t i = 0; i < chosen.cells.size(); ++i) {
    spdlog::info("  {} {}: the stored run took {:.0f} min (training and prediction)",
                 chosen.cells[i].hash(), chosen.cells[i].label(), chosen.stored_s[i] / 60.0);
  }
  catch_stop_signals();
  const auto report = ex::verify_cells(chosen.cells, results, opt);
  std::cout << report.summary_line(grid) << "\n";
  if (record) {
    std::cout << fmt::format(
        "recorded {} verification{} ({} in each cell's directory; a failed rerun records none)\n",
        recorded, recorded == 1 ? "" : "s", ex::kVerifiedFile);
  }
  std::cout << std::flush;
  if (report.not_run) return 130;
  return report.ok() ? kExitOk : kExitError;
}

// Where a cell's step time comes from, in words.
std::string source_text(const ex::CellEstimate& e) {
  if (!e.not_estimated.empty()) return "not estimated: " + e.not_estimated;
  if (e.source == ex::EstimateSource::stored) {
    return e.stored_cells == 1
               ? std::string("step time: a stored cell of the same cost")
               : fmt::format("step time: the fastest of {} stored cells of the same cost",
                             e.stored_cells);
  }
  return fmt::format("step time: calibrated on this machine, batch {}", e.batch);
}

// plan --estimate --cell HASH: one cell, estimated without its own stored timing, beside that
// timing when the store holds it.
int estimate_one_cell(const ex::Grid& grid, const std::string& hash, ex::Estimator& est) {
  const ex::RunSpec& c = ex::find_cell(grid, hash);
  const ex::CellEstimate e = est.estimate(c, c.hash());
  std::cout << fmt::format(
      "cell {} {}: estimated {} steps x {:.2f} ms = {:.1f} s training, + {:.1f} s final ELBO + "
      "{:.1f} s prediction = {} ({}; its own stored timing not used)\n",
      e.hash, e.label, e.steps, e.step_s * 1e3, e.train_s, e.final_elbo_s, e.predict_s,
      ex::format_hours(e.total_s()), source_text(e));
  if (const ex::StoredTiming* t = est.stored(c.hash())) {
    const double measured = t->step_s * double(c.protocol.steps);
    std::cout << fmt::format(
        "stored ({}): {} steps x {:.2f} ms = {:.1f} s training (train_s {:.1f}{}), prediction "
        "{:.1f} s; estimated / measured training time: {:.2f}\n",
        t->dir.string(), c.protocol.steps, t->step_s * 1e3, measured, t->train_s,
        t->resumed_from_step > 0
            ? fmt::format(", the steps after a resume from step {}", t->resumed_from_step)
            : std::string(),
        t->predict_s, measured > 0 ? e.train_s / measured : 0.0);
  } else {
    std::cout << "not in the store: nothing measured to compare with\n";
  }
  return kExitOk;
}

// --nodes N... --cores C...: the machine configurations of the wall-time columns, pairwise (a
// single value goes with every value of the other list).
std::vector<std::pair<long, long>> machine_configs(const po::variables_map& vm) {
  const std::vector<long> nodes = vm["nodes"].as<std::vector<long>>();
  const std::vector<long> cores =
      vm.count("cores") ? vm["cores"].as<std::vector<long>>()
                        : std::vector<long>{std::max(1, platform::cpu_info().logical)};
  if (nodes.size() != cores.size() && nodes.size() != 1 && cores.size() != 1) {
    throw UsageError(
        fmt::format("--nodes has {} values and --cores {}: give as many of each, or one",
                    nodes.size(), cores.size()));
  }
  std::vector<std::pair<long, long>> out;
  for (size_t i = 0; i < std::max(nodes.size(), cores.size()); ++i) {
    const long n = nodes[nodes.size() == 1 ? 0 : i], c = cores[cores.size() == 1 ? 0 : i];
    if (n < 1 || n > 1000000) {
      throw UsageError(fmt::format("--nodes {}: must be between 1 and 1000000", n));
    }
    if (c < 1 || c > 100000) {
      throw UsageError(fmt::format("--cores {}: must be between 1 and 100000", c));
    }
    out.emplace_back(n, c);
  }
  return out;
}

// plan --estimate: per grid, the pending cells, their CPU hours and the wall time on N machines
// of C cores (lib/experiments/estimate.hpp).
int grid_estimate(const std::vector<fs::path>& files, const std::string& profile,
                  const fs::path& results, const po::variables_map& vm,
                  const ex::StatusOptions& status, const std::string& data_option) {
  const auto configs = machine_configs(vm);
  const bool verbose = vm.count("verbose") > 0;
  ex::EstimatorOptions eo;
  // Progress: every calibration with --verbose, else the first and every tenth.
  size_t calibrating = 0;
  eo.on_calibrate = [&](const ex::RunSpec& c, const std::string& key) {
    ++calibrating;
    if (verbose) {
      spdlog::info("calibrating {} (for {})", key, c.label());
    } else if (calibrating == 1) {
      spdlog::info(
          "calibrating the step times the store has no timings for (a few seconds per model shape "
          "on this machine)");
    } else if (calibrating % 10 == 0) {
      spdlog::info("calibrated {} model shapes so far", calibrating);
    }
  };
  // A calibration may take what a run may: --max-memory, else what this process may take now.
  eo.memory_limit = vm.count("max-memory")
                        ? platform::parse_byte_size(vm["max-memory"].as<std::string>())
                        : platform::available_memory_bytes();
  ex::Estimator est(ex::read_stored_timings(results), eo);
  if (vm.count("cell")) {
    if (files.size() != 1) throw UsageError("--estimate --cell takes one grid file");
    return estimate_one_cell(
        ex::load_grid(files.front(), profile, fs::path(vm["data"].as<std::string>())),
        vm["cell"].as<std::string>(), est);
  }
  std::optional<fs::path> data_root;
  try {
    data_root = data::resolve_data_root(data_option);
  } catch (const DataError&) {
  }
  // The wall times of cells of these durations on each configuration.
  auto walls = [&](const std::vector<double>& seconds) {
    std::string s;
    for (const auto& [n, c] : configs) {
      s += fmt::format("  {:>14}", ex::format_hours(ex::makespan(seconds, size_t(n) * size_t(c))));
    }
    return s;
  };
  std::string heads;
  for (const auto& [n, c] : configs)
    heads += fmt::format("  {:>14}", fmt::format("wall {} x {}", n, c));
  std::cout << fmt::format(
      "Estimated cost of the pending cells (results {}; wall N x C: on N machines of C cores, one "
      "cell per core as dkp grid run -j C):\n",
      results.string());
  std::cout << fmt::format("{:<16} {:<12} {:>6} {:>8} {:>10} {:>12}{}\n", "grid", "profile",
                           "cells", "pending", "CPU hours", "longest cell", heads);
  std::map<std::string, double> all;  // every grid's pending cells, once each
  size_t stored = 0, calibrated = 0, grids = 0;
  std::vector<std::string> notes;
  for (const auto& file : files) {
    if (files.size() > 1 && !has_profile(file, profile, fs::path(vm["data"].as<std::string>()))) {
      std::cout << fmt::format("{:<16} {:<12} no such profile\n", file.stem().string(), profile);
      continue;
    }
    const ex::Grid grid = ex::load_grid(file, profile, fs::path(vm["data"].as<std::string>()));
    std::vector<ex::RunSpec> pending = ex::pending_cells(grid, results, status);
    // Cells on optional data that is not installed: `grid run` skips them, so they are left out
    // (and their cost said apart).
    const std::vector<ex::RunSpec> missing =
        data_root ? ex::take_cells_without_data(pending, *data_root) : std::vector<ex::RunSpec>{};
    if (!missing.empty()) {
      std::set<std::string> names;
      for (const auto& c : missing) names.insert(c.dataset);
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      const ex::GridEstimate m = ex::estimate_cells(est, missing, missing.size());
      notes.push_back(fmt::format(
          "{}: {} more pending cell{} on data not installed here ({}), which dkp grid run skips, "
          "are left out: {:.1f} CPU hours more",
          grid.name, missing.size(), missing.size() == 1 ? "" : "s", list, m.cpu_s / 3600.0));
    }
    const ex::GridEstimate g = ex::estimate_cells(est, pending, grid.cells.size());
    std::vector<double> seconds;
    for (const auto& e : g.estimates) {
      if (!e.not_estimated.empty()) continue;
      seconds.push_back(e.total_s());
      all[e.hash] = e.total_s();
    }
    if (g.not_estimated > 0) {
      const auto first = std::find_if(g.estimates.begin(), g.estimates.end(),
                                      [](const auto& e) { return !e.not_estimated.empty(); });
      notes.push_back(fmt::format(
          "{}: {} pending cell{} not estimated and left out of the hours (e.g. {} {}: {}; "
          "--max-memory sets the limit)",
          grid.name, g.not_estimated, g.not_estimated == 1 ? "" : "s", first->hash, first->label,
          first->not_estimated));
    }
    stored += g.stored;
    calibrated += g.calibrated;
    ++grids;
    std::cout << fmt::format("{:<16} {:<12} {:>6} {:>8} {:>10.1f} {:>12}{}\n", grid.name,
                             grid.profile, g.cells, g.pending, g.cpu_s / 3600.0,
                             ex::format_hours(g.longest_s), walls(seconds));
    if (verbose) {
      for (const auto& e : g.estimates) {
        std::cout << fmt::format("  {} {:<36} {:>7} steps x {:>9.2f} ms  {:>9}  ({})\n", e.hash,
                                 e.label, e.steps, e.step_s * 1e3, ex::format_hours(e.total_s()),
                                 source_text(e));
      }
    }
  }
  if (grids > 1) {
    double cpu = 0.0, longest = 0.0;
    std::vector<double> seconds;
    for (const auto& [hash, s] : all) {
      cpu += s;
      longest = std::max(longest, s);
      seconds.push_back(s);
    }
    std::cout << fmt::format("{:<16} {:<12} {:>6} {:>8} {:>10.1f} {:>12}{}\n", "all (once each)",
                             profile, "", all.size(), cpu / 3600.0, ex::format_hours(longest),
                             walls(seconds));
  }
  for (const auto& n : notes) std::cout << n << "\n";
  std::cout << fmt::format(
      "Step times: {} cell{} from the timings of stored cells of the same cost, {} from {} "
      "calibration{} on this machine ({}; OpenBLAS {}; {:.0f} s). Wall: the cells longest first "
      "onto the least loaded core; at least the longest cell.\n",
      stored, stored == 1 ? "" : "s", calibrated, est.calibrations(),
      est.calibrations() == 1 ? "" : "s", platform::cpu_description(), platform::blas_core(),
      est.calibration_seconds());
  return kExitOk;
}

// dkp grid merge SRC... --into DST (lib/experiments/merge.hpp).
int grid_merge(const std::vector<std::string>& sources, const po::variables_map& vm) {
  if (sources.empty()) {
    throw UsageError("no source store (dkp grid merge SRC_STORE... --into DST_STORE)");
  }
  if (!vm.count("into")) throw UsageError("merge: missing --into DST_STORE");
  std::vector<fs::path> from(sources.begin(), sources.end());
  const fs::path into = vm["into"].as<std::string>();
  ex::MergeOptions opt;
  opt.dry_run = vm.count("dry-run") > 0;
  const ex::MergeReport rep = ex::merge_stores(from, into, opt);
  if (vm.count("verbose")) {
    for (const auto& c : rep.copied_cells) {
      std::cout << fmt::format("{} {}\n", opt.dry_run ? "would copy" : "copied", c);
    }
  }
  for (const auto& n : rep.conflict_notes) {
    std::cout << fmt::format("conflict: cell {}: {} and {}: {}\n", n.hash, n.existing.string(),
                             n.source.string(), n.detail);
  }
  for (const auto& n : rep.invalid_notes) {
    std::cout << fmt::format("invalid: {}: {} (not copied)\n", n.source.string(), n.detail);
  }
  for (const auto& n : rep.running_notes) {
    std::cout << fmt::format("running: {}: {}\n", n.source.string(), n.detail);
  }
  for (const auto& e : rep.empty_sources) {
    std::cout << fmt::format(
        "empty: {} holds no run directory (<grid>/<dataset>/split<k>/<hash>/): is it a results "
        "root, such as results/runs?\n",
        e.string());
  }
  for (const auto& n : rep.snapshot_notes) {
    std::cout << fmt::format("snapshot: {}: {} ({})\n", n.source.string(), n.detail,
                             n.existing.string());
  }
  std::cout << fmt::format("{} {} store{} into {}: {}\n", opt.dry_run ? "would merge" : "merged",
                           from.size(), from.size() == 1 ? "" : "s", into.string(), rep.line());
  if (!rep.ok()) {
    std::cout << "conflicting cells keep the destination's result ('dkp grid verify FILE --cell "
                 "HASH' reruns one); invalid ones were not copied\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace

// dkp grid index: every finished cell of the store in its grid's index.tsv.
int grid_index(const fs::path& results_root) {
  size_t recorded = 0, held = 0, modified = 0;
  std::map<fs::path, std::map<std::string, ex::IndexEntry>> indexes;
  for (const fs::path& dir : ex::store_run_dirs(results_root)) {
    const auto [grid_dir, key] = ex::index_place(dir);
    if (key.empty() || !ex::finished_cell_problem(dir).empty()) continue;
    if (!indexes.count(grid_dir)) indexes[grid_dir] = ex::read_store_index(grid_dir);
    const auto& index = indexes[grid_dir];
    if (!index.count(key)) {
      ex::record_in_store_index(dir);
      ++recorded;
    } else if (const std::string why = ex::index_mismatch(dir, index); !why.empty()) {
      std::cerr << "modified: " << why << "\n";
      ++modified;
    } else {
      ++held;
    }
  }
  std::cout << fmt::format("grid index {}: {} cells recorded now, {} already held, {} modified\n",
                           results_root.string(), recorded, held, modified);
  return modified ? kExitError : kExitOk;
}

int cmd_grid(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add_options()("action", po::value<std::string>(), "plan | status | run | verify | merge")(
      "file", po::value<std::vector<std::string>>(),
      "grid file (experiments/*.yaml); status and plan --estimate: one or more; merge: the "
      "source stores")("profile", po::value<std::string>()->default_value("full"),
                       "profile of the grid (e.g. quick; full = as written)")(
      "results", po::value<std::string>()->default_value("results/runs"),
      "results root (run directories go to <results>/<grid>/...)")(
      "shard", po::value<std::string>(),
      "plan: only shard i/n of the pending cells (cell j -> j mod n)")(
      "dkp", po::value<std::string>(),
      "plan: program name in the printed commands (default: this binary)")(
      "jobs,j", po::value<int>()->default_value(1), "run, verify: cells run at a time")(
      "blas-threads", po::value<int>()->default_value(1),
      "run, verify, plan: OpenBLAS threads inside each BLAS call of every run (dkp run "
      "--blas-threads)")("max-memory", po::value<std::string>(),
                         "run, verify, plan: the memory each run may take (dkp run --max-memory)")(
      "verbose,v", "status: list every cell")(
      "cells", po::value<long>(),
      "verify: rerun this many done cells, chosen at random with --seed (default 1)")(
      "cell", po::value<std::string>(),
      "verify: rerun the cell with this configuration hash (or a unique prefix of it); run: run "
      "only that cell")(
      "force",
      "run: recompute the --cell (or, with --all, every cell) afresh: its run directory is "
      "cleared first (never while another process holds its lock), and dkp run gets --force")(
      "all", "run --force: recompute every cell of the grid (profile), done ones included")(
      "seed", po::value<uint64_t>()->default_value(0), "verify: seed of the choice of cells")(
      "estimate",
      "plan: print the pending cells' estimated CPU hours and wall time instead of their commands")(
      "nodes", po::value<std::vector<long>>()->multitoken()->default_value({1}, "1"),
      "plan --estimate: machines (several: one wall-time column each, paired with --cores)")(
      "cores", po::value<std::vector<long>>()->multitoken(),
      "plan --estimate: cores per machine, one cell on each (default: this machine's)")(
      "allow-dirty",
      "run, plan: compute into the committed store (a git work tree's results/runs) with a dkp "
      "built from a modified work tree, which is refused without it; plan adds it to the "
      "printed commands")(
      "record",
      "verify: write each verdict into its cell's directory (verified.json); needs a dkp built "
      "from a clean commit")("into", po::value<std::string>(), "merge: the destination store")(
      "dry-run", "merge: report what would be copied, copy nothing");
  po::positional_options_description pos;
  pos.add("action", 1).add("file", -1);
  po::variables_map vm;
  const std::string usage =
      "dkp grid plan|status|run FILE [--profile P] [--results DIR] [--shard i/n] [-j N] "
      "[--verbose]\n"
      "       dkp grid status FILE... [--profile P] [--results DIR] [--verbose]\n"
      "       dkp grid run FILE [--force --cell HASH | --force --all] [--allow-dirty] ...\n"
      "       dkp grid verify FILE [--profile P] [--results DIR] [--cells K | --cell HASH] "
      "[--seed S] [-j N] [--record]\n"
      "       dkp grid plan FILE... --estimate [--profile P] [--results DIR] [--nodes N...] "
      "[--cores C...] [--cell HASH] [-v]\n"
      "       dkp grid merge SRC_STORE... --into DST_STORE [--dry-run] [-v]\n"
      "       dkp grid index [--results DIR]\n\n"
      "index records in each grid's index.tsv (experiments/store_index.hpp) the finished cells\n"
      "of the store that it does not hold yet (dkp run records the cells it writes), and\n"
      "reports the cells whose files no longer match their line (modified: exit 1).\n\n"
      "plan --estimate prints, per grid, the pending cells, their estimated CPU hours (step times\n"
      "of stored cells of the same cost, else a short calibration on this machine) and the wall\n"
      "time on N machines of C cores (--nodes 1 10 --cores 2 32: two configurations); with\n"
      "--cell, one cell estimated without its own stored timing, beside it. merge copies the\n"
      "finished cells of the source stores into the destination, each whole; a finished cell is\n"
      "never overwritten, and one the destination holds with other results is a conflict\n"
      "(reported, exit 1).\n\n"
      "verify reruns K done cells (default 1; chosen at random with seed S, default 0) or\n"
      "the cell HASH exactly as 'grid run' does, into a scratch directory (the results are not\n"
      "touched), and compares the numbers with the stored result.json: bit-identical on the CPU\n"
      "and BLAS kernels of the stored run, within a stated tolerance elsewhere. Exit 0 when all\n"
      "match, 1 on a mismatch or a failed rerun. --record writes each verdict into its cell's\n"
      "directory (verified.json), from a dkp built from a clean commit only.\n\n"
      "run into the committed store (a git work tree's results/runs) refuses when this dkp was\n"
      "built from a modified work tree, unless --allow-dirty (the cells record it). status\n"
      "counts the done cells by provenance (-v: a mark per cell).\n\n"
      "Cell states (status): done, running (a process holds its run.lock now), interrupted (a\n"
      "checkpoint or manifest, no result, nobody running it), missing, failed (error.json),\n"
      "damaged (a malformed result.json, manifest.json or trace.csv, or one that no longer "
      "matches\n"
      "the grid's index.tsv: named with the error) and\n"
      "stale (a result or checkpoint made from other data than the data now present). run skips\n"
      "cells running elsewhere, reports damaged and stale ones (exit 1) and recomputes them\n"
      "with --force --cell HASH (every cell of the grid: --force --all).";
  if (!parse_or_help(args, desc, pos, vm, usage)) return kExitOk;
  if (!vm.count("action")) {
    throw UsageError("missing action: plan, status, run, verify, merge or index");
  }
  const std::string action = vm["action"].as<std::string>();
  if (action != "plan" && action != "status" && action != "run" && action != "verify" &&
      action != "merge" && action != "index") {
    throw UsageError(
        fmt::format("unknown action '{}' (plan, status, run, verify, merge, index)", action));
  }
  const std::vector<std::string> files =
      vm.count("file") ? vm["file"].as<std::vector<std::string>>() : std::vector<std::string>();
  auto only = [&](const char* opt, std::initializer_list<const char*> acts) {
    if (!vm.count(opt) || vm[opt].defaulted()) return;
    std::string names;
    for (const char* a : acts) {
      if (action == a) return;
      names += fmt::format("{}'grid {}'", names.empty() ? "" : " and ", a);
    }
    throw UsageError(fmt::format("--{} applies to {} only", opt, names));
  };
  only("shard", {"plan"});
  only("dkp", {"plan"});
  only("jobs", {"run", "verify"});
  only("blas-threads", {"run", "verify", "plan"});
  only("max-memory", {"run", "verify", "plan"});
  only("cells", {"verify"});
  only("cell", {"verify", "run", "plan"});
  // An empty hash (an unset shell variable: --cell "$UNSET") would otherwise mean every cell,
  // and `run --force` would recompute them all.
  if (vm.count("cell") &&
      vm["cell"].as<std::string>().find_first_not_of(" \t") == std::string::npos) {
    throw UsageError(
        "--cell: empty configuration hash (an unset variable?); give a hash or a prefix of at "
        "least 4 characters ('dkp grid status FILE --verbose' lists them)");
  }
  only("force", {"run"});
  only("all", {"run"});
  // --force recomputes done cells: a whole grid only when asked for by name.
  if (vm.count("force") && !vm.count("cell") && !vm.count("all")) {
    throw UsageError(
        "--force without --cell would recompute every cell of the grid, done ones included: "
        "give --cell HASH, or --all to mean it");
  }
  if (vm.count("all") && (!vm.count("force") || vm.count("cell"))) {
    throw UsageError("--all goes with --force and without --cell");
  }
  only("seed", {"verify"});
  only("estimate", {"plan"});
  only("nodes", {"plan"});
  only("cores", {"plan"});
  only("into", {"merge"});
  only("dry-run", {"merge"});
  only("allow-dirty", {"run", "plan"});
  only("record", {"verify"});
  only("verbose", {"status", "plan", "merge"});
  only("profile", {"plan", "status", "run", "verify"});
  only("results", {"plan", "status", "run", "verify", "index"});
  const bool estimate = vm.count("estimate") > 0;
  if (!estimate) {
    for (const char* opt : {"nodes", "cores"}) {
      if (vm.count(opt) && !vm[opt].defaulted()) {
        throw UsageError(fmt::format("--{} applies to 'grid plan --estimate' only", opt));
      }
    }
    if (action == "plan" && vm.count("cell")) {
      throw UsageError("--cell applies to 'grid plan --estimate', 'grid run' and 'grid verify'");
    }
    if (action == "plan" && vm.count("verbose")) {
      throw UsageError(
          "--verbose applies to 'grid plan --estimate', 'grid status' and 'grid merge'");
    }
  }
  const int jobs = vm["jobs"].as<int>();
  if (jobs < 1 || jobs > 256) throw UsageError(fmt::format("-j {} is out of range (1..256)", jobs));
  if (action == "merge") return grid_merge(files, vm);
  if (action == "index") {
    if (!files.empty()) throw UsageError("grid index takes no grid file: it indexes --results");
    return grid_index(vm["results"].as<std::string>());
  }

  if (files.empty()) throw UsageError("missing grid file");
  if (estimate) {
    for (const auto& opt : {"shard", "dkp"}) {
      if (vm.count(opt))
        throw UsageError(fmt::format("--{} and --estimate exclude each other", opt));
    }
    auto fingerprints = data_fingerprints(vm["data"].as<std::string>());
    ex::StatusOptions status;
    if (fingerprints) status.data = &*fingerprints;
    // Read-only: no grid snapshot is written.
    return grid_estimate(std::vector<fs::path>(files.begin(), files.end()),
                         vm["profile"].as<std::string>(), vm["results"].as<std::string>(), vm,
                         status, vm["data"].as<std::string>());
  }
  if (action == "status") {
    // A mistyped or relative --results shows every cell "missing": say why (a grid's cells are
    // still listed, hashes included, as before anything ran).
    const fs::path root = vm["results"].as<std::string>();
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      std::cerr << fmt::format(
          "note: --results {}: no such directory ({}): every cell is missing there (relative "
          "paths are from the working directory)\n",
          root.string(), fs::absolute(root).lexically_normal().string());
    } else if (fs::is_empty(root, ec) && !ec) {
      std::cerr << fmt::format(
          "note: --results {}: an empty directory ({}): no grid has run there, so every cell is "
          "missing (the committed store is results/runs)\n",
          root.string(), fs::absolute(root).lexically_normal().string());
    }
  }
  if (action == "status" && files.size() > 1) {
    // A line per grid (and its cells with --verbose); a grid without the profile says so.
    auto fingerprints = data_fingerprints(vm["data"].as<std::string>());
    ex::StatusOptions status;
    if (fingerprints) status.data = &*fingerprints;
    const std::string profile = vm["profile"].as<std::string>();
    std::map<std::string, double> done;
    std::map<std::string, ex::CellProvenance> provenance;
    for (const fs::path file : files) {
      if (!has_profile(file, profile, fs::path(vm["data"].as<std::string>()))) {
        std::cout << fmt::format("grid {} (profile {}): no such profile\n", file.stem().string(),
                                 profile);
        continue;
      }
      grid_status(ex::load_grid(file, profile, fs::path(vm["data"].as<std::string>())),
                  vm["results"].as<std::string>(), vm.count("verbose") > 0, status, &done,
                  &provenance);
    }
    double seconds = 0.0;
    for (const auto& [hash, s] : done) seconds += s;
    std::cout << fmt::format(
        "all (once each, profile {}): {} done cell{}, which ran {:.1f} CPU hours\n", profile,
        done.size(), done.size() == 1 ? "" : "s", seconds / 3600.0);
    if (!provenance.empty()) {
      std::cout << fmt::format("all (once each, profile {}): provenance: {}\n", profile,
                               report::provenance_line(count_done(provenance), "done cells"));
    }
    return kExitOk;
  }
  if (files.size() > 1) {
    throw UsageError(
        fmt::format("one grid file, not {} ('grid status' and 'grid plan --estimate' take several)",
                    files.size()));
  }
  const fs::path file = files.front();
  const ex::Grid grid =
      ex::load_grid(file, vm["profile"].as<std::string>(), fs::path(vm["data"].as<std::string>()));
  const fs::path results = vm["results"].as<std::string>();
  std::vector<std::string> extra;
  if (const auto data = vm["data"].as<std::string>(); !data.empty()) {
    extra = {"--data", fs::absolute(data).lexically_normal().string()};
  }
  if (const int b = blas_threads_option(vm); b != 1) {
    extra.insert(extra.end(), {"--blas-threads", std::to_string(b)});
  }
  if (vm.count("max-memory")) {
    const std::string v = vm["max-memory"].as<std::string>();
    if (!platform::parse_byte_size(v)) {
      throw UsageError(fmt::format(
          "--max-memory: '{}' is not a size (bytes, or a number with K, M, G or T)", v));
    }
    extra.insert(extra.end(), {"--max-memory", v});
  }
  // run: its `dkp run` children write into the store too, and check it the same way.
  const bool allow_dirty = vm.count("allow-dirty") > 0;
  if (allow_dirty) extra.push_back("--allow-dirty");
  if (action == "status" || action == "plan") {
    // Results made from other data than the data now present are stale.
    auto fingerprints = data_fingerprints(vm["data"].as<std::string>());
    ex::StatusOptions status;
    if (fingerprints) status.data = &*fingerprints;
    if (action == "status") return grid_status(grid, results, vm.count("verbose") > 0, status);
    // plan records the grid beside its results, for `dkp tables <results>`, where it can: a store
    // it cannot write (read-only, another user's) is planned all the same.
    try {
      ex::write_grid_snapshot(grid, util::read_file(file), results);
    } catch (const std::exception& e) {
      spdlog::warn("could not record the grid's snapshot in {} ({}); planning without it",
                   results.string(), dkp::printable_message(e.what()));
    }
    return grid_plan(grid, results, vm, extra, status);
  }
  // verify only reads the results root (no snapshot either).
  if (action == "verify") return grid_verify(grid, results, vm, extra);

  // Cells of a binary built from a modified tree stay out of the committed store unless asked.
  if (const std::string why =
          ex::modified_tree_refusal(results, tree_state(), allow_dirty, "dkp grid run");
      !why.empty()) {
    throw Error(why);
  }
  // run records the grid beside its results, for `dkp tables <results>`.
  ex::write_grid_snapshot(grid, util::read_file(file), results);
  return grid_run(grid, results, jobs, extra, vm["data"].as<std::string>(), vm.count("force") > 0,
                  vm.count("cell") ? vm["cell"].as<std::string>() : std::string(), allow_dirty);
}

}  // namespace dkp::cli
