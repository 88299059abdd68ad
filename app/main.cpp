// dkp: deep Gaussian and deep kernel processes, reproduced. Entry point and subcommand dispatch.
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "platform/blas_buffers.hpp"
#include "platform/blas_threads.hpp"
#include "platform/cpu.hpp"
#include "platform/process.hpp"
#include "util/error.hpp"
#include "util/parse.hpp"
#include "util/version.hpp"

namespace dkp::cli {

namespace {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", "train and evaluate one configuration (dataset, split, model)", cmd_run},
      {"predict", "predictions of a trained run at its test points or at points from a file",
       cmd_predict},
      {"params", "what a trained run learned: each parameter's values and how far it moved",
       cmd_params},
      {"grid", "expand, plan, run and inspect experiment grids", cmd_grid},
      {"tables", "aggregate results into the papers' tables (LaTeX, CSV)", cmd_tables},
      {"data",
       "list and verify datasets; the no-learning baseline of each split (list|verify|baseline)",
       cmd_data},
      {"bench", "time training steps, prediction and kernels", cmd_bench},
      {"toy", "the compositional-uncertainty paper's toy DGPs (its Table 1 and Figure 5)", cmd_toy},
  };
  return table;
}

void print_main_help() {
  std::cout << "dkp " << version_string() << " (" << git_sha() << ")\n"
            << "Deep Gaussian processes and deep kernel processes: models, experiments, tables.\n\n"
            << "usage: dkp <command> [options]\n"
            << "       dkp --version | --help\n\ncommands:\n";
  for (const auto& c : commands()) std::cout << fmt::format("  {:<8} {}\n", c.name, c.summary);
  std::cout << "\n'dkp <command> --help' describes each command's options.\n";
}

/// Sets spdlog's level from a `--log-level` value; false (level unchanged) when it names none.
bool set_log_level(const std::string& lvl) {
  const auto parsed = spdlog::level::from_str(lvl);
  if (parsed == spdlog::level::off && lvl != "off") return false;
  spdlog::set_level(parsed);
  return true;
}

/// Boost reads "-1" into an unsigned option (a seed) as 2^64 - 1: refuse a negative value of any
/// option parsed as uint64_t, given as "--name VALUE" or "--name=VALUE".
void refuse_negative_unsigned(const std::vector<std::string>& args, const po::variables_map& vm) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0) continue;
    std::string name = args[i].substr(2), value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < args.size()) {
      value = args[i + 1];
    }
    const auto it = vm.find(name);
    if (it == vm.end() || !boost::any_cast<uint64_t>(&it->second.value())) continue;
    if (!value.empty() && value[0] == '-') {
      throw UsageError(fmt::format("--{} must be an integer >= 0, got '{}'", name, value));
    }
  }
}

}  // namespace

int blas_threads_option(const po::variables_map& vm) {
  const int n = vm["blas-threads"].as<int>();
  if (n < 1) throw UsageError("--blas-threads must be at least 1");
  return n;
}

po::options_description common_options() {
  po::options_description d("Common options");
  d.add_options()("help,h", "print this help")(
      "log-level", po::value<std::string>()->default_value("info"),
      "trace|debug|info|warn|error|off")("quiet,q", "only warnings and errors")(
      "data", po::value<std::string>()->default_value(""),
      "data root (default: $DKP_DATA, then ./data, then ../shared/data)");
  return d;
}

bool parse_or_help(const std::vector<std::string>& args, const po::options_description& desc,
                   const po::positional_options_description& pos, po::variables_map& vm,
                   const std::string& usage_line) {
  try {
    po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage_line << "\n\n" << desc << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  refuse_negative_unsigned(args, vm);
  if (vm.count("quiet")) {
    spdlog::set_level(spdlog::level::warn);
  } else if (vm.count("log-level")) {
    const auto lvl = vm["log-level"].as<std::string>();
    if (!set_log_level(lvl)) throw UsageError(fmt::format("invalid --log-level '{}'", lvl));
  }
  return true;
}

}  // namespace dkp::cli

