// dkp bench: timings of the hot paths with the project's own code.
//   dkp bench model --dataset boston --model dgp --inference global-inducing --depth 2
//   dkp bench ad
//   dkp bench dist
//   dkp bench blas --threads 2
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "autodiff/bench.hpp"
#include "cli.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/standardise.hpp"
#include "distributions/bench.hpp"
#include "linalg/bench.hpp"
#include "models/factory.hpp"
#include "run_setup.hpp"
#include "training/mc.hpp"
#include "util/blas_threads.hpp"
#include "util/error.hpp"

namespace dkp::cli {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int bench_model(const po::variables_map& vm) {
  const auto root = data::resolve_data_root(vm["data"].as<std::string>());
  const std::string dataset = vm["dataset"].as<std::string>();
  const auto split = load_run_data(root, dataset, 0).split;
  const int reps = vm["reps"].as<int>();
  const size_t S = size_t(vm["samples"].as<long>());
  if (vm["test-samples"].as<long>() < 0) throw UsageError("--test-samples must be >= 0");
  const size_t test_samples = size_t(vm["test-samples"].as<long>());
  if (vm["threads"].as<int>() < 1) throw UsageError("--threads must be at least 1");
  const size_t threads = size_t(vm["threads"].as<int>());
  const size_t batch = std::min<size_t>(size_t(vm["batch"].as<long>()), split.X_train.n_rows);
  const arma::mat Xb = split.X_train.rows(0, batch - 1);
  const arma::vec yb = split.y_train.subvec(0, batch - 1);
  std::cout << fmt::format("{:<28} {:>5} {:>7} {:>11} {:>11} {:>13}\n", "model", "depth", "batch",
                           "step ms", "fwd ms", "predict ms");
  std::vector<int> depths = vm["depth"].as<std::vector<int>>();
  if (vm["model"].as<std::string>() == "sgp" && vm["depth"].defaulted()) depths = {1};
  for (int depth : depths) {
    models::ModelSpec spec{vm["model"].as<std::string>(),     vm["inference"].as<std::string>(),
                           vm["posterior"].as<std::string>(), size_t(depth),
                           vm["kernel"].as<std::string>(),    0,
                           size_t(vm["inducing"].as<long>())};
    spec.hidden_ard = vm["hidden-ard"].as<bool>();
    spec.classes = data::dataset_classes(dataset);
    spec.per_output_precision = models::parse_gi_precision(vm["gi-precision"].as<std::string>());
    const std::string stl = vm["stl"].as<std::string>();
    models::set_stl(spec, stl);
    random::Stream run(0);
    random::Stream init = run.child("init", 0);
    const auto model = models::make_model(spec, split.X_train, split.y_train, init);
    std::vector<double> step_ms, fwd_ms;
    for (int r = 0; r < reps + 2; ++r) {  // two warm-up repetitions
      random::Stream noise = run.child("mc-noise", size_t(r));
      const auto t0 = Clock::now();
      training::elbo_gradient(*model, model->initial_parameters(), Xb, yb,
                              double(split.X_train.n_rows), S, 1.0, noise, threads, true);
      const auto t1 = Clock::now();
      training::elbo_gradient(*model, model->initial_parameters(), Xb, yb,
                              double(split.X_train.n_rows), S, 1.0, noise, threads, false);
      const auto t2 = Clock::now();
      if (r >= 2) {
        step_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        fwd_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
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
    if (spec.hidden_ard) label += " ard";
    if (spec.per_output_precision) label += " per-out";
    if (spec.model == "dwp" && stl != "on") label += " stl " + stl;
    std::cout << fmt::format("{:<28} {:>5} {:>7} {:>11.2f} {:>11.2f} {:>13.1f}\n", label, depth,
                             batch, median(step_ms), median(fwd_ms), pred_ms);
  }
  std::cout << fmt::format(
      "(S = {} training samples, {} inducing points, median of {} steps; fwd: the ELBO without "
      "gradient; prediction: {} test points x {} samples, one call after the steps, as at the end "
      "of a run; {} thread(s) sharing the samples)\n",
      S, vm["inducing"].as<long>(), reps, split.X_test.n_rows, test_samples,
      vm["threads"].as<int>());
  return kExitOk;
}

}  // namespace

int cmd_bench(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  // clang-format off
  desc.add_options()
    ("what", po::value<std::string>(), "model | ad | dist | blas")
    ("dataset", po::value<std::string>()->default_value("boston"), "UCI dataset (split 0), mnist or rectangles")
    ("model", po::value<std::string>()->default_value("dgp"), "model name as in dkp run")
    ("inference", po::value<std::string>()->default_value("global-inducing"), "dgp inference")
    ("posterior", po::value<std::string>()->default_value(""), "dwp posterior")
    ("kernel", po::value<std::string>()->default_value("se"), "kernel")
    ("hidden-ard", po::bool_switch(), "dgp global-inducing: ARD in every layer (as dkp run)")
    ("stl", po::value<std::string>()->default_value("on"), "dwp: on | off | mixing (as dkp run)")
    ("gi-precision", po::value<std::string>()->default_value("shared"), "dgp global-inducing: shared | per-output (as dkp run)")
    ("depth", po::value<std::vector<int>>()->multitoken()->default_value({2, 5}, "2 5"), "depths")
    ("samples", po::value<long>()->default_value(10), "Monte Carlo samples per step")
    ("test-samples", po::value<long>()->default_value(100), "samples of the timed prediction (0: none)")
    ("inducing", po::value<long>()->default_value(100), "inducing points")
    ("batch", po::value<long>()->default_value(10000), "batch size (full batch when larger)")
    ("reps", po::value<int>()->default_value(20), "timed repetitions")
    ("threads", po::value<int>()->default_value(1), "threads sharing the Monte Carlo samples (blas: threads running each kernel at once)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("what", 1);
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm, "dkp bench model|ad|dist|blas [options]")) return kExitOk;
  if (!vm.count("what")) throw UsageError("missing what to benchmark: model, ad, dist or blas");
  const auto what = vm["what"].as<std::string>();
  // Timings depend on OpenBLAS's kernels by up to 2x (README, Speed): say which ran, and why.
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  spdlog::info("OpenBLAS kernels: {}{}", util::blas_core(),
               forced != nullptr ? fmt::format(" (OPENBLAS_CORETYPE={})", forced) : "");
  if (what == "model") return bench_model(vm);
  if (what == "ad") {
    autodiff::run_ad_bench(std::cout, vm["reps"].as<int>());
    return kExitOk;
  }
  if (what == "dist") {
    distributions::run_dist_bench(std::cout, vm["reps"].as<int>());
    return kExitOk;
  }
  if (what == "blas") {
    if (vm["threads"].as<int>() < 1) throw UsageError("--threads must be at least 1");
    if (vm["reps"].as<int>() < 1) throw UsageError("--reps must be at least 1");
    linalg::run_blas_bench(std::cout, vm["reps"].as<int>(), vm["threads"].as<int>());
    return kExitOk;
  }
  throw UsageError(fmt::format("unknown benchmark '{}': model, ad, dist or blas", what));
}

}  // namespace dkp::cli
