// The library's run (experiments/run.hpp): a tiny spec end to end on a synthetic UCI dataset, its
// files read back by the store, and a stop request whose checkpoint a second call resumes to the
// numbers of an uninterrupted run.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "experiments/run.hpp"
#include "experiments/run_setup.hpp"
#include "experiments/store.hpp"
#include "platform/blas_threads.hpp"
#include "test_support.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
#include "util/version.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;
namespace util = dkp::util;

namespace {

// A data root with a synthetic "yacht" in the Gal & Ghahramani layout: 48 rows, 3 features, the
// target a smooth function of them plus a little deterministic noise; split 0: 36 train, 12 test.
fs::path synthetic_data_root(const std::string& name) {
  const fs::path root = dkp::test::temp_dir(name);
  const fs::path d = root / "uci" / "yacht" / "data";
  fs::create_directories(d);
  std::string data, train, test;
  for (int i = 0; i < 48; ++i) {
    const double a = std::sin(0.7 * i), b = std::cos(0.3 * i), c = 0.05 * i;
    const double y = std::sin(2.0 * a) + b * b - c + 0.1 * std::sin(12.9898 * i);
    data += fmt::format("{:.6f} {:.6f} {:.6f} {:.6f}\n", a, b, c, y);
    (i % 4 == 3 ? test : train) += fmt::format("{}\n", i);
  }
  std::ofstream(d / "data.txt") << data;
  std::ofstream(d / "index_features.txt") << "0\n1\n2\n";
  std::ofstream(d / "index_target.txt") << "3\n";
  std::ofstream(d / "n_splits.txt") << "1\n";
  std::ofstream(d / "index_train_0.txt") << train;
  std::ofstream(d / "index_test_0.txt") << test;
  return root;
}

// A two-layer DSVI DGP: a stochastic ELBO, minibatches (shuffled each epoch), 20 steps.
RunSpec tiny_spec() {
  RunSpec s;
  s.grid = "run-test";
  s.dataset = "yacht";
  s.split = 0;
  s.model = "dgp";
  s.inference = "dsvi";
  s.depth = 2;
  s.kernel = "se";
  auto& p = s.protocol;
  p.steps = 20;
  p.lr_schedule = {{0, 1e-2}, {10, 1e-3}};
  p.kl_anneal = 5;
  p.train_samples = 2;
  p.test_samples = 5;
  p.inducing = 8;
  p.batch = 16;
  p.width = "input";
  p.seed = 7;
  return s;
}

RunOptions tiny_options(const fs::path& out, const fs::path& data_root) {
  RunOptions o;
  o.out = out;
  o.data_root = data_root.string();
  o.log_every = 0;
  o.checkpoint_every = 0;  // checkpoints on a stop request only
  o.elbo_repeats = 2;
  o.install_signal_handlers = false;
  return o;
}

double number(const util::JsonValue& j, const char* key) {
  REQUIRE(j.contains(key));
  return j.at(key).get<double>();
}

}  // namespace

