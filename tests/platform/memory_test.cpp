// What a process may take (platform/memory.hpp): /proc/meminfo's MemAvailable, --max-memory's
// sizes and how sizes are printed.
#include <doctest/doctest.h>

#include "platform/memory.hpp"

namespace pl = dkp::platform;

TEST_CASE("memory: MemAvailable of /proc/meminfo, sizes and their text") {
  CHECK(pl::parse_mem_available("MemTotal:       24000000 kB\nMemFree:  100 kB\n"
                                "MemAvailable:   20000000 kB\nBuffers: 1 kB\n") ==
        uint64_t(20000000) * 1024);
  CHECK_FALSE(pl::parse_mem_available("MemTotal: 1 kB\n"));
  CHECK_FALSE(pl::parse_mem_available("MemAvailable: lots\n"));
  // This machine's, when Linux gives it: positive.
  if (const auto a = pl::available_memory_bytes()) CHECK(*a > 0);

  CHECK(pl::parse_byte_size("512") == 512u);
  CHECK(pl::parse_byte_size("512M") == uint64_t(512) << 20);
  CHECK(pl::parse_byte_size("1.5G") == uint64_t(3) << 29);
  CHECK(pl::parse_byte_size("8GiB") == uint64_t(8) << 30);
  CHECK(pl::parse_byte_size("2tb") == uint64_t(2) << 40);
  CHECK(pl::parse_byte_size("64k") == uint64_t(64) << 10);
  for (const char* bad : {"", "G", "-1G", "0", "12Q", "1e3", "1..2G", "nan", "5 G"}) {
    INFO(bad);
    CHECK_FALSE(pl::parse_byte_size(bad));
  }
  CHECK(pl::format_bytes(512) == "512 B");
  CHECK(pl::format_bytes(1536) == "1.5 KiB");
  CHECK(pl::format_bytes(double(uint64_t(106) << 30)) == "106 GiB");
}
