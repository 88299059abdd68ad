// Subcommands whose issues have not landed yet. Each says which issue brings it and exits 3.
#include "cli.hpp"

namespace dkp::cli {

int cmd_run(const std::vector<std::string>& args) {
  return not_implemented(args, "dkp run --dataset NAME --split K --model MODEL [options]",
                         "'run' is not implemented yet: models and training land with issue 5 "
                         "(GP layers, DGP baselines, dkp run)");
}

int cmd_bench(const std::vector<std::string>& args) {
  return not_implemented(args, "dkp bench ad|dist|model [options]",
                         "'bench' is not implemented yet: benchmarks land with issues 3-6");
}

}  // namespace dkp::cli
