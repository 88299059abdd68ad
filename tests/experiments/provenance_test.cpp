// The provenance of a store's cells (lib/experiments/provenance.hpp): which paths are a committed
// store, the refusal of a modified tree's runs there, a cell's tree read from its manifest and
// result (old cells without tree_modified too), verified.json written and read back, and the
// counts of a store (report::ProvenanceCounts, report::provenance_line).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "experiments/grid.hpp"
#include "experiments/provenance.hpp"
#include "experiments/store.hpp"
#include "report/provenance.hpp"
#include "test_support.hpp"
#include "tiny_grid.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
#include "util/sha256.hpp"
#include "util/version.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;
using dkp::TreeState;
using dkp::util::write_file_atomic;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A finished cell as `dkp run` leaves it (manifest with the canonical config, result), with
// `manifest_more` / `result_more` appended to their objects (",\"git_sha\": ...").
fs::path write_cell(const RunSpec& c, const fs::path& root, const std::string& manifest_more,
                    const std::string& result_more = "") {
  const fs::path dir = c.run_dir(root);
  dkp::util::Json m = dkp::util::Json::object();
  m.set("config_hash", c.hash()).set("canonical_config", c.canonical());
  std::string manifest = m.dump(0);
  manifest.insert(manifest.size() - 1, manifest_more);
  write_file_atomic(dir / "manifest.json", manifest + "\n");
  write_file_atomic(dir / "result.json", fmt::format("{{\"config_hash\": \"{}\", \"test_ll\": "
                                                     "-1.5, \"elbo\": -1.25{}}}\n",
                                                     c.hash(), result_more));
  return dir;
}

// A verdict on the stored cell in `dir` as verify_cells gives it.
CellVerdict verdict(const RunSpec& c, const fs::path& dir, CellVerdict::State state,
                    bool identical) {
  CellVerdict v;
  v.cell = c;
  v.state = state;
  v.stored_dir = dir;
  v.stored.git_sha = "0123456789ab-dirty";
  v.rerun = {"Fake CPU, AVX2", "Haswell", "89abcdef0123", "", 1};
  v.comparison.mode = identical ? CompareMode::bit_identical : CompareMode::tolerance;
  v.comparison.compared = 2;
  v.comparison.identical = identical;
  if (state == CellVerdict::State::ok && !identical) {
    v.comparison.largest_key = "test_ll";
    v.comparison.largest_difference = 0.004;
  }
  if (state == CellVerdict::State::mismatch) {
    v.comparison.diffs.push_back({"test_ll", -1.5, -1.9, 0.125});
    v.comparison.diffs.push_back({"elbo", -1.25, std::nullopt, 0.0});
  }
  return v;
}

// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const char* value) : name(n) { ::setenv(n, value, 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("provenance: a committed store is a git work tree's results/runs, or below it") {
  const fs::path tmp = dkp::test::temp_dir("prov-checkout");
  const fs::path top = tmp / "repo";
  fs::create_directories(top / ".git");
  fs::create_directories(top / "results" / "runs" / "grid");
  fs::create_directories(top / "results" / "tables");
  const fs::path canonical_top = fs::canonical(top);
  CHECK(committed_store_checkout(top / "results" / "runs") == canonical_top);
  CHECK(committed_store_checkout(top / "results" / "runs" / "grid") == canonical_top);
  // Not yet there (a first run makes it): still the committed store.
  CHECK(committed_store_checkout(top / "results" / "runs" / "new" / "yacht" / "split0") ==
        canonical_top);
  CHECK(committed_store_checkout(top / "results" / "runs" / ".." / "runs") == canonical_top);
  // Elsewhere in the checkout, or outside any: a scratch store.
  CHECK(!committed_store_checkout(top / "results" / "tables"));
  CHECK(!committed_store_checkout(top / "results"));
  CHECK(!committed_store_checkout(top / "scratch" / "results" / "runs"));
  CHECK(!committed_store_checkout(tmp / "elsewhere" / "results" / "runs"));
  // A linked worktree has a .git file; a symlink into the store is the store.
  const fs::path wt = tmp / "worktree";
  fs::create_directories(wt / "results" / "runs");
  write_file_atomic(wt / ".git", "gitdir: " + (top / ".git").string() + "\n");
  CHECK(committed_store_checkout(wt / "results" / "runs") == fs::canonical(wt));
  fs::create_directory_symlink(top / "results" / "runs", tmp / "link");
  CHECK(committed_store_checkout(tmp / "link") == canonical_top);
  // A nested checkout's own results/runs, not its parent's.
  fs::create_directories(top / "sub" / ".git");
  CHECK(!committed_store_checkout(top / "sub" / "x"));
  fs::create_directories(top / "sub" / "results" / "runs");
  CHECK(committed_store_checkout(top / "sub" / "results" / "runs") == fs::canonical(top / "sub"));
}

