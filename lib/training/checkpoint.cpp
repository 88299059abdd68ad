#include "training/checkpoint.hpp"

#include <sstream>

#include <fmt/format.h>

#include "training/exact_io.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::training {

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& ck) {
  std::ostringstream os;
  os << "dkp-checkpoint v1\nstep " << ck.step << "\ncount " << ck.params.size() << "\n";
  for (const auto& [name, value] : ck.params) write_named_matrix(os, "param", name, value);
  os << "adam\n" << ck.adam.serialise() << "end-checkpoint\n";
  util::write_file_atomic(path, os.str());
}

Checkpoint load_checkpoint(const std::filesystem::path& path, const ParameterSet& expected) {
  const std::string where = path.string();
  std::istringstream is(util::read_file(path));
  Checkpoint ck;
  expect_token(is, "dkp-checkpoint", where);
  expect_token(is, "v1", where);
  expect_token(is, "step", where);
  ck.step = read_u64(is, "step", where);
  expect_token(is, "count", where);
  const uint64_t n = read_u64(is, "count", where);
  for (uint64_t i = 0; i < n; ++i) {
    NamedMatrix nm = read_named_matrix(is, "param", where);
    ck.params.emplace(nm.name, std::move(nm.value));
  }
  expect_token(is, "adam", where);
  // The Adam state runs to the "end-checkpoint" line.
  std::string rest((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  const auto end = rest.rfind("end-checkpoint");
  if (end == std::string::npos) throw DataError(fmt::format("{}: truncated checkpoint", where));
  ck.adam = AdamState::deserialise(rest.substr(0, end));
  for (const auto& [name, value] : expected) {
    auto it = ck.params.find(name);
    if (it == ck.params.end()) {
      throw DataError(
          fmt::format("{}: checkpoint has no parameter '{}' (a different model?)", where, name));
    }
    if (it->second.n_rows != value.n_rows || it->second.n_cols != value.n_cols) {
      throw DataError(fmt::format(
          "{}: parameter '{}' is {}x{} in the checkpoint, {}x{} in the "
          "model",
          where, name, it->second.n_rows, it->second.n_cols, value.n_rows, value.n_cols));
    }
  }
  if (ck.params.size() != expected.size()) {
    throw DataError(fmt::format("{}: checkpoint has {} parameters, the model {}", where,
                                ck.params.size(), expected.size()));
  }
  return ck;
}

}  // namespace dkp::training
