// Checkpoints carry their identity (training/checkpoint.hpp, format v2): the configuration hash and
// data fingerprint of the run that wrote them and a checksum of their contents. A changed or
// truncated file is recognised, a legacy (v1) checkpoint still loads, and train() refuses to
// resume a checkpoint of another configuration, of other data or beyond its steps. A step whose
// ELBO cannot be evaluated after the parameters diverged is told as a diverged step.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "models/gi_dgp.hpp"
#include "small_model.hpp"
#include "test_support.hpp"
#include "training/checkpoint.hpp"
#include "training/exact_io.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace tr = dkp::training;

namespace {

tr::Checkpoint small_checkpoint() {
  tr::Checkpoint ck;
  ck.step = 7;
  ck.params = {{"a.mu", arma::mat{{1.0, -2.5}, {0.25, 3.0}}},
               {"b.log_s", arma::mat(1, 1, arma::fill::value(-1.5))}};
  ck.adam.t = 7;
  ck.adam.m = {{"a.mu", arma::mat(2, 2, arma::fill::value(0.125))},
               {"b.log_s", arma::mat(1, 1, arma::fill::value(0.5))}};
  ck.adam.v = ck.adam.m;
  ck.identity = {"0123456789abcdef", std::string(64, 'e')};
  return ck;
}

// Replaces the first occurrence of `from` in the file by `to`.
void edit_file(const std::filesystem::path& path, const std::string& from, const std::string& to) {
  std::string text = dkp::util::read_file(path);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  dkp::util::write_file_atomic(path, text);
}

struct Fixture : dkp::test::SmallGiDgp {
  Fixture() : SmallGiDgp(31, 32) {}
};

tr::TrainOptions options(size_t steps, const std::filesystem::path& checkpoint) {
  tr::TrainOptions o;
  o.steps = steps;
  o.lr = tr::LrSchedule::steps(0.01, {});
  o.kl = tr::KlAnnealing(0);
  o.samples = 1;
  o.log_every = 0;
  o.checkpoint_every = 5;
  o.checkpoint_path = checkpoint;
  o.identity = {"aaaaaaaaaaaaaaaa", std::string(64, 'd')};
  return o;
}

}  // namespace

TEST_CASE("checkpoint v2: identity, step and checksum round-trip") {
  const auto dir = dkp::test::temp_dir("ckid");
  const tr::Checkpoint ck = small_checkpoint();
  tr::save_checkpoint(dir / "c.bin", ck);
  const std::string text = dkp::util::read_file(dir / "c.bin");
  CHECK(text.rfind("dkp-checkpoint v2\nconfig_hash 0123456789abcdef\ndata_sha256 eee", 0) == 0);
  CHECK(text.find("\nstep 7\n") != std::string::npos);
  const tr::CheckpointHeader h = tr::read_checkpoint_header(dir / "c.bin");
  CHECK(h.version == 2);
  CHECK_FALSE(h.legacy());
  CHECK(h.step == 7);
  CHECK(h.identity.config_hash == ck.identity.config_hash);
  CHECK(h.identity.data_sha256 == ck.identity.data_sha256);
  CHECK(h.checksum_ok);
  CHECK(h.checksum_stored.size() == 64);
  const tr::Checkpoint back = tr::load_checkpoint(dir / "c.bin", ck.params);
  CHECK(back.step == 7);
  CHECK(back.identity.config_hash == ck.identity.config_hash);
  CHECK(back.adam == ck.adam);
  for (const auto& [name, v] : ck.params)
    CHECK(arma::approx_equal(back.params.at(name), v, "absdiff", 0.0));
  // Without an identity: "-" on disk, empty when read back.
  tr::Checkpoint anon = small_checkpoint();
  anon.identity = {};
  tr::save_checkpoint(dir / "anon.bin", anon);
  const auto ha = tr::read_checkpoint_header(dir / "anon.bin");
  CHECK(ha.identity.empty());
  CHECK(ha.checksum_ok);
}

TEST_CASE("checkpoint v2: one changed digit or a truncated file fails the checksum") {
  const auto dir = dkp::test::temp_dir("ckedit");
  const tr::Checkpoint ck = small_checkpoint();
  const std::string good = dir / "c.bin";
  tr::save_checkpoint(good, ck);
  // One hexadecimal digit of a parameter value (a.mu(0, 1) = -2.5 = -0x1.4p+1).
  const std::string text = dkp::util::read_file(good);
  const std::string value = tr::format_exact(-2.5);
  REQUIRE(text.find(" " + value + " ") != std::string::npos);
  std::string other = value;
  other[other.find('4')] = '5';
  edit_file(good, " " + value + " ", " " + other + " ");
  const auto h = tr::read_checkpoint_header(good);
  CHECK_FALSE(h.checksum_ok);
  CHECK(h.checksum_stored != h.checksum_actual);
  CHECK_THROWS_WITH_AS(tr::load_checkpoint(good, ck.params),
                       doctest::Contains("c.bin: checksum mismatch"), dkp::DataError);
  // The identity is covered too.
  tr::save_checkpoint(good, ck);
  edit_file(good, "config_hash 0123", "config_hash 9123");
  CHECK_FALSE(tr::read_checkpoint_header(good).checksum_ok);
  // Truncated: the sha256 line is gone (a cut inside it is a mismatch too).
  tr::save_checkpoint(good, ck);
  std::string whole = dkp::util::read_file(good);
  dkp::util::write_file_atomic(good, whole.substr(0, whole.size() / 2));
  const auto t = tr::read_checkpoint_header(good);
  CHECK_FALSE(t.checksum_ok);
  CHECK(t.checksum_stored.empty());
  CHECK_THROWS_WITH_AS(tr::load_checkpoint(good, ck.params), doctest::Contains("truncated?"),
                       dkp::DataError);
  // Not a checkpoint at all.
  dkp::util::write_file_atomic(dir / "x.bin", "hello\n");
  CHECK_THROWS_WITH_AS(tr::read_checkpoint_header(dir / "x.bin"),
                       doctest::Contains("not a dkp checkpoint"), dkp::DataError);
}

