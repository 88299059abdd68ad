// Data root resolution (DESIGN.md section 8): --data, then $DKP_DATA, then ./data, then
// ../shared/data.
#pragma once

#include <filesystem>
#include <string>

namespace dkp::data {

/// Returns the data root. `cli_value` is the --data option (empty when not given). An explicit
/// --data or $DKP_DATA that does not exist is an error (dkp::DataError); the fallbacks are tried
/// in order and the error lists every place that was looked at.
std::filesystem::path resolve_data_root(const std::string& cli_value);

}  // namespace dkp::data
