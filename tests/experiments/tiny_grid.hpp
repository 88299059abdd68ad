// A tiny generic grid for the experiments tests (store, runner, verify, merge): 10 steps at one
// learning rate, no KL annealing, 1 training and 2 test samples, 5 inducing points, batch 8, SE
// kernel, seed 0; the datasets, splits, depths and models as given (YAML flow lists' contents).
#pragma once

#include <string>

namespace dkp::test {

inline std::string tiny_grid_text(const std::string& name, const std::string& datasets,
                                  const std::string& splits, const std::string& depths = "3",
                                  const std::string& models = "nngp, diwp") {
  return "name: " + name +
         "\nfamily: generic\nprotocol:\n  steps: 10\n  lr_schedule: [[0, 0.01]]\n"
         "  kl_anneal: 0\n  train_samples: 1\n  test_samples: 2\n  inducing: 5\n  batch: 8\n"
         "  kernel: se\n  seed: 0\naxes:\n  datasets: [" +
         datasets + "]\n  splits: " + splits + "\n  depths: [" + depths + "]\n  models: [" +
         models + "]\n";
}

}  // namespace dkp::test
