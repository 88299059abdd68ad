// dkp as a C++ library: one run from its spec, through the entry point `dkp run` and the grid
// runner use (experiments/run.hpp: data, model, training, prediction, scores, manifest.json and
// result.json), read back by the result store. The numbers are those of
//
//   dkp run --dataset yacht --split 0 --model dwp --posterior agw --depth 2 --steps S
//           --lr-schedule 0:0.01,S/2:0.001 --kl-anneal S/20 --test-samples 100
//
// (S even; scripts/smoke.sh checks that they agree).
//
//   build/dkp_example [S [DIR]]   S training steps, default 2000; DIR the run directory (default:
//                                 a temporary one, removed at the end); data root as for dkp:
//                                 $DKP_DATA, ./data or ../shared/data
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include <spdlog/spdlog.h>

#include "experiments/run.hpp"
#include "experiments/store.hpp"
#include "platform/blas_threads.hpp"
#include "platform/process.hpp"

int main(int argc, char** argv) {
  using namespace dkp;
  namespace fs = std::filesystem;
  platform::set_blas_threads(1);  // small matrices: one BLAS thread (DESIGN.md section 7)
  platform::tune_allocator();
  spdlog::set_level(spdlog::level::warn);  // the run's own progress and summary lines: off
  const long steps = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2000;
  if (steps < 2) {
    std::fprintf(stderr, "dkp_example: steps must be at least 2\n");
    return 2;
  }
  const bool temporary = argc <= 2;
  const fs::path dir =
      temporary ? fs::temp_directory_path() / ("dkp-example-" + std::to_string(::getpid()))
                : fs::path(argv[2]);
  int status = 0;
  try {
    // The run: split 0 of Gal and Ghahramani's yacht splits, the model by its names (as
    // `dkp run`'s options), and the protocol with `dkp run`'s defaults: S = 10 samples, full
    // batch, the learning rate dropping at half way, 100 posterior samples for prediction.
    // README begin (README.md, "Using the library from C++", shows this part verbatim)
    experiments::RunSpec spec;
    spec.dataset = "yacht";
    spec.split = 0;
    spec.model = "dwp";
    spec.posterior = "agw";
    spec.depth = 2;
    spec.kernel = "se";
    experiments::Protocol& p = spec.protocol;
    p.steps = steps;
    p.lr_schedule = {{0, 1e-2}, {steps / 2, 1e-3}};
    p.kl_anneal = steps / 20;
    p.train_samples = 10;
    p.test_samples = 100;
    p.inducing = 100;
    p.batch = 10000;
    p.seed = 0;  // every random stream of the run derives from it

    experiments::RunOptions options;
    options.out = dir;
    options.log_every = 0;
    const experiments::RunOutcome outcome = experiments::run_cell(spec, options);
    // README end
    if (outcome.status == experiments::RunStatus::busy ||
        outcome.status == experiments::RunStatus::interrupted) {
      std::fprintf(stderr, "dkp_example: %s\n", outcome.message.c_str());
      status = 1;
    } else {
      // The result as the store reads it (done now, or reused from an earlier call with DIR).
      const auto values = experiments::read_result_values(dir / "result.json");
      std::printf("%s\n%ld steps: test_ll %.17g test_rmse %.17g\n", spec.label().c_str(), steps,
                  values.at("test_ll"), values.at("test_rmse"));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dkp_example: %s\n", e.what());
    status = 1;
  }
  if (temporary) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  return status;
}
