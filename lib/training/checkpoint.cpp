#include "training/checkpoint.hpp"

#include <cctype>
#include <sstream>

#include <fmt/format.h>

#include "training/exact_io.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace dkp::training {

namespace {

constexpr const char* kMagic = "dkp-checkpoint";
constexpr std::string_view kSumTag = "sha256 ";

// An identity field as written: "-" for an unknown one.
std::string field(const std::string& v) {
  return v.empty() ? "-" : v;
}

std::string read_field(std::istream& is, std::string_view key, const std::string& where) {
  expect_token(is, key, where);
  std::string v;
  if (!(is >> v)) throw DataError(fmt::format("{}: truncated checkpoint (no {})", where, key));
  return v == "-" ? std::string() : v;
}

// A checkpoint file split into its contents (what the v2 checksum covers) and the checksum.
struct Parts {
  int version = 0;
  std::string body;            // v1: the whole file; v2: everything above the sha256 line
  std::string stored, actual;  // v2 only
};

Parts split_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::string text = util::read_file(path);
  Parts p;
  const std::string v1 = fmt::format("{} v1\n", kMagic), v2 = fmt::format("{} v2\n", kMagic);
  if (text.rfind(v1, 0) == 0) {
    p.version = 1;
    p.body = std::move(text);
    return p;
  }
  if (text.rfind(v2, 0) != 0) {
    throw DataError(
        fmt::format("{}: not a dkp checkpoint (the first line is not '{} v1' or '{} v2')", where,
                    kMagic, kMagic));
  }
  p.version = 2;
  const auto line = text.rfind(fmt::format("\n{}", kSumTag));
  if (line == std::string::npos) {
    p.body = std::move(text);  // truncated or edited: no checksum line
  } else {
    p.body = text.substr(0, line + 1);
    std::string sum = text.substr(line + 1 + kSumTag.size());
    while (!sum.empty() && (sum.back() == '\n' || sum.back() == ' ')) sum.pop_back();
    p.stored = std::move(sum);
  }
  p.actual = util::sha256_hex(p.body);
  return p;
}

// Reads the lines up to and including "step N" of a checkpoint's body.
CheckpointHeader parse_header(std::istream& is, int version, const std::string& where) {
  CheckpointHeader h;
  h.version = version;
  expect_token(is, kMagic, where);
  expect_token(is, version == 1 ? "v1" : "v2", where);
  if (version >= 2) {
    h.identity.config_hash = read_field(is, "config_hash", where);
    h.identity.data_sha256 = read_field(is, "data_sha256", where);
  }
  expect_token(is, "step", where);
  h.step = read_u64(is, "step", where);
  return h;
}

}  // namespace

void save_checkpoint(const std::filesystem::path& path, const Checkpoint& ck) {
  for (const std::string& v : {ck.identity.config_hash, ck.identity.data_sha256}) {
    for (unsigned char c : v) {
      if (std::isspace(c) || !std::isprint(c)) {
        throw ConfigError(fmt::format("checkpoint identity '{}' contains whitespace", v));
      }
    }
  }
  std::ostringstream os;
  os << kMagic << " v2\nconfig_hash " << field(ck.identity.config_hash) << "\ndata_sha256 "
     << field(ck.identity.data_sha256) << "\nstep " << ck.step << "\ncount " << ck.params.size()
     << "\n";
  for (const auto& [name, value] : ck.params) write_named_matrix(os, "param", name, value);
  os << "adam\n" << ck.adam.serialise() << "end-checkpoint\n";
  std::string text = os.str();
  text += fmt::format("{}{}\n", kSumTag, util::sha256_hex(text));
  util::write_file_atomic(path, text);
}

CheckpointHeader read_checkpoint_header(const std::filesystem::path& path) {
  const Parts parts = split_file(path);
  std::istringstream is(parts.body);
  CheckpointHeader h = parse_header(is, parts.version, path.string());
  if (parts.version >= 2) {
    h.checksum_stored = parts.stored;
    h.checksum_actual = parts.actual;
    h.checksum_ok = parts.stored == parts.actual;
  }
  return h;
}

Checkpoint load_checkpoint(const std::filesystem::path& path, const ParameterSet& expected) {
  const std::string where = path.string();
  const Parts parts = split_file(path);
  if (parts.version >= 2 && parts.stored != parts.actual) {
    throw DataError(fmt::format(
        "{}: checksum mismatch: the file was changed or damaged after it was written ({})", where,
        parts.stored.empty() ? "it has no sha256 line: truncated?"
                             : fmt::format("its sha256 line says {}, its contents hash to {}",
                                           parts.stored, parts.actual)));
  }
  std::istringstream is(parts.body);
  const CheckpointHeader h = parse_header(is, parts.version, where);
  Checkpoint ck;
  ck.step = h.step;
  ck.identity = h.identity;
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
