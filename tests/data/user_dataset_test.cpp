// User datasets (data/user_dataset.hpp) and the dataset table (data/datasets.hpp): declarations
// and CSVs written by the test, good and bad.
#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "data/datasets.hpp"
#include "data/user_dataset.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
namespace dd = dkp::data;

namespace {

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

// A root with datasets/<name>.yaml and <name>.csv.
fs::path declare(const std::string& tag, const std::string& name, const std::string& yaml,
                 const std::string& csv) {
  const fs::path root = dkp::test::temp_dir(tag);
  write(root / "datasets" / (name + ".yaml"), yaml);
  write(root / "datasets" / (name + ".csv"), csv);
  return root;
}

std::string rows(int n, bool commas = true) {
  std::string s = commas ? "a,b,y\n" : "a b   y\n";
  for (int i = 0; i < n; ++i) {
    s += commas ? fmt::format("{},{},{}\n", i, i * i % 7, 0.5 * i)
                : fmt::format("{}\t{} {}\n", i, i * i % 7, 0.5 * i);
  }
  return s;
}

const std::string kRegression =
    "file: d.csv\ntask: regression\ntarget: y\nsplits: {kind: random, count: 3, test_fraction: "
    "0.2, seed: 1}\n";

// The error of loading `name` from `root` (declaration, then data), "" when it loads.
std::string error_of(const fs::path& root, const std::string& name = "d") {
  try {
    const auto spec = dd::read_user_dataset_spec(root / "datasets" / (name + ".yaml"));
    dd::load_user_dataset(spec);
  } catch (const dkp::Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("user dataset: a regression CSV loads, with disjoint, covering, seeded splits") {
  for (bool commas : {true, false}) {
    CAPTURE(commas);
    const fs::path root = declare("user-reg", "d", kRegression, rows(20, commas));
    const auto spec = dd::read_user_dataset_spec(root / "datasets/d.yaml");
    const auto ds = dd::load_user_dataset(spec);
    CHECK(ds.X.n_rows == 20);
    CHECK(ds.X.n_cols == 2);
    CHECK(ds.feature_names == std::vector<std::string>{"a", "b"});
    CHECK(ds.y(3) == 1.5);
    CHECK(ds.X(4, 1) == 16 % 7);
    std::set<std::vector<arma::uword>> tests;
    for (int k = 0; k < 3; ++k) {
      const auto s = ds.split(k);
      CHECK(s.test.n_elem == 4);
      CHECK(s.train.n_elem == 16);
      CHECK(arma::intersect(s.train, s.test).is_empty());
      tests.insert(std::vector<arma::uword>(s.test.begin(), s.test.end()));
      CHECK(arma::all(ds.split(k).test == s.test));  // the same from the same seed
    }
    CHECK(tests.size() == 3);  // each random split its own
    const auto split = dd::user_split(ds, 1);
    CHECK(split.classes == 0);
    CHECK(std::abs(arma::mean(split.y_train)) < 1e-12);  // standardised with training statistics
    CHECK_THROWS_AS(ds.split(3), dkp::ConfigError);
    // The table finds it under the root, with its shape and fingerprint.
    const auto info = dd::dataset_info("d", root);
    CHECK(info.kind == dd::DatasetKind::User);
    CHECK(info.splits == 3);
    CHECK(info.n_train == 16);
    CHECK(info.features == 2);
    CHECK(info.fingerprint == dd::user_dataset_fingerprint(spec));
    CHECK(info.fingerprint.size() == 16);
  }
}

TEST_CASE("user dataset: k-fold covers every row once; the fingerprint follows bytes and rule") {
  const std::string yaml =
      "file: d.csv\ntarget: y\nfeatures: [b]\nsplits: {kind: kfold, count: 4, seed: 0}\n";
  const fs::path root = declare("user-kfold", "d", yaml, rows(10));
  const auto spec = dd::read_user_dataset_spec(root / "datasets/d.yaml");
  const auto ds = dd::load_user_dataset(spec);
  CHECK(ds.X.n_cols == 1);
  arma::uvec count(10, arma::fill::zeros);
  for (int k = 0; k < 4; ++k) count.elem(ds.split(k).test) += 1;
  CHECK(arma::all(count == 1));
  const std::string before = dd::user_dataset_fingerprint(spec);
  write(root / "datasets/d.csv", rows(10) + "10,3,5.0\n");
  CHECK(dd::user_dataset_fingerprint(spec) != before);
  write(root / "datasets/d.csv", rows(10));
  CHECK(dd::user_dataset_fingerprint(spec) == before);
  auto other = spec;
  other.splits.seed = 1;
  CHECK(dd::user_dataset_fingerprint(other) != before);
}

TEST_CASE("user dataset: class labels map to 0..C-1 in sorted order, numerically when numbers") {
  const std::string yaml =
      "file: d.csv\ntask: classification\ntarget: y\nsplits: {kind: kfold, count: 2, seed: 0}\n";
  const fs::path root = declare("user-cls", "d", yaml, "a,y\n1,10\n2,9\n3,10\n4,9\n5,100\n6,100\n");
  const auto ds = dd::load_user_dataset(dd::read_user_dataset_spec(root / "datasets/d.yaml"));
  CHECK(ds.labels == std::vector<std::string>{"9", "10", "100"});  // not "10" < "100" < "9"
  CHECK(ds.y(0) == 1.0);
  CHECK(ds.y(1) == 0.0);
  CHECK(ds.y(4) == 2.0);
  CHECK(dd::user_split(ds, 0).classes == 3);
  CHECK(dd::dataset_info("d", root).classes == 3);
}

TEST_CASE("user dataset: bad input is an error naming file, line and column") {
  // A missing column.
  std::string e = error_of(declare(
      "user-bad1", "d", "file: d.csv\ntarget: z\nsplits: {kind: kfold, count: 2}\n", rows(6)));
  CHECK(has(e, "d.csv:1: no column 'z'"));
  CHECK(has(e, "columns: a, b, y"));
  // A non-numeric field.
  e = error_of(declare("user-bad2", "d", kRegression, rows(6) + "6,x7,3\n"));
  CHECK(has(e, "d.csv:8: column 'b': 'x7' is not a finite number"));
  // NaN.
  e = error_of(declare("user-bad3", "d", kRegression, rows(6) + "6,1,nan\n"));
  CHECK(has(e, "d.csv:8: column 'y': 'nan' is not a finite number"));
  // A ragged row.
  e = error_of(declare("user-bad4", "d", kRegression, rows(6) + "1,2\n"));
  CHECK(has(e, "d.csv:8: 2 fields, the header has 3"));
  // One class.
  e = error_of(declare("user-bad5", "d",
                       "file: d.csv\ntask: classification\ntarget: y\nsplits: {kind: kfold, "
                       "count: 2}\n",
                       "a,y\n1,cat\n2,cat\n3,cat\n4,cat\n"));
  CHECK(has(e, "column 'y' has one class ('cat')"));
  // An empty split: more folds than rows.
  e = error_of(declare("user-bad6", "d",
                       "file: d.csv\ntarget: y\nsplits: {kind: kfold, count: 9}\n", rows(5)));
  CHECK(has(e, "split 0 has 5 training and 0 test rows"));
  // The declaration: unknown key, bad task, missing file, bad fraction; each with its line.
  e = error_of(declare("user-bad7", "d", kRegression + "colour: red\n", rows(6)));
  CHECK(has(e, "d.yaml:5: unknown key 'colour'"));
  e = error_of(declare("user-bad8", "d",
                       "file: d.csv\ntask: ranking\ntarget: y\nsplits: {kind: kfold, count: 2}\n",
                       rows(6)));
  CHECK(has(e, "d.yaml:2: task must be regression or classification (got 'ranking')"));
  e = error_of(declare("user-bad9", "d",
                       "file: nope.csv\ntarget: y\nsplits: {kind: kfold, count: 2}\n", rows(6)));
  CHECK(has(e, "d.yaml:1: no such file"));
  e = error_of(declare("user-bad10", "d",
                       "file: d.csv\ntarget: y\nsplits: {kind: random, count: 2, "
                       "test_fraction: 1.5}\n",
                       rows(6)));
  CHECK(has(e, "d.yaml:3: test_fraction must be in (0, 1)"));
  // An unknown name lists the built-in datasets and where one's own is declared.
  const fs::path empty = dkp::test::temp_dir("user-none");
  try {
    dd::dataset_info("mine", empty);
    FAIL("no error");
  } catch (const dkp::ConfigError& ex) {
    CHECK(has(ex.what(), "unknown dataset 'mine'"));
    CHECK(has(ex.what(), "yacht"));
    CHECK(has(ex.what(), (empty / "datasets" / "mine.yaml").string()));
  }
}

TEST_CASE("user dataset: index files in the Gal & Ghahramani layout") {
  const std::string yaml =
      "file: d.csv\ntarget: y\nsplits: {kind: index, count: 2, train: \"tr_{k}.txt\", test: "
      "\"te_{k}.txt\"}\n";
  const fs::path root = declare("user-index", "d", yaml, rows(6));
  write(root / "datasets/tr_0.txt", "0\n1\n2\n3\n");
  write(root / "datasets/te_0.txt", "4\n5\n");
  write(root / "datasets/tr_1.txt", "2\n3\n4\n5\n");
  write(root / "datasets/te_1.txt", "0\n9\n");  // 9: no such row
  const auto spec = dd::read_user_dataset_spec(root / "datasets/d.yaml");
  const std::string e = error_of(root);
  CHECK(has(e, "te_1.txt: row 9 is out of range"));
  write(root / "datasets/te_1.txt", "0\n1\n");
  const auto ds = dd::load_user_dataset(spec);
  CHECK(arma::all(ds.split(0).test == arma::uvec{4, 5}));
  const std::string a = dd::user_split_sha256(spec, 1);
  write(root / "datasets/te_1.txt", "1\n0\n");
  CHECK(dd::user_split_sha256(spec, 1) != a);  // the index files join the data fingerprint
}

TEST_CASE("the dataset table: every built-in dataset once, its shape and splits") {
  std::set<std::string> names;
  for (const auto& d : dd::builtin_datasets()) {
    CAPTURE(d.name);
    CHECK(names.insert(d.name).second);
    CHECK(d.n_train > 0);
    CHECK(d.features > 0);
    CHECK(d.splits >= 1);
    CHECK(!d.summary.empty());
    CHECK(dd::datasets_help().find("  " + d.name + " ") != std::string::npos);
  }
  CHECK(dd::dataset_info("protein", fs::path("/nonexistent")).splits == 5);
  CHECK(dd::dataset_info("bostonHousing", fs::path("/nonexistent")).name == "boston");
  CHECK(dd::dataset_info("cifar10", fs::path("/nonexistent")).classes == 10);
  // The example datasets dkp writes load, one of each task.
  const fs::path root = dkp::test::temp_dir("user-examples");
  for (const auto& n : dd::write_example_datasets(root)) {
    CAPTURE(n);
    const auto info = dd::dataset_info(n, root);
    CHECK(info.kind == dd::DatasetKind::User);
    CHECK(info.splits == 5);
  }
  CHECK(dd::dataset_info("rings", root).classes == 3);
  CHECK(dd::dataset_info("friedman", root).classes == 0);
}
