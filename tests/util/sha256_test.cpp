#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

using dkp::util::sha256_hex;

TEST_CASE("sha256 matches the FIPS 180-4 test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // One million 'a': exercises many blocks and the incremental interface.
  dkp::util::Sha256 h;
  const std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  CHECK(h.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: chunked updates give the one-shot digest; a finished hash is not reused") {
  // 200000 bytes of every value, fed in chunks of 1, 63, 64, 65, ... bytes and whole.
  std::string data(200000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char((i * 131 + i / 7) & 0xff);
  const std::string whole = sha256_hex(data);
  for (size_t chunk : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(4097)}) {
    dkp::util::Sha256 h;
    for (size_t at = 0; at < data.size(); at += chunk) {
      h.update(data.data() + at, std::min(chunk, data.size() - at));
    }
    h.update(nullptr, 0);
    CHECK(h.hex_digest() == whole);
  }
  // A file longer than the streaming buffer (64 KiB) hashes as its contents.
  const auto path = dkp::test::temp_dir("sha256") / "data.bin";
  dkp::util::write_file_atomic(path, data);
  CHECK(dkp::util::sha256_file(path) == whole);
  CHECK_THROWS_AS(dkp::util::sha256_file(path.parent_path() / "missing"), dkp::DataError);
  dkp::util::Sha256 h;
  h.update("abc");
  CHECK(h.hex_digest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK_THROWS_AS(h.update("d"), dkp::Error);
  CHECK_THROWS_AS(h.hex_digest(), dkp::Error);
}

TEST_CASE("sha256: a run configuration's hash is unchanged") {
  // The first 16 hex digits of the canonical configuration of the committed cell
  // results/runs/agw-tables/yacht/split0/157fc66a079ad520 (its manifest's canonical_config).
  const std::string canonical =
      "dkp-run-v1\ndataset=yacht\nsplit=0\nmodel=dwp\ninference=\nposterior=gw\ndepth=2\n"
      "kernel=se\nsteps=20000\nlr_schedule=0:0.01,10000:0.001\nkl_anneal=1000\ntrain_samples=10\n"
      "test_samples=100\ninducing=100\nbatch=10000\nwidth=input\nseed=0\n";
  CHECK(sha256_hex(canonical).substr(0, 16) == "157fc66a079ad520");
}

TEST_CASE("atomic write replaces the file and leaves no temporary behind") {
  const auto dir = dkp::test::temp_dir("atomic");
  const auto path = dir / "sub" / "out.json";
  dkp::util::write_file_atomic(path, "first");
  dkp::util::write_file_atomic(path, "second");
  CHECK(dkp::util::read_file(path) == "second");
  CHECK(dkp::util::sha256_file(path) == sha256_hex("second"));
  int entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(path.parent_path()))
    ++entries;
  CHECK(entries == 1);
  CHECK_THROWS_AS(dkp::util::read_file(dir / "missing"), dkp::DataError);
}
