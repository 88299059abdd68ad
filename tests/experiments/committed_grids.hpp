// Every grid of experiments/ with each of its profiles, for tests that check a property of every
// cell the project plans (estimate shapes, the memory guard).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/grid.hpp"

namespace dkp::test {

struct PlannedGrid {
  std::string file;  ///< the grid file's name
  experiments::Grid grid;
};

inline std::vector<PlannedGrid> committed_grids() {
  namespace fs = std::filesystem;
  std::vector<PlannedGrid> out;
  for (const auto& e : fs::directory_iterator(fs::path(DKP_SOURCE_DIR) / "experiments")) {
    if (e.path().extension() != ".yaml") continue;
    const experiments::Grid full = experiments::load_grid(e.path());
    out.push_back({e.path().filename().string(), full});
    for (const auto& p : full.profiles) {
      out.push_back({e.path().filename().string(), experiments::load_grid(e.path(), p)});
    }
  }
  return out;
}

}  // namespace dkp::test
