#include "experiments/provenance.hpp"

#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "experiments/store.hpp"
#include "platform/process.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
#include "util/sha256.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

std::optional<fs::path> committed_store_checkout(const fs::path& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return std::nullopt;
  for (fs::path dir = p;; dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec)) {
      const fs::path rel = p.lexically_relative(dir);
      auto it = rel.begin();
      if (it != rel.end() && *it == "results" && ++it != rel.end() && *it == "runs") return dir;
      return std::nullopt;
    }
    if (!dir.has_parent_path() || dir.parent_path() == dir) return std::nullopt;
  }
}

std::string modified_tree_refusal(const fs::path& path, TreeState tree, bool allow_dirty,
                                  const std::string& command) {
  if (tree == TreeState::clean || allow_dirty) return "";
  const auto top = committed_store_checkout(path);
  if (!top) return "";
  return fmt::format(
      "{}: {} is in the committed result store of {} ({}/results/runs), and this dkp was built "
      "from a {} (git_sha {}): a cell it computes could not be rebuilt from a commit. Build dkp "
      "from a clean commit (commit or stash the changes; `dkp --version` shows the tree's state), "
      "or compute into a scratch store outside the repository's results/runs (dkp grid merge "
      "brings it in later), or give --allow-dirty to store the cells anyway (their manifest.json "
      "records tree_modified and the changes' tree_diff_sha256)",
      command, path.string(), top->string(), top->string(),
      tree == TreeState::modified ? "modified work tree" : "work tree of unknown state", git_sha());
}

const char* to_string(VerifyOutcome o) {
  switch (o) {
    case VerifyOutcome::bit_identical:
      return "bit-identical";
    case VerifyOutcome::within_tolerance:
      return "within tolerance";
    case VerifyOutcome::mismatch:
      return "mismatch";
  }
  return "mismatch";
}

namespace {

// A value of a comparison: a number, or null for a side without the key (or not finite).
util::Json number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? util::Json(*v) : util::Json(nullptr);
}

VerifyOutcome outcome_of(const CellVerdict& v) {
  if (v.state == CellVerdict::State::mismatch) return VerifyOutcome::mismatch;
  return v.comparison.identical ? VerifyOutcome::bit_identical : VerifyOutcome::within_tolerance;
}

}  // namespace

std::string verification_json(const CellVerdict& v, const Tolerance& tol) {
  if (v.state == CellVerdict::State::failed) {
    throw Error(
        fmt::format("cell {}: the rerun failed ({}): nothing to record", v.cell.hash(), v.failure));
  }
  const Comparison& c = v.comparison;
  util::Json j = util::Json::object();
  j.set("config_hash", v.cell.hash())
      .set("cell", v.cell.label())
      .set("result_sha256", util::sha256_file(v.stored_dir / "result.json"))
      .set("stored_git_sha", v.stored.git_sha)
      .set("outcome", to_string(outcome_of(v)))
      .set("mode", c.mode == CompareMode::bit_identical ? "bit-identical expected" : "tolerance");
  if (c.mode == CompareMode::tolerance) j.set("tolerance", tol.describe());
  j.set("compared", (unsigned long)c.compared);
  if (v.state == CellVerdict::State::ok && !c.identical && !c.largest_key.empty()) {
    util::Json d = util::Json::object();
    d.set("key", c.largest_key).set("difference", c.largest_difference);
    j.set("largest_difference", std::move(d));
  }
  if (v.state == CellVerdict::State::mismatch) {
    util::Json diffs = util::Json::array();
    for (const ValueDiff& d : c.diffs) {
      util::Json e = util::Json::object();
      e.set("key", d.key).set("stored", number(d.stored)).set("rerun", number(d.rerun));
      if (d.stored && d.rerun) e.set("difference", number(std::fabs(*d.rerun - *d.stored)));
      if (c.mode == CompareMode::tolerance) e.set("allowed", d.allowed);
      diffs.push(std::move(e));
    }
    j.set("mismatches", std::move(diffs));
  }
  util::Json by = util::Json::object();
  by.set("dkp_version", version_string())
      .set("git_sha", git_sha())
      .set("tree", to_string(tree_state()))
      .set("cpu", v.rerun.cpu)
      .set("blas_core", v.rerun.blas_core)
      .set("blas_threads", v.rerun.blas_threads)
      .set("host", platform::hostname());
  j.set("verified_by", std::move(by)).set("verified", platform::now_iso8601());
  return j.dump();
}

fs::path record_verification(const CellVerdict& v, const Tolerance& tol) {
  if (v.stored_dir.empty())
    throw Error(fmt::format("cell {}: no stored run directory", v.cell.hash()));
  const fs::path file = v.stored_dir / kVerifiedFile;
  util::write_file_atomic(file, verification_json(v, tol));
  return file;
}