TEST_CASE("provenance: a modified tree's runs are refused in a committed store, unless allowed") {
  const fs::path tmp = dkp::test::temp_dir("prov-refusal");
  fs::create_directories(tmp / "repo" / ".git");
  const fs::path store = tmp / "repo" / "results" / "runs";
  fs::create_directories(store);
  const std::string why = modified_tree_refusal(store, TreeState::modified, false, "dkp grid run");
  CHECK(contains(why, "dkp grid run"));
  CHECK(contains(why, "--allow-dirty"));
  CHECK(contains(why, "modified work tree"));
  CHECK(contains(why, store.string()));
  CHECK(contains(why, fs::canonical(tmp / "repo").string()));
  CHECK(contains(modified_tree_refusal(store / "g", TreeState::unknown, false, "dkp run"),
                 "work tree of unknown state"));
  CHECK(modified_tree_refusal(store, TreeState::modified, true, "dkp grid run").empty());
  CHECK(modified_tree_refusal(store, TreeState::clean, false, "dkp grid run").empty());
  CHECK(modified_tree_refusal(tmp / "scratch", TreeState::modified, false, "dkp grid run").empty());
}

TEST_CASE("provenance: the test override makes a clean build modified, never the reverse") {
  const TreeState built = dkp::build_stamp::tree_state() == 0   ? TreeState::clean
                          : dkp::build_stamp::tree_state() == 1 ? TreeState::modified
                                                                : TreeState::unknown;
  {
    ScopedEnv off(dkp::kTestModifiedTreeEnv, "0");
    CHECK(dkp::tree_state() == built);
    CHECK(std::string(dkp::git_sha()) == dkp::build_stamp::git_sha());
  }
  ScopedEnv on(dkp::kTestModifiedTreeEnv, "1");
  const std::string sha = dkp::git_sha();
  if (built == TreeState::unknown) {
    CHECK(dkp::tree_state() == TreeState::unknown);
    return;
  }
  CHECK(dkp::tree_state() == TreeState::modified);
  CHECK(sha.size() > 6);
  CHECK(sha.substr(sha.size() - 6) == "-dirty");
  CHECK(sha.find("-dirty") == sha.size() - 6);  // once
  CHECK(std::string(dkp::tree_diff_sha256()).size() == 64);
  if (built == TreeState::clean) {
    CHECK(std::string(dkp::tree_diff_sha256()) ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  }
}

TEST_CASE("provenance: a cell's tree from its manifest and result, old cells included") {
  const Grid g =
      parse_grid(dkp::test::tiny_grid_text("prov", "boston", "[0, 1, 2, 3, 4, 5, 6]"), "prov.yaml");
  REQUIRE(g.cells.size() >= 7);
  const fs::path root = dkp::test::temp_dir("prov-cells");
  auto tree = [&](size_t i, const std::string& m, const std::string& r = "") {
    return read_cell_provenance(write_cell(g.cells[i], root, m, r)).tree;
  };
  using Tree = CellProvenance::Tree;
  // An old cell: git_sha only.
  CHECK(tree(0, ", \"git_sha\": \"0123456789ab\"") == Tree::clean);
  CHECK(tree(1, ", \"git_sha\": \"0123456789ab-dirty\"") == Tree::modified);
  // A new one: tree_modified (and the result's own record).
  CHECK(tree(2, ", \"git_sha\": \"0123456789ab\", \"tree_modified\": false",
             ", \"git_sha\": \"0123456789ab\", \"tree_modified\": false") == Tree::clean);
  CHECK(tree(3, ", \"git_sha\": \"0123456789ab\", \"tree_modified\": false",
             ", \"git_sha\": \"0123456789ab-dirty\", \"tree_modified\": true") == Tree::modified);
  // Resumed: an earlier process from a modified tree makes the cell modified.
  CHECK(tree(4,
             ", \"git_sha\": \"0123456789ab\", \"tree_modified\": false, \"trained_before_by\": "
             "[{\"git_sha\": \"feedfacecafe-dirty\", \"tree_modified\": true, \"to_step\": 7}]") ==
        Tree::modified);
  CHECK(tree(5, ", \"git_sha\": \"unknown\", \"tree_modified\": null") == Tree::unknown);
  CHECK(tree(6, "") == Tree::unknown);
  // Finished cells only are counted, each once.
  const dkp::report::ProvenanceCounts c = count_store_provenance(root);
  CHECK(c.cells == 7);
  CHECK(c.modified == 3);
  CHECK(c.unknown == 2);
  CHECK(c.clean() == 2);
  CHECK(c.verified == 0);
  write_file_atomic(root / "prov" / "boston" / "split9" / "0000000000000000" / "manifest.json",
                    "{}\n");
  CHECK(count_store_provenance(root).cells == 7);
  CHECK(dkp::report::provenance_line(c) ==
        "3 of 7 committed cells ran from a modified work tree; 0 of them verified at a clean "
        "commit; 2 record no commit");
}

TEST_CASE("provenance: verified.json written, read back, counted while it is the result's") {
  const Grid g = parse_grid(dkp::test::tiny_grid_text("ver", "boston", "[0, 1, 2, 3]"), "v.yaml");
  const fs::path root = dkp::test::temp_dir("prov-verified");
  std::vector<fs::path> dirs;
  for (size_t i = 0; i < 4; ++i) {
    dirs.push_back(write_cell(g.cells[i], root, ", \"git_sha\": \"0123456789ab-dirty\""));
  }
  CHECK(!read_verification(dirs[0]));
  const Tolerance tol;

  // A failed rerun says nothing of the stored result: not recorded.
  CHECK_THROWS_AS(
      verification_json(verdict(g.cells[0], dirs[0], CellVerdict::State::failed, false), tol),
      dkp::Error);

  // The JSON: outcome, values compared, the largest difference or the mismatches, the binary.
  const std::string within =
      verification_json(verdict(g.cells[1], dirs[1], CellVerdict::State::ok, false), tol);
  const auto w = dkp::util::parse_json(within, "within");
  CHECK(w.at("config_hash") == g.cells[1].hash());
  CHECK(w.at("outcome") == "within tolerance");
  CHECK(w.at("compared") == 2);
  CHECK(w.at("largest_difference").at("key") == "test_ll");
  CHECK(w.at("tolerance") == tol.describe());
  CHECK(w.at("stored_git_sha") == "0123456789ab-dirty");
  CHECK(w.at("result_sha256") == dkp::util::sha256_file(dirs[1] / "result.json"));
  CHECK(w.at("verified_by").at("git_sha") == dkp::git_sha());
  CHECK(w.at("verified_by").at("tree") == dkp::to_string(dkp::tree_state()));
  CHECK(w.at("verified_by").at("blas_core") == "Haswell");
  const auto m = dkp::util::parse_json(
      verification_json(verdict(g.cells[2], dirs[2], CellVerdict::State::mismatch, false), tol),
      "mismatch");
  CHECK(m.at("outcome") == "mismatch");
  REQUIRE(m.at("mismatches").size() == 2);
  CHECK(m.at("mismatches")[0].at("key") == "test_ll");
  CHECK(m.at("mismatches")[0].at("difference").get<double>() == doctest::Approx(0.4));
  CHECK(m.at("mismatches")[0].at("allowed") == 0.125);
  CHECK(m.at("mismatches")[1].at("rerun").is_null());

  // Recorded and read back. The verifying binary's tree is this test binary's: written as it is,
  // and a record of a modified tree is not taken.
  CHECK(record_verification(verdict(g.cells[0], dirs[0], CellVerdict::State::ok, true), tol) ==
        dirs[0] / kVerifiedFile);
  record_verification(verdict(g.cells[1], dirs[1], CellVerdict::State::ok, false), tol);
  record_verification(verdict(g.cells[2], dirs[2], CellVerdict::State::mismatch, false), tol);
  const auto v0 = read_verification(dirs[0]);
  REQUIRE(v0);
  CHECK(v0->outcome == VerifyOutcome::bit_identical);
  CHECK(v0->passed());
  CHECK(v0->compared == 2);
  CHECK(v0->git_sha == dkp::git_sha());
  CHECK(v0->tree == dkp::tree_state());
  // The store's reader takes no notice of it: still done.
  CHECK(cell_status(g.cells[0], root).state == CellState::done);
  CHECK(finished_cell_problem(dirs[0]).empty());

  // As a binary of a clean commit would have written them (this test binary's own tree may be
  // either): the counts.
  for (size_t i = 0; i < 3; ++i) {
    std::string text = dkp::util::read_file(dirs[i] / kVerifiedFile);
    const std::string from = fmt::format("\"tree\": \"{}\"", dkp::to_string(dkp::tree_state()));
    text.replace(text.find(from), from.size(), "\"tree\": \"clean\"");
    write_file_atomic(dirs[i] / kVerifiedFile, text);
  }
  dkp::report::ProvenanceCounts c = count_store_provenance(root);
  CHECK(c.cells == 4);
  CHECK(c.modified == 4);
  CHECK(c.verified == 2);
  CHECK(c.modified_verified == 2);
  CHECK(c.mismatched == 1);
  CHECK(dkp::report::provenance_line(c) ==
        "4 of 4 committed cells ran from a modified work tree; 2 of them verified at a clean "
        "commit; 1 did not reproduce at a clean commit (to be recomputed)");
  const CellProvenance p0 = read_cell_provenance(dirs[0]);
  CHECK(p0.verified_clean());
  CHECK(provenance_mark(p0) ==
        fmt::format("[modified tree; verified bit-identical at {}]", dkp::git_sha()));
  CHECK(provenance_mark(read_cell_provenance(dirs[2])) ==
        fmt::format("[modified tree; MISMATCH at {}: recompute it]", dkp::git_sha()));
  CHECK(provenance_mark(read_cell_provenance(dirs[3])) == "[modified tree]");

  // The result recomputed since: the record is of another result.json, not taken.
  write_file_atomic(
      dirs[1] / "result.json",
      fmt::format("{{\"config_hash\": \"{}\", \"test_ll\": -1.4}}\n", g.cells[1].hash()));
  const CellProvenance p1 = read_cell_provenance(dirs[1]);
  CHECK(!p1.verification);
  CHECK(contains(p1.note, "earlier result.json"));
  c = count_store_provenance(root);
  CHECK(c.verified == 1);
  // A record by a binary of a modified tree is not taken (--record refuses to write one).
  std::string text = dkp::util::read_file(dirs[0] / kVerifiedFile);
  text.replace(text.find("\"tree\": \"clean\""), 15, "\"tree\": \"modified\"");
  write_file_atomic(dirs[0] / kVerifiedFile, text);
  CHECK(!read_cell_provenance(dirs[0]).verification);
  CHECK(count_store_provenance(root).verified == 0);
  // A malformed one is named, and the cell still counted.
  write_file_atomic(dirs[3] / kVerifiedFile, "{\"outcome\": \"perhaps\"}\n");
  CHECK_THROWS_AS(read_verification(dirs[3]), dkp::DataError);
  CHECK(contains(read_cell_provenance(dirs[3]).note, "perhaps"));
  CHECK(count_store_provenance(root).cells == 4);

  // clear_run_dir (grid run --force) removes it with the result it verified.
  clear_run_dir(dirs[2]);
  CHECK(!fs::exists(dirs[2] / kVerifiedFile));
}
