#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "platform/dir_lock.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace fs = std::filesystem;
using dkp::platform::DirLock;
using dkp::platform::probe_lock;

TEST_CASE("dir lock: one holder at a time, named in the lock file, free once released") {
  const fs::path dir = dkp::test::temp_dir("dirlock") / "cell";
  CHECK_FALSE(probe_lock(dir).held);  // no directory, no lock file
  auto a = DirLock::try_acquire(dir);
  REQUIRE(a);
  CHECK(a->held());
  CHECK(fs::exists(dir / "run.lock"));
  const auto p = probe_lock(dir);
  CHECK(p.held);
  CHECK(p.holder.find("pid " + std::to_string(::getpid()) + " on ") == 0);
  CHECK_FALSE(DirLock::try_acquire(dir));  // a second owner, even in this process, is refused
  DirLock moved = std::move(*a);
  CHECK_FALSE(a->held());
  CHECK(probe_lock(dir).held);
  moved.release();
  CHECK_FALSE(probe_lock(dir).held);
  CHECK(fs::exists(dir / "run.lock"));  // the file stays; nobody holds it
  auto b = DirLock::try_acquire(dir);
  CHECK(b);
}

TEST_CASE("dir lock: a holder killed with SIGKILL leaves the lock free") {
  const fs::path dir = dkp::test::temp_dir("dirlock_kill") / "cell";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto l = DirLock::try_acquire(dir);
    const char c = l ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  CHECK(c == 'y');
  CHECK(probe_lock(dir).held);
  CHECK(probe_lock(dir).holder.find("pid " + std::to_string(child)) == 0);
  CHECK_FALSE(DirLock::try_acquire(dir));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK_FALSE(probe_lock(dir).held);
  CHECK(DirLock::try_acquire(dir));
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("dir lock: an unwritable place is an error naming the lock file") {
  CHECK_THROWS_WITH_AS(DirLock::try_acquire("/proc/dkp-no-such-dir"),
                       doctest::Contains("/proc/dkp-no-such-dir/run.lock"), dkp::Error);
}

TEST_CASE("dir lock: the lock holder clears temporary files of dead writers, not living ones") {
  const auto dir = dkp::test::temp_dir("dead-writers");
  // write_file_atomic's names: <file>.tmp.<pid>.<n>; pid 2147483646 names no process.
  const auto dead = dir / "result.json.tmp.2147483646.0";
  const auto alive = dir / fmt::format("trace.csv.tmp.{}.3", ::getpid());
  const auto other = dir / "notes.tmp.txt";
  for (const auto& f : {dead, alive, other}) dkp::util::write_file_atomic(f, "x");
  CHECK(dkp::util::temp_file_writer(dead) == 2147483646L);
  CHECK(dkp::util::temp_file_writer(alive) == long(::getpid()));
  CHECK_FALSE(dkp::util::temp_file_writer(other));
  CHECK_FALSE(dkp::util::temp_file_writer(dir / "x.tmp.12a.0"));
  CHECK(dkp::platform::remove_dead_writers_temp_files(dir) == 1);
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::exists(alive));
  CHECK(std::filesystem::exists(other));
}

TEST_CASE("dir lock: a run.lock that is a symbolic link is refused, its target untouched") {
  const fs::path dir = dkp::test::temp_dir("dir-lock-symlink");
  const fs::path target = dir / "precious.txt";
  std::ofstream(target) << "keep me";
  fs::create_directories(dir / "run");
  fs::create_symlink(target, dkp::platform::lock_file(dir / "run"));
  CHECK_THROWS_WITH_AS(dkp::platform::DirLock::try_acquire(dir / "run"),
                       doctest::Contains("is a symbolic link: refused"), dkp::Error);
  std::ifstream in(target);
  std::string text;
  std::getline(in, text);
  CHECK(text == "keep me");
}