std::optional<Verification> read_verification(const fs::path& run_dir) {
  const fs::path file = run_dir / kVerifiedFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  const util::JsonValue n = util::read_json_object(file);
  const std::string src = file.string();
  Verification v;
  const std::string outcome = util::json_string(n, "outcome", src);
  if (outcome == "bit-identical") {
    v.outcome = VerifyOutcome::bit_identical;
  } else if (outcome == "within tolerance") {
    v.outcome = VerifyOutcome::within_tolerance;
  } else if (outcome == "mismatch") {
    v.outcome = VerifyOutcome::mismatch;
  } else {
    throw DataError(
        fmt::format("{}: outcome '{}' is none of bit-identical, within tolerance, "
                    "mismatch",
                    src, outcome));
  }
  v.config_hash = util::json_string(n, "config_hash", src);
  v.result_sha256 = util::json_string(n, "result_sha256", src);
  v.compared = size_t(std::max<int64_t>(0, util::json_integer(n, "compared", src, 0)));
  v.verified = util::json_string(n, "verified", src);
  if (const auto it = n.find("verified_by"); it != n.end() && it->is_object()) {
    v.git_sha = util::json_string(*it, "git_sha", src);
    const std::string tree = util::json_string(*it, "tree", src);
    v.tree = tree == "clean"      ? TreeState::clean
             : tree == "modified" ? TreeState::modified
                                  : TreeState::unknown;
  }
  return v;
}

namespace {

bool dirty_sha(const std::string& sha) {
  static const std::string suffix = "-dirty";
  return sha.size() >= suffix.size() &&
         sha.compare(sha.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// What one JSON object (a manifest, a result, an entry of trained_before_by) says of its binary.
struct BinaryRecord {
  std::string git_sha;
  bool modified = false;
};

BinaryRecord binary_record(const util::JsonValue& n) {
  BinaryRecord b;
  if (const auto it = n.find("git_sha"); it != n.end() && it->is_string()) {
    b.git_sha = it->get<std::string>();
  }
  const auto tm = n.find("tree_modified");
  b.modified = dirty_sha(b.git_sha) || (tm != n.end() && tm->is_boolean() && tm->get<bool>());
  return b;
}

util::JsonValue read_lenient(const fs::path& file) {
  try {
    std::error_code ec;
    if (fs::exists(file, ec)) return util::read_json_object(file);
  } catch (const Error&) {
  }
  return util::JsonValue::object();
}

}  // namespace

CellProvenance read_cell_provenance(const fs::path& dir) {
  CellProvenance p;
  const util::JsonValue manifest = read_lenient(dir / "manifest.json");
  const util::JsonValue result = read_lenient(dir / "result.json");
  const BinaryRecord m = binary_record(manifest), r = binary_record(result);
  bool modified = m.modified || r.modified;
  if (const auto it = manifest.find("trained_before_by"); it != manifest.end() && it->is_array()) {
    for (const auto& e : *it) {
      if (e.is_object() && binary_record(e).modified) modified = true;
    }
  }
  p.git_sha = !m.git_sha.empty() ? m.git_sha : r.git_sha;
  if (modified) {
    p.tree = CellProvenance::Tree::modified;
  } else if (p.git_sha.empty() || p.git_sha == "unknown") {
    p.tree = CellProvenance::Tree::unknown;
  } else {
    p.tree = CellProvenance::Tree::clean;
  }
  try {
    const auto v = read_verification(dir);
    if (v) {
      const std::string hash = dir.filename().string();
      std::string now;
      try {
        now = util::sha256_file(dir / "result.json");
      } catch (const Error&) {
      }
      if (v->config_hash != hash) {
        p.note = fmt::format("{} verifies cell {}, not {}", kVerifiedFile, v->config_hash, hash);
      } else if (v->result_sha256 != now) {
        p.note =
            fmt::format("{} verified an earlier result.json (recomputed since)", kVerifiedFile);
      } else if (v->tree != TreeState::clean) {
        p.note = fmt::format("{} was written by a binary built from a {} tree ({})", kVerifiedFile,
                             to_string(v->tree), v->git_sha);
      } else {
        p.verification = v;
      }
    }
  } catch (const Error& e) {
    p.note = e.what();
  }
  return p;
}

void count_cell(const CellProvenance& p, report::ProvenanceCounts& c) {
  const bool modified = p.tree == CellProvenance::Tree::modified;
  ++c.cells;
  c.modified += modified;
  c.unknown += p.tree == CellProvenance::Tree::unknown;
  c.verified += p.verified_clean();
  c.modified_verified += modified && p.verified_clean();
  c.mismatched += p.mismatched();
}

report::ProvenanceCounts count_provenance(const std::vector<fs::path>& run_dirs) {
  report::ProvenanceCounts c;
  std::set<std::string> seen;
  for (const fs::path& dir : run_dirs) {
    if (!finished_cell_problem(dir).empty()) continue;
    if (!seen.insert(dir.filename().string()).second) continue;
    count_cell(read_cell_provenance(dir), c);
  }
  return c;
}

report::ProvenanceCounts count_store_provenance(const fs::path& results_root) {
  return count_provenance(store_run_dirs(results_root));
}

std::string provenance_mark(const CellProvenance& p) {
  std::string s;
  if (p.tree == CellProvenance::Tree::modified) s = "modified tree";
  if (p.tree == CellProvenance::Tree::unknown) s = "no commit recorded";
  if (p.verification) {
    const Verification& v = *p.verification;
    const std::string sha = v.git_sha.empty() ? "an unknown commit" : v.git_sha;
    s += (s.empty() ? "" : "; ") +
         (v.passed() ? fmt::format("verified {} at {}", to_string(v.outcome), sha)
                     : fmt::format("MISMATCH at {}: recompute it", sha));
  }
  return s.empty() ? s : "[" + s + "]";
}

}  // namespace dkp::experiments