TEST_CASE("a legacy (v1) checkpoint still loads, without identity or checksum") {
  const auto dir = dkp::test::temp_dir("ckv1");
  const tr::Checkpoint ck = small_checkpoint();
  // The v1 format as the earlier binaries wrote it.
  std::ostringstream os;
  os << "dkp-checkpoint v1\nstep " << ck.step << "\ncount " << ck.params.size() << "\n";
  for (const auto& [name, value] : ck.params) tr::write_named_matrix(os, "param", name, value);
  os << "adam\n" << ck.adam.serialise() << "end-checkpoint\n";
  dkp::util::write_file_atomic(dir / "v1.bin", os.str());
  const auto h = tr::read_checkpoint_header(dir / "v1.bin");
  CHECK(h.version == 1);
  CHECK(h.legacy());
  CHECK(h.identity.empty());
  CHECK(h.checksum_ok);
  CHECK(h.step == 7);
  const auto back = tr::load_checkpoint(dir / "v1.bin", ck.params);
  CHECK(back.identity.empty());
  CHECK(back.adam == ck.adam);
  CHECK(arma::approx_equal(back.params.at("a.mu"), ck.params.at("a.mu"), "absdiff", 0.0));
}

TEST_CASE("train writes its identity into checkpoints and resumes only its own") {
  Fixture f;
  const dkp::random::Stream run(7);
  const auto dir = dkp::test::temp_dir("ckresume");
  auto opt = options(10, dir / "checkpoint.bin");
  tr::train(*f.model, f.X, f.y, opt, run);
  const auto h = tr::read_checkpoint_header(opt.checkpoint_path);
  CHECK(h.step == 10);
  CHECK(h.identity.config_hash == opt.identity.config_hash);
  CHECK(h.identity.data_sha256 == opt.identity.data_sha256);
  // The same identity resumes (nothing left to do at step 10).
  CHECK(tr::train(*f.model, f.X, f.y, opt, run).resumed_from == 10);
  // Another configuration, other data, or fewer steps than the checkpoint's: refused.
  auto other = opt;
  other.identity.config_hash = "bbbbbbbbbbbbbbbb";
  CHECK_THROWS_WITH_AS(tr::train(*f.model, f.X, f.y, other, run),
                       doctest::Contains("a checkpoint of configuration aaaaaaaaaaaaaaaa, not of "
                                         "this run's bbbbbbbbbbbbbbbb"),
                       dkp::DataError);
  other = opt;
  other.identity.data_sha256 = std::string(64, 'f');
  CHECK_THROWS_WITH_AS(tr::train(*f.model, f.X, f.y, other, run),
                       doctest::Contains("trained on other data"), dkp::DataError);
  other = opt;
  other.steps = 8;
  CHECK_THROWS_WITH_AS(tr::train(*f.model, f.X, f.y, other, run),
                       doctest::Contains("at step 10, beyond this run's 8 steps"), dkp::DataError);
  // A caller that knows no identity (empty fields) resumes any, and a legacy checkpoint (no
  // identity) is resumed by any caller: establishing its identity is the caller's business.
  other = opt;
  other.identity = {};
  CHECK(tr::train(*f.model, f.X, f.y, other, run).resumed_from == 10);
}

TEST_CASE("a diverged step names the step and the learning rate, not only the kernel's error") {
  // A learning rate of 1e6 throws the parameters out of the region where the model is defined
  // after the first step: the kernel's variance underflows to 0 (or a factorisation fails).
  Fixture f;
  dkp::test::QuietLog quiet;
  const auto dir = dkp::test::temp_dir("ckdiverge");
  auto opt = options(20, dir / "checkpoint.bin");
  opt.lr = tr::LrSchedule::steps(1e6, {});
  try {
    tr::train(*f.model, f.X, f.y, opt, dkp::random::Stream(3));
    FAIL("training at lr 1e6 did not fail");
  } catch (const dkp::Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("the ELBO could not be evaluated at step 1") != std::string::npos);
    CHECK(what.find("learning rate") != std::string::npos);
  }
}