TEST_CASE("run_cell: a spec end to end, read back by the store, and a stop request resumed") {
  dkp::test::QuietLog quiet;
  const fs::path data_root = synthetic_data_root("run-cell-data");
  const fs::path results = dkp::test::temp_dir("run-cell-results");
  const RunSpec spec = tiny_spec();
  const fs::path whole = spec.run_dir(results);

  // Uninterrupted.
  const RunOutcome a = run_cell(spec, tiny_options(whole, data_root));
  REQUIRE(a.status == RunStatus::done);
  const util::JsonValue ra = util::read_json_object(whole / "result.json");
  CHECK(a.result.dump() == util::Json(ra).dump());
  CHECK(ra.at("config_hash") == spec.hash());
  CHECK(ra.at("resumed_from_step") == 0);
  CHECK(std::isfinite(number(ra, "elbo")));
  CHECK(std::isfinite(number(ra, "test_ll")));
  CHECK(ra.at("elbo_repeats") == 2);
  const util::JsonValue manifest = util::read_json_object(whole / "manifest.json");
  CHECK(manifest.at("config_hash") == spec.hash());
  CHECK(RunSpec::parse_canonical(manifest.at("canonical_config").get<std::string>()).hash() ==
        spec.hash());
  CHECK(manifest.at("data_sha256") == ra.at("data_sha256"));
  CHECK(fs::exists(whole / "checkpoint.bin"));
  CHECK(fs::exists(whole / "trace.csv"));

  // The store reads the cell as done, its values as written.
  const CellStatus st = cell_status(spec, results);
  CHECK(st.state == CellState::done);
  CHECK(st.result == whole / "result.json");
  const auto values = read_result_values(whole / "result.json");
  CHECK(values.at("elbo") == number(ra, "elbo"));
  CHECK(values.at("test_ll") == number(ra, "test_ll"));
  // The trained run loads back with the final parameters.
  const TrainedRun trained = load_trained_run(whole, data_root.string());
  CHECK(trained.checkpoint.step == 20);
  CHECK(trained.spec.hash() == spec.hash());

  // A second call reuses the result: nothing is trained or written.
  const auto written = fs::last_write_time(whole / "result.json");
  CHECK(run_cell(spec, tiny_options(whole, data_root)).status == RunStatus::reused);
  CHECK(fs::last_write_time(whole / "result.json") == written);

  // Stopped at step 7 (as SIGINT would): a checkpoint, a manifest, no result.
  const fs::path parts = dkp::test::temp_dir("run-cell-resumed") / "cell";
  RunOptions stop = tiny_options(parts, data_root);
  size_t last_step = 0;
  stop.progress = [&](const dkp::training::StepInfo& s, const dkp::training::TrainOptions&) {
    last_step = s.step;
    if (s.step == 7) dkp::training::stop_requested().store(true);
  };
  const RunOutcome b = run_cell(spec, stop);
  dkp::training::stop_requested().store(false);
  REQUIRE(b.status == RunStatus::interrupted);
  CHECK(last_step == 7);
  CHECK(!b.message.empty());
  CHECK(!fs::exists(parts / "result.json"));
  CHECK(fs::exists(parts / "manifest.json"));
  CHECK(dkp::training::read_checkpoint_header(parts / "checkpoint.bin").step == 7);
  CHECK(cell_status(spec, parts.parent_path()).state != CellState::done);

  // The same call resumes it to the uninterrupted run's numbers, bit for bit.
  RunOptions resume = tiny_options(parts, data_root);
  size_t first_step = 0;
  resume.progress = [&](const dkp::training::StepInfo& s, const dkp::training::TrainOptions&) {
    if (first_step == 0) first_step = s.step;
  };
  const RunOutcome c = run_cell(spec, resume);
  REQUIRE(c.status == RunStatus::done);
  CHECK(first_step == 8);
  const util::JsonValue rc = util::read_json_object(parts / "result.json");
  CHECK(rc.at("resumed_from_step") == 7);
  for (const char* key :
       {"elbo", "elbo_mean", "elbo_se", "test_ll", "test_rmse", "test_calibration_error"}) {
    INFO(key);
    CHECK(number(rc, key) == number(ra, key));
  }
  CHECK(util::read_file(parts / "trace.csv") == util::read_file(whole / "trace.csv"));
  CHECK(util::Json(rc.at("scalar_parameters")).dump() ==
        util::Json(ra.at("scalar_parameters")).dump());
}

TEST_CASE("run_cell: a directory of another configuration is refused, and left as it was") {
  dkp::test::QuietLog quiet;
  const fs::path data_root = synthetic_data_root("run-cell-other-data");
  const fs::path out = dkp::test::temp_dir("run-cell-other") / "cell";
  RunSpec spec = tiny_spec();
  spec.protocol.steps = 3;
  spec.protocol.lr_schedule = {{0, 1e-2}};
  spec.protocol.kl_anneal = 0;
  REQUIRE(run_cell(spec, tiny_options(out, data_root)).status == RunStatus::done);
  const std::string before = util::read_file(out / "result.json");
  RunSpec other = spec;
  other.protocol.seed = 8;
  CHECK_THROWS_AS(run_cell(other, tiny_options(out, data_root)), dkp::ConfigError);
  CHECK(util::read_file(out / "result.json") == before);
  // A directory that did not exist and whose run fails early is not left behind.
  const fs::path fresh = dkp::test::temp_dir("run-cell-fresh") / "cell";
  RunSpec missing = spec;
  missing.dataset = "boston";  // not in the synthetic data root
  CHECK_THROWS_AS(run_cell(missing, tiny_options(fresh, data_root)), dkp::DataError);
  CHECK(!fs::exists(fresh));
}

TEST_CASE("run: the toy's splits are trials, and its runs record each layer's variance at 0") {
  // The toy needs no data files: the data root is empty.
  const fs::path root = dkp::test::temp_dir("run-toy-data"), out = dkp::test::temp_dir("run-toy");
  RunSpec s = tiny_spec();
  s.grid = "toy";
  s.dataset = "toy";
  s.model = "cdgp";
  s.inference.clear();
  s.posterior = "jointly-gaussian";
  s.kernel = "periodic";
  s.protocol.batch = 50;
  s.protocol.inducing = 5;
  s.protocol.lr_schedule = {{0, 1e-3}};
  validate_run_spec(s);
  // The trial's streams: split k of the toy is (seed, posterior, k); a UCI split is its seed's.
  RunSpec u = tiny_spec();
  u.split = 0;
  auto draw = [](const dkp::random::Stream& root) {
    dkp::random::Stream x = root.child("x", 0);
    return dkp::random::uniform(x);
  };
  CHECK(draw(run_stream(u)) == draw(dkp::random::Stream(7)));
  RunSpec s1 = s;
  s1.split = 1;
  CHECK(draw(run_stream(s)) == draw(dkp::random::Stream(7).child("jointly-gaussian", 0)));
  CHECK(draw(run_stream(s1)) != draw(run_stream(s)));
  // Two trials train on the same data to different results; each writes the variances.
  std::vector<double> elbo;
  for (const RunSpec& spec : {s, s1}) {
    const fs::path dir = out / std::to_string(spec.split);
    RunOptions o = tiny_options(dir, root);
    const RunOutcome r = run_cell(spec, o);
    REQUIRE(r.status == RunStatus::done);
    const util::JsonValue j = util::read_json_object(dir / "result.json");
    CHECK(j.at("n_train").get<double>() == 50);
    CHECK(j.at("var_f1_at_0").get<double>() > 0.0);
    CHECK(j.at("var_f2_at_0").get<double>() > 0.0);
    CHECK(j.at("data_sha256").get<std::string>() == run_data_sha256(root, "toy", spec.split));
    elbo.push_back(j.at("elbo").get<double>());
  }
  CHECK(elbo[0] != elbo[1]);
}

