// dkp as a C++ library: build a model from its spec, train it, predict, score, with the streams
// `dkp run` uses, so that the numbers are those of
//
//   dkp run --dataset yacht --split 0 --model dwp --posterior agw --depth 2 --steps S
//           --lr-schedule 0:0.01,S/2:0.001 --kl-anneal S/20 --test-samples 100
//
// (S even; scripts/smoke.sh checks that they agree).
//
//   build/dkp_example [S]    S training steps, default 2000; data root as for dkp: $DKP_DATA,
//                            ./data or ../shared/data
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "data/root.hpp"
#include "data/standardise.hpp"
#include "data/uci.hpp"
#include "eval/metrics.hpp"
#include "models/factory.hpp"
#include "platform/blas_threads.hpp"
#include "platform/process.hpp"
#include "random/stream.hpp"
#include "training/mc.hpp"
#include "training/trainer.hpp"

int main(int argc, char** argv) {
  using namespace dkp;
  platform::set_blas_threads(1);  // small matrices: one BLAS thread (DESIGN.md section 7)
  platform::tune_allocator();
  const long steps = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2000;
  if (steps < 2) {
    std::fprintf(stderr, "dkp_example: steps must be at least 2\n");
    return 2;
  }
  try {
    // Split 0 of Gal and Ghahramani's yacht splits, standardised with the training statistics.
    const data::UciDataset ds = data::load_uci(data::resolve_data_root(""), "yacht");
    const data::RegressionSplit split = data::make_regression_split(ds, 0);

    // The model: the names and defaults of `dkp run` (models/factory.hpp).
    models::ModelSpec spec;
    spec.model = "dwp";
    spec.posterior = "agw";
    spec.depth = 2;
    const random::Stream run(/*seed=*/0);  // every stream of the run derives from it
    random::Stream init = run.child("init", 0);
    const auto model = models::make_model(spec, split.X_train, split.y_train, init);

    // Training: Adam, S = 10 samples, full batch; the learning rate drops at half way.
    training::TrainOptions opt;
    opt.steps = size_t(steps);
    opt.lr = training::LrSchedule::steps(1e-2, {{uint64_t(steps / 2), 1e-3}});
    opt.kl = training::KlAnnealing(uint64_t(steps / 20));
    opt.log_every = 0;
    const training::TrainReport tr =
        training::train(*model, split.X_train, split.y_train, opt, run);

    // Prediction: 100 posterior samples at the test inputs, scored in original units.
    random::Stream pred_rng = run.child("predict", 0);
    const models::Predictive pred =
        training::predict(*model, tr.params, split.X_test, 100, pred_rng, /*threads=*/1);
    const eval::RegressionMetrics m =
        eval::regression_metrics(pred.mean, pred.var, split.y_test, split.y_std);
    std::printf("%s\n%ld steps: test_ll %.17g test_rmse %.17g\n", model->describe().c_str(), steps,
                m.test_ll, m.test_rmse);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dkp_example: %s\n", e.what());
    return 1;
  }
  return 0;
}
