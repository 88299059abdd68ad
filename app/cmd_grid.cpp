// dkp grid plan|status|run|verify FILE: expand an experiment grid, list or run its pending cells,
// or rerun some of its done cells and compare them with the stored results.
#include <csignal>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data_fingerprints.hpp"
#include "experiments/grid.hpp"
#include "experiments/runner.hpp"
#include "experiments/store.hpp"
#include "experiments/verify.hpp"
#include "platform/dir_lock.hpp"
#include "platform/process.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

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

int grid_status(const ex::Grid& grid, const fs::path& results, bool verbose,
                const ex::StatusOptions& status) {
  size_t counts[ex::kCellStates] = {};
  std::vector<std::pair<ex::CellStatus, const ex::RunSpec*>> rows;
  for (const auto& c : grid.cells) {
    const auto st = ex::cell_status(c, results, status);
    ++counts[static_cast<int>(st.state)];
    rows.emplace_back(st, &c);
  }
  if (verbose) {
    for (const auto& [st, c] : rows) {
      std::cout << fmt::format("{:<11} {} {}{}\n", ex::to_string(st.state), c->hash(), c->label(),
                               st.detail.empty() ? "" : "  -- " + st.detail);
    }
  }
  auto n = [&](ex::CellState s) { return counts[static_cast<int>(s)]; };
  std::cout << fmt::format(
      "grid {} (profile {}, {}): {} cells: done {}, running {}, interrupted {}, missing {}, failed "
      "{}, damaged {}, stale {}\n",
      grid.name, grid.profile, (results / grid.name).string(), grid.cells.size(),
      n(ex::CellState::done), n(ex::CellState::running), n(ex::CellState::interrupted),
      n(ex::CellState::missing), n(ex::CellState::failed), n(ex::CellState::damaged),
      n(ex::CellState::stale));
  std::string to_force;
  if (n(ex::CellState::damaged)) {
    to_force = fmt::format("{} damaged (a malformed result.json, manifest.json or trace.csv)",
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
             const std::string& cell) {
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
                       "damaged (a malformed result.json, manifest.json or trace.csv)");
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
  const ex::ChosenCells chosen = ex::select_cells_to_verify(grid, results, sel);
  if (!chosen.note.empty()) std::cout << chosen.note << "\n" << std::flush;

  ex::VerifyOptions opt;
  opt.jobs = vm["jobs"].as<int>();
  opt.exe = platform::self_executable().string();
  opt.extra_args = extra;
  opt.stop = &g_stop;
  // Progress of the reruns on stderr; the verdicts on stdout.
  opt.log = vm.count("quiet") ? nullptr : &std::cerr;
  opt.on_verdict = [&](const ex::CellVerdict& v) {
    std::cout << ex::verdict_line(v, opt.tolerance) << "\n" << std::flush;
  };
  spdlog::info(
      "grid {} (profile {}): rerunning {} of its {} done cells (seed {}) in a scratch "
      "directory",
      grid.name, grid.profile, chosen.cells.size(), chosen.done, sel.seed);
  catch_stop_signals();
  const auto report = ex::verify_cells(chosen.cells, results, opt);
  std::cout << report.summary_line(grid) << "\n" << std::flush;
  if (report.not_run) return 130;
  return report.ok() ? kExitOk : kExitError;
}

}  // namespace

