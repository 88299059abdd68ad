// dkp bench: timings of the hot paths with the project's own code.
//   dkp bench model --dataset boston --model dgp --inference global-inducing --depth 2
//   dkp bench ad
//   dkp bench dist
//   dkp bench blas --threads 2
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bench/ad_bench.hpp"
#include "bench/blas_bench.hpp"
#include "bench/dist_bench.hpp"
#include "cli.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/standardise.hpp"
#include "experiments/run_setup.hpp"
#include "models/factory.hpp"
#include "platform/blas_count.hpp"
#include "platform/blas_threads.hpp"
#include "platform/cpu.hpp"
#include "platform/process.hpp"
#include "training/mc.hpp"
#include "util/error.hpp"

namespace dkp::cli {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The path of a shared library this process has loaded whose file name starts with `prefix`
// (from /proc/self/maps), or "" when there is none.
std::string loaded_library(const std::string& prefix) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const auto name = path.rfind('/');
    if (path.compare(name + 1, prefix.size(), prefix) == 0) return path;
  }
  return "";
}

// --flops: this process needs the counting shim (platform/blas_count.hpp). Without it, runs this
// same command again with the shim beside the binary preloaded, and returns its exit code (never
// returns on success of execv). DKP_BLAS_COUNT_REEXEC guards against a loop.
int reexec_with_blas_count(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  if (std::getenv("DKP_BLAS_COUNT_REEXEC") != nullptr) {
    throw Error(fmt::format("--flops: {} was preloaded but is not active (LD_PRELOAD='{}')",
                            platform::blas_count_library(),
                            std::getenv("LD_PRELOAD") ? std::getenv("LD_PRELOAD") : ""));
  }
  const fs::path exe = platform::self_executable();
  const fs::path shim = exe.parent_path() / platform::blas_count_library();
  if (!fs::exists(shim)) {
    throw Error(
        fmt::format("--flops needs {} beside the dkp binary ({}); build it with 'make build'",
                    platform::blas_count_library(), shim.string()));
  }
  const char* old = std::getenv("LD_PRELOAD");
  std::string preload =
      shim.string() + (old != nullptr && *old != '\0' ? std::string(":") + old : "");
  // A sanitizer build (make sanitize) refuses to start unless the ASan runtime comes first.
  const std::string asan = loaded_library("libasan.so");
  if (!asan.empty()) preload = asan + ":" + preload;
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  ::setenv("DKP_BLAS_COUNT_REEXEC", "1", 1);
  std::vector<std::string> argv_s = {exe.string(), "bench"};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout << std::flush;
  ::execv(exe.c_str(), argv.data());
  throw Error(
      fmt::format("--flops: could not run {} again: {}", exe.string(), std::strerror(errno)));
}

// Adds the work of each routine between two readings of platform::blas_count_routines() to `acc`
// (same order; `acc` starts empty).
void add_routines(std::vector<platform::RoutineCount>& acc,
                  const std::vector<platform::RoutineCount>& a,
                  const std::vector<platform::RoutineCount>& b) {
  if (acc.empty()) {
    acc = a;
    for (auto& r : acc) r.count = {};
  }
  for (size_t i = 0; i < acc.size() && i < a.size() && i < b.size(); ++i) {
    acc[i].count += b[i].count - a[i].count;
  }
}

// --flops: the step's BLAS/LAPACK work by routine, per step (the mean over `reps` steps),
// longest first: calls, GFlop, share of the step's flops, milliseconds inside the routine
// (summed over threads) and the rate inside it (per thread).
void print_routines(const std::string& label, int depth, std::vector<platform::RoutineCount> acc,
                    int reps) {
  std::sort(acc.begin(), acc.end(),
            [](const auto& x, const auto& y) { return x.count.seconds > y.count.seconds; });
  double total = 0.0;
  for (const auto& r : acc) total += r.count.flops;
  std::cout << fmt::format("{} depth {}, the step's BLAS/LAPACK calls by routine:\n", label, depth);
  std::cout << fmt::format("  {:<14} {:>10} {:>11} {:>8} {:>10} {:>12}\n", "routine", "calls",
                           "GFlop", "flop %", "ms", "GFlop/s");
  const double n = double(reps);
  for (const auto& r : acc) {
    if (r.count.calls == 0) continue;
    const platform::BlasCount& c = r.count;
    std::cout << fmt::format("  {:<14} {:>10.1f} {:>11.4f} {:>8.1f} {:>10.2f} {:>12.1f}\n", r.name,
                             double(c.calls) / n, c.flops / n * 1e-9,
                             total > 0.0 ? 100.0 * c.flops / total : 0.0, c.seconds / n * 1e3,
                             c.seconds > 0.0 ? c.flops / c.seconds * 1e-9 : 0.0);
  }
}

