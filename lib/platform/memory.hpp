// How much memory this process may take: the machine's available memory (/proc/meminfo's
// MemAvailable), within the control group's limit (cgroup v2 memory.max less memory.current)
// and the address-space limit (RLIMIT_AS), for the memory guard of a run
// (experiments/memory_guard.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dkp::platform {

/// MemAvailable of /proc/meminfo's text, in bytes (nullopt when absent or malformed).
std::optional<uint64_t> parse_mem_available(std::string_view meminfo);

/// The least of MemAvailable, the cgroup's remaining memory and RLIMIT_AS, in bytes; nullopt
/// when none of them can be read (the guard then has no limit of its own).
std::optional<uint64_t> available_memory_bytes();

/// A size as `--max-memory` takes it: bytes, or a number with K, M, G or T (powers of 1024,
/// optionally followed by "B" or "iB"), e.g. "512M", "1.5G". nullopt when malformed or not
/// positive.
std::optional<uint64_t> parse_byte_size(std::string_view text);

/// "1.2 GiB", "340 MiB", "12 KiB", "512 B".
std::string format_bytes(double bytes);

}  // namespace dkp::platform