TEST_CASE("run_cell: --blas-threads runs training with that many BLAS threads, then one again") {
  dkp::test::QuietLog quiet;
  const fs::path data_root = synthetic_data_root("run-blas-threads-data");
  const RunSpec spec = tiny_spec();
  const fs::path one = dkp::test::temp_dir("run-blas-threads-1") / "cell";
  const fs::path two = dkp::test::temp_dir("run-blas-threads-2") / "cell";
  REQUIRE(run_cell(spec, tiny_options(one, data_root)).status == RunStatus::done);

  RunOptions o = tiny_options(two, data_root);
  o.blas_threads = 2;
  int during = 0;
  o.progress = [&](const dkp::training::StepInfo&, const dkp::training::TrainOptions&) {
    during = dkp::platform::blas_threads();
  };
  REQUIRE(run_cell(spec, o).status == RunStatus::done);
  CHECK(during == 2);
  CHECK(dkp::platform::blas_threads() == 1);
  const util::JsonValue r1 = util::read_json_object(one / "result.json");
  const util::JsonValue r2 = util::read_json_object(two / "result.json");
  CHECK(r2.at("blas_threads") == 2);
  CHECK(r1.at("blas_threads") == 1);
  CHECK(util::read_json_object(two / "manifest.json").at("blas_threads") == 2);
  // The same cell: the numbers agree to round-off (OpenBLAS may split a call differently).
  for (const char* key : {"elbo", "test_ll", "test_rmse"}) {
    INFO(key);
    CHECK(number(r2, key) == doctest::Approx(number(r1, key)).epsilon(1e-9));
  }

  RunOptions bad = tiny_options(dkp::test::temp_dir("run-blas-threads-0") / "cell", data_root);
  bad.blas_threads = 0;
  CHECK_THROWS_AS(run_cell(spec, bad), dkp::ConfigError);
}

TEST_CASE(
    "run_cell: the binary's tree in manifest and result, and the earlier binaries of a resume") {
  dkp::test::QuietLog quiet;
  const fs::path data_root = synthetic_data_root("run-tree-data");
  const RunSpec spec = tiny_spec();
  const fs::path out = dkp::test::temp_dir("run-tree") / "cell";
  const dkp::TreeState tree = dkp::tree_state();
  auto check_tree = [&](const util::JsonValue& j) {
    CHECK(j.at("git_sha") == dkp::git_sha());
    if (tree == dkp::TreeState::unknown) {
      CHECK(j.at("tree_modified").is_null());
    } else {
      CHECK(j.at("tree_modified") == (tree == dkp::TreeState::modified));
    }
    CHECK(j.contains("tree_diff_sha256") == (tree == dkp::TreeState::modified));
    if (tree == dkp::TreeState::modified)
      CHECK(j.at("tree_diff_sha256") == dkp::tree_diff_sha256());
  };

  // Stopped at step 7; the manifest then says another binary, of a modified tree, began it.
  RunOptions stop = tiny_options(out, data_root);
  stop.progress = [&](const dkp::training::StepInfo& s, const dkp::training::TrainOptions&) {
    if (s.step == 7) dkp::training::stop_requested().store(true);
  };
  REQUIRE(run_cell(spec, stop).status == RunStatus::interrupted);
  dkp::training::stop_requested().store(false);
  util::JsonValue m = util::read_json_object(out / "manifest.json");
  check_tree(m);
  CHECK(!m.contains("trained_before_by"));
  m["git_sha"] = "feedfacecafe-dirty";
  m["tree_modified"] = true;
  m["tree_diff_sha256"] = std::string(64, 'a');
  util::write_file_atomic(out / "manifest.json", util::Json(m).dump());
  // A verification of an earlier result goes when the cell is computed again.
  util::write_file_atomic(out / "verified.json", "{}\n");

  REQUIRE(run_cell(spec, tiny_options(out, data_root)).status == RunStatus::done);
  CHECK(!fs::exists(out / "verified.json"));
  const util::JsonValue m2 = util::read_json_object(out / "manifest.json");
  check_tree(m2);
  check_tree(util::read_json_object(out / "result.json"));
  REQUIRE(m2.contains("trained_before_by"));
  const auto& before = m2.at("trained_before_by");
  REQUIRE(before.size() == 1);
  CHECK(before[0].at("git_sha") == "feedfacecafe-dirty");
  CHECK(before[0].at("tree_modified") == true);
  CHECK(before[0].at("tree_diff_sha256") == std::string(64, 'a'));
  CHECK(before[0].at("to_step") == 7);
}
