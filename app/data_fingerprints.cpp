// Data fingerprints for the store's cell states (data_fingerprints.hpp).
#include "data_fingerprints.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "data/mnist.hpp"
#include "data/root.hpp"
#include "experiments/run_setup.hpp"
#include "util/error.hpp"

namespace dkp::cli {

std::optional<experiments::DataFingerprints> data_fingerprints(const std::string& data_option) {
  std::filesystem::path root;
  try {
    root = data::resolve_data_root(data_option);
  } catch (const Error& e) {
    spdlog::info("data fingerprints not checked (results made from other data are not found): {}",
                 e.what());
    return std::nullopt;
  }
  return experiments::DataFingerprints(
      [root](const std::string& dataset, int split) -> std::optional<std::string> {
        if (data::optional_dataset_missing(root, dataset)) return std::nullopt;
        try {
          return experiments::run_data_sha256(root, dataset, split);
        } catch (const Error& e) {
          spdlog::debug("{} split {}: no data fingerprint: {}", dataset, split, e.what());
          return std::nullopt;
        }
      });
}

}  // namespace dkp::cli
