#include "data/root.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::data {

namespace fs = std::filesystem;

fs::path resolve_data_root(const std::string& cli_value) {
  if (!cli_value.empty()) {
    if (!fs::is_directory(cli_value)) {
      throw DataError(fmt::format("--data '{}' is not a directory", cli_value));
    }
    return fs::path(cli_value);
  }
  if (const char* env = std::getenv("DKP_DATA"); env && *env) {
    if (!fs::is_directory(env)) {
      throw DataError(fmt::format("$DKP_DATA '{}' is not a directory", env));
    }
    return fs::path(env);
  }
  for (const char* candidate : {"data", "../shared/data"}) {
    if (fs::is_directory(candidate)) return fs::path(candidate);
  }
  throw DataError(
      "no data root found: looked at --data, $DKP_DATA, ./data and ../shared/data; "
      "fetch the data with data-scripts/fetch_uci.sh and data-scripts/fetch_mnist.sh");
}

}  // namespace dkp::data
