#include <doctest/doctest.h>

#include <fstream>

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