int cmd_grid(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add_options()("action", po::value<std::string>(), "plan | status | run | verify")(
      "file", po::value<std::string>(), "grid file (experiments/*.yaml)")(
      "profile", po::value<std::string>()->default_value("full"),
      "profile of the grid (e.g. quick; full = as written)")(
      "results", po::value<std::string>()->default_value("results/runs"),
      "results root (run directories go to <results>/<grid>/...)")(
      "shard", po::value<std::string>(),
      "plan: only shard i/n of the pending cells (cell j -> j mod n)")(
      "dkp", po::value<std::string>(),
      "plan: program name in the printed commands (default: this binary)")(
      "jobs,j", po::value<int>()->default_value(1), "run, verify: cells run at a time")(
      "verbose,v", "status: list every cell")(
      "cells", po::value<long>(),
      "verify: rerun this many done cells, chosen at random with --seed (default 1)")(
      "cell", po::value<std::string>(),
      "verify: rerun the cell with this configuration hash (or a unique prefix of it); run: run "
      "only that cell")(
      "force",
      "run: recompute the cells (all, or the --cell) afresh: their run directories are "
      "cleared first (never while another process holds one's lock), and dkp run gets --force")(
      "seed", po::value<uint64_t>()->default_value(0), "verify: seed of the choice of cells");
  po::positional_options_description pos;
  pos.add("action", 1).add("file", 1);
  po::variables_map vm;
  const std::string usage =
      "dkp grid plan|status|run FILE [--profile P] [--results DIR] [--shard i/n] [-j N] "
      "[--verbose]\n"
      "       dkp grid run FILE [--force] [--cell HASH] ...\n"
      "       dkp grid verify FILE [--profile P] [--results DIR] [--cells K | --cell HASH] "
      "[--seed S] [-j N]\n\n"
      "verify reruns K done cells (default 1; chosen at random with seed S, default 0) or\n"
      "the cell HASH exactly as 'grid run' does, into a scratch directory (the results are not\n"
      "touched), and compares the numbers with the stored result.json: bit-identical on the CPU\n"
      "and BLAS kernels of the stored run, within a stated tolerance elsewhere. Exit 0 when all\n"
      "match, 1 on a mismatch or a failed rerun.\n\n"
      "Cell states (status): done, running (a process holds its run.lock now), interrupted (a\n"
      "checkpoint or manifest, no result, nobody running it), missing, failed (error.json),\n"
      "damaged (a malformed result.json, manifest.json or trace.csv: named with the error) and\n"
      "stale (a result or checkpoint made from other data than the data now present). run skips\n"
      "cells running elsewhere, reports damaged and stale ones (exit 1) and recomputes them\n"
      "with --force (all cells, or --cell HASH).";
  if (!parse_or_help(args, desc, pos, vm, usage)) return kExitOk;
  if (!vm.count("action")) throw UsageError("missing action: plan, status, run or verify");
  if (!vm.count("file")) throw UsageError("missing grid file");
  const std::string action = vm["action"].as<std::string>();
  if (action != "plan" && action != "status" && action != "run" && action != "verify") {
    throw UsageError(fmt::format("unknown action '{}' (plan, status, run, verify)", action));
  }
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
  only("verbose", {"status"});
  only("cells", {"verify"});
  only("cell", {"verify", "run"});
  only("force", {"run"});
  only("seed", {"verify"});
  const int jobs = vm["jobs"].as<int>();
  if (jobs < 1 || jobs > 256) throw UsageError(fmt::format("-j {} is out of range (1..256)", jobs));

  const fs::path file = vm["file"].as<std::string>();
  const ex::Grid grid = ex::load_grid(file, vm["profile"].as<std::string>());
  const fs::path results = vm["results"].as<std::string>();
  std::vector<std::string> extra;
  if (const auto data = vm["data"].as<std::string>(); !data.empty()) {
    extra = {"--data", fs::absolute(data).lexically_normal().string()};
  }
  if (action == "status" || action == "plan") {
    // Results made from other data than the data now present are stale.
    auto fingerprints = data_fingerprints(vm["data"].as<std::string>());
    ex::StatusOptions status;
    if (fingerprints) status.data = &*fingerprints;
    if (action == "status") return grid_status(grid, results, vm.count("verbose") > 0, status);
    // plan records the grid beside its results, for `dkp tables <results>`.
    ex::write_grid_snapshot(grid, util::read_file(file), results);
    return grid_plan(grid, results, vm, extra, status);
  }
  // verify only reads the results root (no snapshot either).
  if (action == "verify") return grid_verify(grid, results, vm, extra);

  // run records the grid beside its results, for `dkp tables <results>`.
  ex::write_grid_snapshot(grid, util::read_file(file), results);
  return grid_run(grid, results, jobs, extra, vm["data"].as<std::string>(), vm.count("force") > 0,
                  vm.count("cell") ? vm["cell"].as<std::string>() : std::string());
}

}  // namespace dkp::cli
