// Build identification: the library version and the git SHA stamped at build time.
#pragma once

namespace dkp {
const char* version_string();
const char* git_sha();
}  // namespace dkp
