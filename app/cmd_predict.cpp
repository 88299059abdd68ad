// dkp predict: predictions of a trained run (its final checkpoint) at the run's test points or at
// points read from a file, without training again.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data/uci.hpp"
#include "eval/metrics.hpp"
#include "experiments/run_setup.hpp"
#include "likelihoods/robustmax.hpp"
#include "training/mc.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::cli {

namespace {

namespace fs = std::filesystem;

po::options_description predict_options() {
  po::options_description d("Predict options");
  // clang-format off
  d.add_options()
    ("run", po::value<std::string>(), "run directory of `dkp run` (manifest.json, checkpoint.bin)")
    ("input", po::value<std::string>(),
     "points to predict at, original units: a CSV file (optional header line) or a "
     "whitespace-separated table, one row per point, the dataset's feature columns in order, "
     "optionally followed by the target (then log densities and metrics too); default: the "
     "run's test points")
    ("out", po::value<std::string>(), "predictions CSV (default: standard output)")
    ("hidden", po::value<std::string>(),
     "also write every hidden layer's sampled output at the points to this CSV, one row per "
     "sample, layer and point: sample,layer,index, then the features f1..fW (DGPs, DWP) or "
     "g_tt,g_1..g_P, the Gram matrix's diagonal and inner products with the P inducing points "
     "(NNGP, DIWP, Gram DGP); the same draws as the predictions")
    ("samples", po::value<long>(), "posterior samples (default: the run's --test-samples)")
    ("seed", po::value<uint64_t>(),
     "seed of the prediction's random numbers (default: the run's, which reproduces its test_ll)")
    ("threads", po::value<int>(), "threads sharing the samples (default: the run's)");
  // clang-format on
  return d;
}

}  // namespace

int cmd_predict(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add(predict_options());
  po::positional_options_description pos;
  pos.add("run", 1);
  po::variables_map vm;
  const std::string usage =
      "dkp predict --run DIR [--input FILE] [--out FILE] [--hidden FILE] [options]";
  if (!parse_or_help(args, desc, pos, vm, usage)) return kExitOk;
  if (!vm.count("run")) throw UsageError("--run is required");
  const fs::path dir = vm["run"].as<std::string>();
  if (vm.count("samples") && vm["samples"].as<long>() <= 0) {
    throw UsageError(fmt::format("--samples must be positive, got {}", vm["samples"].as<long>()));
  }
  if (vm.count("threads") && vm["threads"].as<int>() < 1) {
    throw UsageError("--threads must be at least 1");
  }
  const experiments::TrainedRun tr =
      experiments::load_trained_run(dir, vm["data"].as<std::string>());
  const auto& spec = tr.spec;
  const auto& split = tr.split;
  const auto& p = spec.protocol;
  const int threads = vm.count("threads") ? vm["threads"].as<int>() : tr.threads;

  // The points, standardised with the run's training statistics.
  arma::mat X;
  arma::vec y;  // standardised; empty when the input has no targets
  bool have_y = true;
  if (vm.count("input")) {
    const fs::path input = vm["input"].as<std::string>();
    const arma::mat raw = data::read_points(input);
    const arma::uword D = split.X_train.n_cols;
    if (raw.n_cols != D && raw.n_cols != D + 1) {
      throw DataError(
          fmt::format("{}: {} columns, expected {} ({}'s features) or {} (features and target)",
                      input.string(), raw.n_cols, D, spec.dataset, D + 1));
    }
    X = split.x_stats.transform(raw.cols(0, D - 1));
    have_y = raw.n_cols == D + 1;
    if (have_y) y = (raw.col(D) - split.y_mean) / split.y_std;
  } else {
    X = split.X_test;
    y = split.y_test;
  }

  const size_t samples = size_t(vm.count("samples") ? vm["samples"].as<long>() : p.test_samples);
  random::Stream rng = vm.count("seed")
                           ? random::Stream(vm["seed"].as<uint64_t>()).child("predict", 0)
                           : experiments::run_stream(spec).child("predict", 0);
  const bool keep_hidden = vm.count("hidden") > 0;
  const models::Predictive pred = training::predict(*tr.model, tr.checkpoint.params, X, samples,
                                                    rng, size_t(threads), keep_hidden);
  if (keep_hidden && pred.hidden_kind == models::HiddenKind::None) {
    throw UsageError(
        fmt::format("--hidden: the run's model has no hidden layers ({})", tr.model->describe()));
  }
  // Formatted before anything is written.
  const std::string hidden = keep_hidden ? models::hidden_csv(pred) : std::string();
  if (pred.chol.jittered > 0) {
    spdlog::warn("{} of {} Cholesky factorisations needed jitter (largest relative jitter {:.1e})",
                 pred.chol.jittered, pred.chol.factorisations, pred.chol.max_jitter_rel);
  }
  std::string csv;
  if (pred.classes > 0 && have_y) {
    const eval::ClassificationMetrics m = eval::classification_metrics(
        pred.mean, pred.var, pred.classes, likelihoods::class_labels(y, pred.classes),
        size_t(threads), pred.class_likelihood);
    csv = experiments::class_predictions_csv(m, y);
    spdlog::info("{} points, {} samples: test_ll {:.17g}  test_acc {:.17g}  ECE {:.4f}", X.n_rows,
                 samples, m.test_ll, m.test_acc, m.reliability.ece);
    std::string bins;  // the non-empty confidence bins: points, mean confidence, accuracy
    const eval::Reliability& r = m.reliability;
    for (arma::uword b = 0; b < r.count.n_elem; ++b) {
      if (r.count[b] == 0) continue;
      bins += fmt::format("  [{:.1f},{:.1f}) {} {:.4f} {:.4f}", double(b) / double(r.count.n_elem),
                          double(b + 1) / double(r.count.n_elem), r.count[b], r.confidence[b],
                          r.accuracy[b]);
    }
    spdlog::info("reliability (confidence bin, points, mean confidence, accuracy):{}", bins);
  } else if (pred.classes > 0) {
    csv = experiments::class_predictions_csv(eval::class_probabilities(
        pred.mean, pred.var, pred.classes, size_t(threads), pred.class_likelihood));
    spdlog::info("{} points, {} samples", X.n_rows, samples);
  } else if (have_y) {
    const eval::RegressionMetrics m = eval::regression_metrics(pred.mean, pred.var, y, split.y_std);
    const arma::vec y_orig = split.y_to_original(y);
    csv = experiments::predictions_csv(split, m, y_orig);
    spdlog::info("{} points, {} samples: test_ll {:.17g}  test_rmse {:.17g}  95% coverage {:.3f}",
                 X.n_rows, samples, m.test_ll, m.test_rmse,
                 eval::central_coverage(m.point_pit, 0.95));
  } else {
    csv = experiments::predictions_csv(split, eval::mixture_moments(pred.mean, pred.var));
    spdlog::info("{} points, {} samples", X.n_rows, samples);
  }
  if (keep_hidden) {
    util::write_file_atomic(vm["hidden"].as<std::string>(), hidden);
    spdlog::info("hidden layers: {} samples x {} layers x {} points -> {}", pred.hidden.size(),
                 pred.hidden.front().size(), X.n_rows, vm["hidden"].as<std::string>());
  }
  if (vm.count("out")) {
    util::write_file_atomic(vm["out"].as<std::string>(), csv);
  } else {
    std::cout << csv;
  }
  return kExitOk;
}

}  // namespace dkp::cli