int main(int argc, char** argv) {
  using namespace dkp::cli;
  dkp::platform::tune_allocator();
  dkp::platform::set_blas_threads(1);
  auto logger = spdlog::stderr_color_mt("dkp");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("[%H:%M:%S] %^%l%$: %v");

  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_main_help();
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version" || args[0] == "-V") {
    const dkp::TreeState tree = dkp::tree_state();
    std::cout << "dkp " << dkp::version_string() << " (" << dkp::git_sha() << ")\n"
              << "Work tree: "
              << (tree == dkp::TreeState::clean ? std::string("clean (the commit's)")
                  : tree == dkp::TreeState::modified
                      ? std::string("modified against the commit (changes' sha256 ") +
                            dkp::tree_diff_sha256() + ", scripts/tree-diff.sh)"
                      : std::string("unknown (no git)"))
              << "\n"
              << "BLAS: " << dkp::platform::blas_config()
              << "; kernels in use: " << dkp::platform::blas_core() << "\n"
              << "BLAS work buffers: " << dkp::platform::blas_buffers_mode() << "\n"
              << "CPU: " << dkp::platform::cpu_description() << "\n";
    return kExitOk;
  }
  const std::string name = args[0];
  args.erase(args.begin());
  // The warnings below come before the command parses its options: they obey its --quiet and
  // --log-level all the same (a bad value is left for the command's parser to report).
  if (const auto lvl = dkp::util::log_level_request(args)) set_log_level(*lvl);
  // The OpenBLAS buffer replacement's guard (platform/blas_buffers.hpp): say once when it fell back
  // because of the OpenBLAS version (the environment's request needs no warning).
  if (const std::string mode = dkp::platform::blas_buffers_mode();
      mode.find("not written for") != std::string::npos) {
    spdlog::warn("{} is not a version dkp's OpenBLAS work buffers were written for: using {}",
                 dkp::platform::blas_config(), mode);
  }
  // The commands that train or time models: say when OpenBLAS fell back to its generic kernels.
  if (name == "run" || name == "predict" || name == "grid" || name == "bench" || name == "toy")
    dkp::platform::warn_generic_blas_kernels();
  const Command* cmd = nullptr;
  for (const auto& c : commands())
    if (name == c.name) cmd = &c;
  if (!cmd) {
    std::string names;
    for (const auto& c : commands()) names += (names.empty() ? "" : ", ") + std::string(c.name);
    std::cerr << "dkp: unknown command '" << name << "' (commands: " << names
              << "; see dkp --help)\n";
    return kExitUsage;
  }
  try {
    return cmd->run(args);
  } catch (const UsageError& e) {
    std::cerr << "dkp " << name << ": " << dkp::printable_message(e.what()) << " (see dkp " << name
              << " --help)\n";
    return kExitUsage;
  } catch (const dkp::ConfigError& e) {
    std::cerr << "dkp " << name << ": " << dkp::printable_message(e.what()) << "\n";
    return kExitUsage;
  } catch (const dkp::NotImplementedError& e) {
    std::cerr << "dkp " << name << ": " << dkp::printable_message(e.what()) << "\n";
    return kExitNotImplemented;
  } catch (const std::bad_alloc&) {
    // The memory guard (experiments/memory_guard.hpp) refuses only what its lower bound rules
    // out: say what the memory grows with, not a bare bad_alloc.
    std::cerr << "dkp " << name
              << ": error: out of memory (an allocation failed). A run's memory grows with "
                 "--batch, --inducing (its square), --samples, the "
                 "width and the depth, and with the data; give smaller values, or more memory. "
                 "Nothing half-written was left: results and checkpoints are written whole.\n";
    return kExitError;
  } catch (const std::exception& e) {
    std::cerr << "dkp " << name << ": error: " << dkp::printable_message(e.what()) << "\n";
    return kExitError;
  }
}