int bench_model(const po::variables_map& vm) {
  for (const char* opt : {"samples", "inducing", "batch"}) {
    if (vm[opt].as<long>() < 1) throw UsageError(fmt::format("--{} must be at least 1", opt));
  }
  const auto root = data::resolve_data_root(vm["data"].as<std::string>());
  const std::string dataset = vm["dataset"].as<std::string>();
  const auto split = experiments::load_run_data(root, dataset, 0).split;
  const int reps = vm["reps"].as<int>();
  const size_t S = size_t(vm["samples"].as<long>());
  if (vm["test-samples"].as<long>() < 0) throw UsageError("--test-samples must be >= 0");
  const size_t test_samples = size_t(vm["test-samples"].as<long>());
  if (vm["threads"].as<int>() < 1) throw UsageError("--threads must be at least 1");
  const size_t threads = size_t(vm["threads"].as<int>());
  const int blas_threads = blas_threads_option(vm);
  const platform::ScopedBlasThreads blas_scope(blas_threads);
  const size_t batch = std::min<size_t>(size_t(vm["batch"].as<long>()), split.X_train.n_rows);
  const arma::mat Xb = split.X_train.rows(0, batch - 1);
  const arma::vec yb = split.y_train.subvec(0, batch - 1);
  const bool flops = vm["flops"].as<bool>();
  std::cout << fmt::format("{:<28} {:>5} {:>7} {:>11} {:>11} {:>13}", "model", "depth", "batch",
                           "step ms", "fwd ms", "predict ms");
  // --flops: the machine's large-dgemm rate on the same threads, measured in this run before the
  // steps (its calls are outside the steps' counts), the reference of the steps' share of peak.
  const int ref_threads = int(std::min<size_t>(size_t(threads), S));
  const double peak = flops ? bench::large_dgemm_rate(5, ref_threads) : 0.0;
  if (flops) {
    std::cout << fmt::format(" {:>11} {:>10} {:>7} {:>9} {:>10} {:>9}", "step GFlop", "GFlop/s",
                             "peak %", "BLAS %", "fwd GFlop", "BLAS %");
  }
  std::cout << "\n";
  struct Breakdown {
    std::string label;
    int depth;
    std::vector<platform::RoutineCount> routines;
  };
  std::vector<Breakdown> breakdowns;     // --flops, one per depth
  std::vector<std::string> group_lines;  // more than one sample group: each group's time
  std::vector<int> depths = vm["depth"].as<std::vector<int>>();
  if (vm["model"].as<std::string>() == "sgp" && vm["depth"].defaulted()) depths = {1};
  for (int depth : depths) {
    // The model `dkp run` would build with these options (seed 0, hidden width: the features).
    experiments::RunSpec spec;
    spec.dataset = dataset;
    spec.model = vm["model"].as<std::string>();
    // --inference's default names the DGP's; other models take none unless it is given.
    if (spec.model == "dgp" || !vm["inference"].defaulted())
      spec.inference = vm["inference"].as<std::string>();
    spec.posterior = vm["posterior"].as<std::string>();
    spec.depth = depth;
    spec.kernel = vm["kernel"].as<std::string>();
    spec.protocol.inducing = vm["inducing"].as<long>();
    spec.options = model_options_of(vm);
    const random::Stream run = experiments::run_stream(spec);
    const auto model = experiments::make_run_model(
        spec, experiments::resolve_width(spec.protocol.width, split.X_train.n_cols), split, run);
    std::vector<double> step_ms, fwd_ms;
    std::vector<std::vector<double>> group_ms;  // [group][repetition], the steps' groups
    platform::BlasCount step_blas, fwd_blas;    // summed over the timed repetitions (--flops)
    std::vector<platform::RoutineCount> step_routines;  // the same by routine
    const auto count = [] { return platform::blas_count().value_or(platform::BlasCount{}); };
    for (int r = 0; r < reps + 2; ++r) {  // two warm-up repetitions
      random::Stream noise = run.child("mc-noise", size_t(r));
      const auto r0 =
          flops ? platform::blas_count_routines() : std::vector<platform::RoutineCount>{};
      const platform::BlasCount c0 = count();
      const auto t0 = Clock::now();
      const training::ElboGradient step =
          training::elbo_gradient(*model, model->initial_parameters(), Xb, yb,
                                  double(split.X_train.n_rows), S, 1.0, noise, threads, true);
      const auto t1 = Clock::now();
      const platform::BlasCount c1 = count();
      const auto r1 =
          flops ? platform::blas_count_routines() : std::vector<platform::RoutineCount>{};
      training::elbo_gradient(*model, model->initial_parameters(), Xb, yb,
                              double(split.X_train.n_rows), S, 1.0, noise, threads, false);
      const auto t2 = Clock::now();
      const platform::BlasCount c2 = count();
      if (r >= 2) {
        step_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        fwd_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        step_blas += c1 - c0;
        fwd_blas += c2 - c1;
        add_routines(step_routines, r0, r1);
        group_ms.resize(step.group_seconds.size());
        for (size_t g = 0; g < step.group_seconds.size(); ++g)
          group_ms[g].push_back(step.group_seconds[g] * 1e3);
      }
    }
    double pred_ms = std::nan("");
    if (test_samples > 0) {
      random::Stream pr = run.child("predict", 0);
      const auto t0 = Clock::now();
      training::predict(*model, model->initial_parameters(), split.X_test, test_samples, pr,
                        threads);
      pred_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    std::string label = spec.model;
    if (spec.model == "dgp" && !spec.inference.empty()) label += "/" + spec.inference;
    if (spec.model == "dwp" && !spec.posterior.empty()) label += "/" + spec.posterior;
    if (spec.model != "sgp" && spec.kernel != "se") label += " (" + spec.kernel + ")";
    for (const auto& [name, value] : spec.options.set_values()) label += " " + name + "=" + value;
    if (group_ms.size() > 1) {
      std::string ms;
      for (const auto& g : group_ms)
        ms += fmt::format("{}{:.2f}", ms.empty() ? "" : " / ", median(g));
      group_lines.push_back(fmt::format("{} depth {}: {} ms", label, depth, ms));
    }
    std::cout << fmt::format("{:<28} {:>5} {:>7} {:>11.2f} {:>11.2f} {:>13.1f}", label, depth,
                             batch, median(step_ms), median(fwd_ms), pred_ms);
    if (flops) {
      // Per step: the mean flops of the timed repetitions (the same every repetition but for
      // jitter retries), their rate over the median step time, and the BLAS share of the
      // threads' time (the summed BLAS seconds over the summed wall time x threads).
      const double n = double(reps), T = double(std::min(threads, S));
      auto share = [&](const platform::BlasCount& c, const std::vector<double>& ms) {
        double wall = 0.0;
        for (double m : ms) wall += m * 1e-3;
        return 100.0 * c.seconds / (wall * T);
      };
      const double rate = step_blas.flops / n / (median(step_ms) * 1e-3) * 1e-9;
      std::cout << fmt::format(" {:>11.4f} {:>10.1f} {:>7.1f} {:>9.1f} {:>10.4f} {:>9.1f}",
                               step_blas.flops / n * 1e-9, rate, 100.0 * rate / peak,
                               share(step_blas, step_ms), fwd_blas.flops / n * 1e-9,
                               share(fwd_blas, fwd_ms));
      breakdowns.push_back({label, depth, std::move(step_routines)});
    }
    std::cout << "\n";
  }
  std::cout << fmt::format(
      "(S = {} training samples, {} inducing points, median of {} steps; fwd: the ELBO without "
      "gradient; prediction: {} test points x {} samples, one call after the steps, as at the end "
      "of a run; {} thread(s) sharing the samples, {} BLAS thread(s) in each call)\n",
      S, vm["inducing"].as<long>(), reps, split.X_test.n_rows, test_samples,
      vm["threads"].as<int>(), blas_threads);
  if (!group_lines.empty()) {
    std::cout << "Each thread's sample group, median ms of its share of the step (group 0 on the "
                 "calling thread); the step waits for the slowest, so a gap between equal groups "
                 "means the cores ran at different speeds:\n";
    for (const auto& l : group_lines) std::cout << "  " << l << "\n";
  }
  if (flops) {
    std::cout << fmt::format(
        "(peak %: GFlop/s over the machine's large-dgemm rate on the same threads, {:.1f} GFlop/s "
        "for dgemm 1000 x 1000 x 1000 on {} thread(s) at once with {} BLAS thread(s) each, "
        "measured in this run before the steps: the share of the machine's dense-BLAS rate the "
        "step reaches)\n",
        peak, ref_threads, blas_threads);
    std::cout << "(--flops: the nominal floating-point operations of the step's BLAS and LAPACK "
                 "calls (gemm 2mnk, triangular solve m^2 n, Cholesky n^3/3, ...; "
                 "bench/shim/blas_count.cpp), counted by libdkp_blas_count.so; GFlop/s: that count "
                 "over the median step time; BLAS %: their share of the threads' time. Work "
                 "outside BLAS (kernels' exponentials, elementwise ops, random draws) is not "
                 "counted. Timing every call adds about 0.1 us to it.)\n";
    for (const auto& b : breakdowns) print_routines(b.label, b.depth, b.routines, reps);
    std::cout << "(by routine, per step: outermost calls, their nominal GFlop and share of the "
                 "step's, milliseconds inside the routine summed over the threads, and GFlop/s "
                 "inside it, per thread)\n";
  }
  return kExitOk;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  // clang-format off
  desc.add_options()
    ("what", po::value<std::string>(), "model | ad | dist | blas")
    ("dataset", po::value<std::string>()->default_value("boston"), "UCI dataset (split 0), mnist, rectangles or cifar10")
    ("model", po::value<std::string>()->default_value("dgp"), "model name as in dkp run")
    ("inference", po::value<std::string>()->default_value("global-inducing"), "dgp inference")
    ("posterior", po::value<std::string>()->default_value(""), "dwp posterior")
    ("kernel", po::value<std::string>()->default_value("se"), "kernel")
    ("depth", po::value<std::vector<int>>()->multitoken()->default_value({2, 5}, "2 5"), "depths")
    ("samples", po::value<long>()->default_value(10), "Monte Carlo samples per step")
    ("test-samples", po::value<long>()->default_value(100), "samples of the timed prediction (0: none)")
    ("inducing", po::value<long>()->default_value(100), "inducing points")
    ("batch", po::value<long>()->default_value(10000), "batch size (full batch when larger)")
    ("reps", po::value<int>()->default_value(20), "timed repetitions")
    ("threads", po::value<int>()->default_value(1), "threads sharing the Monte Carlo samples (blas: threads running each kernel at once)")
    ("blas-threads", po::value<int>()->default_value(1), "model: OpenBLAS threads inside each BLAS and LAPACK call (as dkp run)")
    ("flops", po::bool_switch(), "model: also count the step's BLAS/LAPACK flops, their rate and time share, in all and by routine (reruns itself with libdkp_blas_count.so preloaded)");
  // clang-format on
  add_model_options(desc);  // as dkp run
  po::positional_options_description pos;
  pos.add("what", 1);
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm, "dkp bench model|ad|dist|blas [options]")) return kExitOk;
  if (!vm.count("what")) throw UsageError("missing what to benchmark: model, ad, dist or blas");
  const auto what = vm["what"].as<std::string>();
  if (vm["reps"].as<int>() < 1) throw UsageError("--reps must be at least 1");
  if (vm["flops"].as<bool>()) {
    if (what != "model") throw UsageError("--flops applies to 'dkp bench model' only");
    if (!platform::blas_count()) return reexec_with_blas_count(args);
  }
  // Timings depend on OpenBLAS's kernels by up to 2x (docs/performance.md): say which ran, and why.
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  spdlog::info("OpenBLAS kernels: {}{}; CPU: {}", platform::blas_core(),
               forced != nullptr ? fmt::format(" (OPENBLAS_CORETYPE={})", forced) : "",
               platform::cpu_description());
  if (what == "model") return bench_model(vm);
  if (what == "ad") {
    bench::run_ad_bench(std::cout, vm["reps"].as<int>());
    return kExitOk;
  }
  if (what == "dist") {
    bench::run_dist_bench(std::cout, vm["reps"].as<int>());
    return kExitOk;
  }
  if (what == "blas") {
    if (vm["threads"].as<int>() < 1) throw UsageError("--threads must be at least 1");
    bench::run_blas_bench(std::cout, vm["reps"].as<int>(), vm["threads"].as<int>());
    return kExitOk;
  }
  throw UsageError(fmt::format("unknown benchmark '{}': model, ad, dist or blas", what));
}

}  // namespace dkp::cli
