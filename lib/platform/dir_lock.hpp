// Advisory ownership of a directory by one process at a time: an exclusive flock(2) on
// <dir>/run.lock, whose text names the holder (pid, host, start time). The kernel releases the
// lock when the holder exits in any way (kill -9 included), so a lock is never stale: the file
// may stay behind, but nobody holds it. Works across processes on one machine and on shared
// filesystems whose flock is coherent across clients (local disks, NFSv4); see docs on the
// many-machines path.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace dkp::platform {

class DirLock {
 public:
  DirLock() = default;
  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  /// Takes the lock of `dir` (created if missing) without waiting: nullopt when another process
  /// (or another DirLock of this one) holds it. Throws dkp::Error when the lock file cannot be
  /// opened (e.g. the directory is not writable).
  static std::optional<DirLock> try_acquire(const std::filesystem::path& dir);

  bool held() const { return fd_ >= 0; }
  /// Releases the lock (also done by the destructor).
  void release();

 private:
  int fd_ = -1;
};

/// The lock file of a directory: <dir>/run.lock.
std::filesystem::path lock_file(const std::filesystem::path& dir);

/// Whether some process holds the lock of `dir` now (false when there is no lock file). Holder
/// text: "pid 1234 on host since 2026-11-27T08:00:00Z", from the lock file, when held.
struct LockProbe {
  bool held = false;
  std::string holder;
};
LockProbe probe_lock(const std::filesystem::path& dir);

/// Removes the temporary files of write_file_atomic in `dir` whose writer process is gone (a
/// run killed while writing), for the holder of `dir`'s lock to call; a living writer's file
/// is left. Returns how many were removed.
size_t remove_dead_writers_temp_files(const std::filesystem::path& dir);

}  // namespace dkp::platform
