// The build's provenance (version.hpp): the stamp of generated/version.cpp, and the test override.
#include "util/version.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

namespace dkp {

namespace {

bool pretend_modified() {
  const char* v = std::getenv(kTestModifiedTreeEnv);
  return v != nullptr && std::strcmp(v, "1") == 0 && build_stamp::tree_state() == 0;
}

// The SHA-256 of no bytes: the patch of a tree that was not modified.
constexpr const char* kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

}  // namespace

const char* git_sha() {
  static const std::string dirty = std::string(build_stamp::git_sha()) + "-dirty";
  return pretend_modified() ? dirty.c_str() : build_stamp::git_sha();
}

TreeState tree_state() {
  if (pretend_modified()) return TreeState::modified;
  switch (build_stamp::tree_state()) {
    case 0:
      return TreeState::clean;
    case 1:
      return TreeState::modified;
    default:
      return TreeState::unknown;
  }
}

const char* to_string(TreeState s) {
  switch (s) {
    case TreeState::clean:
      return "clean";
    case TreeState::modified:
      return "modified";
    case TreeState::unknown:
      return "unknown";
  }
  return "unknown";
}

const char* tree_diff_sha256() {
  return pretend_modified() ? kEmptySha256 : build_stamp::tree_diff_sha256();
}

}  // namespace dkp
