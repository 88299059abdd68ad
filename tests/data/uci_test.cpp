// Loader tests: the real shared data (when present), malformed files written by the test, and
// standardisation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>

#include "data/checksums.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/standardise.hpp"
#include "data/uci.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using dkp::data::load_uci;

namespace {

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

// A tiny valid dataset in the Gal & Ghahramani layout: 6 rows, 2 features, target column 2.
fs::path make_tiny(const std::string& name) {
  const fs::path root = dkp::test::temp_dir(name);
  const fs::path d = root / "uci" / "yacht" / "data";
  write(d / "data.txt", "1 2 3\n\t4  5\t6 \n\n7 8 9\n10 11 12\n13 14 15\n16 17 18\n\n");
  write(d / "index_features.txt", "0\n1\n");
  write(d / "index_target.txt", "2\n");
  write(d / "n_splits.txt", "1\n");
  write(d / "index_train_0.txt", "0\n1\n2\n3\n");
  write(d / "index_test_0.txt", "4\n5\n");
  return root;
}

// Returns the error message of load_uci(+split 0) on a modified tiny dataset.
std::string error_of(const std::string& name, const std::string& file, const std::string& content) {
  const fs::path root = make_tiny(name);
  write(root / "uci" / "yacht" / "data" / file, content);
  try {
    auto ds = load_uci(root, "yacht");
    ds.split(0);
  } catch (const dkp::DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every UCI dataset of the shared mirror loads with the documented sizes") {
  const fs::path root = dkp::test::shared_data_root();
  if (root.empty()) {
    MESSAGE("shared data not found beside the source tree; skipped");
    return;
  }
  struct Expect {
    size_t rows, features, splits, train, test;
  };
  const std::map<std::string, Expect> expect = {
      {"boston", {506, 13, 20, 455, 51}},      {"concrete", {1030, 8, 20, 927, 103}},
      {"energy", {768, 8, 20, 691, 77}},       {"kin8nm", {8192, 8, 20, 7373, 819}},
      {"naval", {11934, 16, 20, 10741, 1193}}, {"power", {9568, 4, 20, 8611, 957}},
      {"protein", {45730, 9, 5, 41157, 4573}}, {"wine", {1599, 11, 20, 1439, 160}},
      {"yacht", {308, 6, 20, 277, 31}},
  };
  for (const auto& info : dkp::data::uci_catalogue()) {
    CAPTURE(info.name);
    const auto ds = load_uci(root, info.name);
    const auto& e = expect.at(info.name);
    CHECK(ds.X.n_rows == e.rows);
    CHECK(ds.X.n_cols == e.features);
    CHECK(ds.y.n_elem == e.rows);
    CHECK(ds.n_splits == e.splits);
    for (size_t k = 0; k < ds.n_splits; ++k) {
      const auto s = ds.split(k);
      CHECK(s.train.n_elem == e.train);
      CHECK(s.test.n_elem == e.test);
    }
  }
  // Spot values: first row of boston (CRIM = 0.00632, MEDV = 24.0); naval's target is column 16
  // (compressor decay, in [0.95, 1]) and not the unused turbine column 17.
  const auto boston = load_uci(root, "boston");
  CHECK(boston.X(0, 0) == doctest::Approx(0.00632));
  CHECK(boston.y[0] == doctest::Approx(24.0));
  const auto naval = load_uci(root, "naval");
  CHECK(naval.y.min() >= 0.95);
  CHECK(naval.y.max() <= 1.0);
  CHECK_THROWS_AS(boston.split(20), dkp::ConfigError);
}

TEST_CASE("MNIST loads 60000/10000 images scaled to [0,1] with digit labels") {
  const fs::path root = dkp::test::shared_data_root();
  if (root.empty()) return;
  const auto m = dkp::data::load_mnist(root);
  CHECK(m.train.X.n_rows == 60000);
  CHECK(m.test.X.n_rows == 10000);
  CHECK(m.train.X.n_cols == 784);
  CHECK(m.train.X.min() == 0.0);
  CHECK(m.train.X.max() == 1.0);
  CHECK(m.train.labels.max() == 9);
  CHECK(m.train.labels[0] == 5);  // the first MNIST training image is a 5
  CHECK(m.test.labels[0] == 7);   // the first test image is a 7
}

TEST_CASE("MNIST as a run's split: pixels as they are, labels as y, 10 classes") {
  dkp::data::Mnist m;
  m.train.X = {{0.0, 0.5, 1.0}, {0.25, 0.0, 0.0}};
  m.train.labels = {3, 9};
  m.test.X = {{1.0, 1.0, 0.0}};
  m.test.labels = {0};
  const auto s = dkp::data::image_split(m);
  CHECK(s.dataset == "mnist");
  CHECK(arma::approx_equal(s.X_train, m.train.X, "absdiff", 0.0));
  CHECK(arma::approx_equal(s.X_test, m.test.X, "absdiff", 0.0));
  CHECK(arma::approx_equal(s.y_train, arma::vec{3.0, 9.0}, "absdiff", 0.0));
  CHECK(s.y_test[0] == 0.0);
  CHECK(s.y_std == 1.0);
  CHECK(arma::approx_equal(s.x_stats.transform(m.test.X), m.test.X, "absdiff", 0.0));
  // Standardised: every pixel minus the mean of all training pixels, over their sd (N - 1).
  const arma::vec all = arma::vectorise(m.train.X);
  const double mu = arma::mean(all), sd = arma::stddev(all);
  const auto z = dkp::data::image_split(m, true);
  CHECK(arma::approx_equal(z.X_train, (m.train.X - mu) / sd, "absdiff", 1e-15));
  CHECK(arma::approx_equal(z.X_test, (m.test.X - mu) / sd, "absdiff", 1e-15));
  CHECK(std::abs(arma::mean(arma::vectorise(z.X_train))) < 1e-15);
  CHECK(arma::approx_equal(z.x_stats.transform(m.test.X), z.X_test, "absdiff", 0.0));
  CHECK(arma::approx_equal(z.y_train, s.y_train, "absdiff", 0.0));
  // Scaled (--pixel-scale): the standardised pixels times 3, and x_stats maps raw points alike.
  const auto z3 = dkp::data::image_split(m, true, 3.0);
  CHECK(arma::approx_equal(z3.X_train, 3.0 * z.X_train, "absdiff", 0.0));
  CHECK(arma::approx_equal(z3.X_test, 3.0 * z.X_test, "absdiff", 0.0));
  CHECK(arma::approx_equal(z3.x_stats.transform(m.test.X), z3.X_test, "absdiff", 1e-14));
  CHECK_THROWS_AS(dkp::data::image_split(m, false, 0.0), dkp::ConfigError);
  CHECK(dkp::data::dataset_classes("mnist") == 10);
  CHECK(dkp::data::dataset_classes("boston") == 0);
  CHECK(dkp::data::dataset_classes("rectangles") == 2);
}

namespace {

// A line of an .amat file: 784 pixels (pixel i = frac * (i % 7) / 6) and the label.
std::string amat_line(double frac, const std::string& label) {
  std::string line;
  for (int i = 0; i < 784; ++i) line += std::to_string(frac * double(i % 7) / 6.0) + " ";
  return line + label + "\n";
}

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

}  // namespace

TEST_CASE("Rectangle-Images: .amat files load, and bad ones are refused with file and line") {
  const fs::path root = dkp::test::temp_dir("rectangles");
  write_file(root / "rectangles/rectangles_im_train.amat",
             amat_line(1.0, "1") + "\n" + amat_line(0.5, "0") + amat_line(0.0, "1"));
  write_file(root / "rectangles/rectangles_im_test.amat", amat_line(0.25, "0"));
  const auto r = dkp::data::load_rectangles(root);
  CHECK(r.train.X.n_rows == 3);  // the blank line is skipped
  CHECK(r.train.X.n_cols == 784);
  CHECK(r.test.X.n_rows == 1);
  CHECK(arma::approx_equal(r.train.labels, arma::uvec{1, 0, 1}, "absdiff", 0));
  CHECK(r.train.X(0, 6) == doctest::Approx(1.0));
  CHECK(r.train.X(1, 3) == doctest::Approx(0.25));
  CHECK(r.train.X.row(2).max() == 0.0);
  // Through the run's loader: the same split layout as MNIST's, named rectangles.
  CHECK(dkp::data::load_images(root, "rectangles").test.labels[0] == 0);
  CHECK(dkp::data::images_sha256(root, "rectangles").size() == 64);
  CHECK_THROWS_AS(dkp::data::load_images(root, "boston"), dkp::ConfigError);
  // Refusals: a label that is not 0 / 1, a pixel outside [0, 1], a short line, a missing file.
  const fs::path bad = root / "bad.amat";
  write_file(bad, amat_line(1.0, "2"));
  CHECK_THROWS_WITH_AS(dkp::data::read_amat_images(bad, 2), doctest::Contains("label 2"),
                       dkp::DataError);
  write_file(bad, amat_line(1.5, "1"));
  CHECK_THROWS_WITH_AS(dkp::data::read_amat_images(bad, 2), doctest::Contains("outside [0, 1]"),
                       dkp::DataError);
  write_file(bad, "0.5 0.5 1\n");
  CHECK_THROWS_AS(dkp::data::read_amat_images(bad, 2), dkp::DataError);
  write_file(bad, amat_line(1.0, "0.5"));
  CHECK_THROWS_AS(dkp::data::read_amat_images(bad, 2), dkp::DataError);
  CHECK_THROWS_WITH_AS(dkp::data::load_rectangles(root / "nowhere"),
                       doctest::Contains("fetch_rectangles"), dkp::DataError);
}

TEST_CASE("the tiny dataset loads despite tabs, runs of spaces, trailing space and blank lines") {
  const auto ds = load_uci(make_tiny("tiny-ok"), "yacht");
  CHECK(ds.X.n_rows == 6);
  CHECK(ds.X.n_cols == 2);
  CHECK(ds.X(1, 1) == 5.0);
  CHECK(ds.y[2] == 9.0);
  const auto s = ds.split(0);
  CHECK(s.train.n_elem == 4);
  CHECK(s.test[1] == 5);
}

TEST_CASE("malformed files give an error naming the file and line") {
  std::string e =
      error_of("bad-num", "data.txt", "1 2 3\n4 x 6\n7 8 9\n10 11 12\n13 14 15\n16 17 18\n");
  CHECK(e.find("data.txt:2") != std::string::npos);
  CHECK(e.find("'x'") != std::string::npos);

  e = error_of("bad-cols", "data.txt", "1 2 3\n\n4 5\n7 8 9\n");
  CHECK(e.find("data.txt:3") != std::string::npos);
  CHECK(e.find("2 fields, expected 3") != std::string::npos);

  e = error_of("nan", "data.txt", "1 2 3\n4 nan 6\n7 8 9\n10 11 12\n13 14 15\n16 17 18\n");
  CHECK(e.find("data.txt:2") != std::string::npos);
  CHECK(e.find("finite") != std::string::npos);

  e = error_of("range", "index_test_0.txt", "4\n6\n");
  CHECK(e.find("index_test_0.txt") != std::string::npos);
  CHECK(e.find("out of range") != std::string::npos);

  e = error_of("dup", "index_train_0.txt", "0\n1\n1\n3\n");
  CHECK(e.find("duplicate index 1") != std::string::npos);

  e = error_of("overlap", "index_test_0.txt", "3\n5\n");
  CHECK(e.find("both") != std::string::npos);

  e = error_of("neg", "index_train_0.txt", "0\n-1\n");
  CHECK(e.find("index_train_0.txt:2") != std::string::npos);

  e = error_of("target", "index_target.txt", "7\n");
  CHECK(e.find("column 7 out of range") != std::string::npos);

  const fs::path root = make_tiny("missing");
  fs::remove(root / "uci" / "yacht" / "data" / "data.txt");
  CHECK_THROWS_WITH_AS(load_uci(root, "yacht"), doctest::Contains("missing data file"),
                       dkp::DataError);
  CHECK_THROWS_AS(load_uci(root, "boston"), dkp::DataError);  // folder absent
  CHECK_THROWS_AS(load_uci(root, "nosuchset"), dkp::ConfigError);
}

TEST_CASE("points to predict at: CSV with or without a header, or whitespace-separated") {
  const fs::path d = dkp::test::temp_dir("points");
  write(d / "a.csv", "x1, x2 ,x3\n1,2.5,-3\n\n4e1 ,5,6\r\n");
  const arma::mat a = dkp::data::read_points(d / "a.csv");
  REQUIRE(a.n_rows == 2);
  REQUIRE(a.n_cols == 3);
  CHECK(a(0, 1) == 2.5);
  CHECK(a(0, 2) == -3.0);
  CHECK(a(1, 0) == 40.0);
  write(d / "b.csv", "1,2,3\n4,5,6\n");  // no header: the first line is data
  CHECK(dkp::data::read_points(d / "b.csv").n_rows == 2);
  write(d / "c.txt", "1 2\t3\n4 5 6\n");
  CHECK(arma::approx_equal(dkp::data::read_points(d / "c.txt"), arma::mat{{1, 2, 3}, {4, 5, 6}},
                           "absdiff", 0.0));

  auto error = [&](const std::string& text) {
    write(d / "bad.csv", text);
    try {
      dkp::data::read_points(d / "bad.csv");
    } catch (const dkp::DataError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = error("1,2,3\n4,,6\n");
  CHECK(e.find("bad.csv:2") != std::string::npos);
  CHECK(e.find("field 2 is empty") != std::string::npos);
  e = error("a,b\n1,2\n3\n");
  CHECK(e.find("bad.csv:3") != std::string::npos);
  CHECK(e.find("1 fields, expected 2") != std::string::npos);
  e = error("1,2\n3,x\n");
  CHECK(e.find("'x'") != std::string::npos);
  e = error("1,inf\n");
  CHECK(e.find("finite") != std::string::npos);
  CHECK(error("a,b\n").find("no data rows") != std::string::npos);
  CHECK(error("1,2,\n").find("field 3 is empty") != std::string::npos);
  CHECK_THROWS_WITH_AS(dkp::data::read_points(d / "nope.csv"),
                       doctest::Contains("missing data file"), dkp::DataError);
}

TEST_CASE("standardisation: training mean 0 and std 1 (N-1), zero std -> 1, round trip") {
  arma::mat X = {{1.0, 5.0, 2.0}, {2.0, 5.0, 4.0}, {4.0, 5.0, 9.0}, {7.0, 5.0, 1.0}};
  const auto s = dkp::data::Standardiser::fit(X);
  const arma::mat Z = s.transform(X);
  CHECK(arma::abs(arma::mean(Z, 0)).max() < 1e-14);
  CHECK(arma::stddev(Z.col(0)) == doctest::Approx(1.0));  // N-1 denominator
  CHECK(s.std[0] == doctest::Approx(std::sqrt(7.0)));     // var of {1,2,4,7} with N-1 is 7
  CHECK(s.std[1] == 1.0);                                 // constant column
  CHECK(arma::approx_equal(s.inverse(Z), X, "absdiff", 1e-12));
  CHECK_THROWS_AS(dkp::data::Standardiser::fit(X.row(0)), dkp::DataError);

  const fs::path root = dkp::test::shared_data_root();
  if (root.empty()) return;
  const auto split = dkp::data::make_regression_split(load_uci(root, "naval"), 0);
  CHECK(arma::abs(arma::mean(split.X_train, 0)).max() < 1e-10);
  CHECK(std::abs(arma::mean(split.y_train)) < 1e-10);
  CHECK(arma::stddev(split.y_train) == doctest::Approx(1.0));
  CHECK(split.x_stats.std[8] == 1.0);  // naval column 8 is constant
  const auto ds = load_uci(root, "naval");
  const auto idx = ds.split(0);
  const arma::vec y_test = ds.y.elem(idx.test);
  CHECK(arma::approx_equal(split.y_to_original(split.y_test), y_test, "absdiff", 1e-12));
}

TEST_CASE("standardisation test_sd: training mean over the test rows' population sd + 1e-6") {
  // Rows 0-3 train, 4-5 test; column 1 is constant on the test rows.
  const arma::mat X = {{1.0, 0.0}, {2.0, 1.0}, {4.0, 0.0}, {7.0, 1.0}, {3.0, 0.0}, {6.0, 0.0}};
  const arma::vec y = {1.0, 2.0, 3.0, 4.0, 10.0, 14.0};
  dkp::data::SplitIndices idx;
  idx.train = {0, 1, 2, 3};
  idx.test = {4, 5};
  const auto s = dkp::data::standardised_split(X, y, idx, true, dkp::data::Scaling::test_sd);
  // Column 0: training mean 3.5; the test rows {3, 6} have population sd 1.5.
  CHECK(s.x_stats.mean[0] == doctest::Approx(3.5));
  CHECK(s.x_stats.std[0] == doctest::Approx(1.5 + 1e-6).epsilon(1e-15));
  CHECK(s.X_train(3, 0) == doctest::Approx((7.0 - 3.5) / (1.5 + 1e-6)));
  CHECK(s.X_test(1, 0) == doctest::Approx((6.0 - 3.5) / (1.5 + 1e-6)));
  // Column 1: constant on the test rows, so divided by 1e-6 (the training rows reach 5e5).
  CHECK(s.x_stats.std[1] == 1e-6);
  CHECK(s.X_train(1, 1) == doctest::Approx(0.5 / 1e-6));
  // Targets: training mean 2.5, the test targets {10, 14} sd 2; back to original units exactly.
  CHECK(s.y_mean == doctest::Approx(2.5));
  CHECK(s.y_std == doctest::Approx(2.0 + 1e-6).epsilon(1e-15));
  CHECK(arma::approx_equal(s.y_to_original(s.y_test), arma::vec{10.0, 14.0}, "absdiff", 1e-12));
  // The default is the training rows' statistics, unchanged.
  const auto t = dkp::data::standardised_split(X, y, idx, true);
  CHECK(t.x_stats.std[0] == doctest::Approx(std::sqrt(7.0)));
  CHECK(t.y_std == doctest::Approx(std::sqrt(5.0 / 3.0)));
}

TEST_CASE("checksum list parses and verification detects a modified file") {
  const auto entries = dkp::data::parse_checksums(dkp::data::embedded_sha256sums());
  CHECK(entries.size() == 376);  // the shared mirror's 370 files and CIFAR-10's six
  CHECK(std::count_if(entries.begin(), entries.end(), [](const auto& e) {
          return e.path.rfind("cifar10/cifar-10-batches-bin/", 0) == 0;
        }) == 6);
  const fs::path root = make_tiny("sums");
  const std::string sums =
      "0000000000000000000000000000000000000000000000000000000000000000  uci/yacht/data/data.txt\n"
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  uci/yacht/data/none.txt\n";
  const auto r = dkp::data::verify_checksums(root, dkp::data::parse_checksums(sums));
  CHECK(r.mismatched.size() == 1);
  CHECK(r.missing.size() == 1);
  CHECK_FALSE(r.passed());
  CHECK_THROWS_AS(dkp::data::parse_checksums("abc  file\n"), dkp::DataError);
  const fs::path shared = dkp::test::shared_data_root();
  if (!shared.empty()) CHECK(dkp::data::verify_checksums(shared, entries, "uci/yacht").passed());
}

TEST_CASE("data root resolution: --data, then $DKP_DATA") {
  const fs::path d = dkp::test::temp_dir("root");
  CHECK(dkp::data::resolve_data_root(d.string()) == d);
  CHECK_THROWS_AS(dkp::data::resolve_data_root((d / "nope").string()), dkp::DataError);
  ::setenv("DKP_DATA", d.c_str(), 1);
  CHECK(dkp::data::resolve_data_root("") == d);
  ::setenv("DKP_DATA", (d / "nope").c_str(), 1);
  CHECK_THROWS_AS(dkp::data::resolve_data_root(""), dkp::DataError);
  ::unsetenv("DKP_DATA");
}

TEST_CASE("an unknown dataset name is a ConfigError listing every dataset dkp knows") {
  CHECK(dkp::data::uci_info("bostonHousing").name == "boston");  // a folder name is accepted too
  for (const char* known : {"boston", "concrete", "energy", "kin8nm", "naval", "power", "protein",
                            "wine", "yacht", "mnist", "cifar10", "rectangles", "toy"}) {
    CHECK_THROWS_WITH_AS(dkp::data::uci_info("bostn"), doctest::Contains(known), dkp::ConfigError);
  }
  CHECK_THROWS_WITH_AS(dkp::data::uci_info("bostn"), doctest::Contains("unknown dataset 'bostn'"),
                       dkp::ConfigError);
  CHECK_THROWS_WITH_AS(dkp::data::load_images("/nonexistent", "yacht"),
                       doctest::Contains("'yacht' is not an image dataset (mnist, cifar10, "
                                         "rectangles)"),
                       dkp::ConfigError);
}
