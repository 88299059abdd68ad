#include "experiments/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "data/mnist.hpp"
#include "experiments/store.hpp"
#include "platform/dir_lock.hpp"
#include "platform/process.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

extern char** environ;

namespace dkp::experiments {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string RunnerSummary::line() const {
  std::string s = fmt::format("computed {}, reused {}, failed {}", computed, reused, failed);
  if (running_elsewhere) s += fmt::format(", running elsewhere {}", running_elsewhere);
  if (damaged) s += fmt::format(", damaged {}", damaged);
  if (stale) s += fmt::format(", stale {}", stale);
  if (interrupted || not_started) {
    s += fmt::format(", interrupted {}, not started {}", interrupted, not_started);
  }
  return s;
}

std::vector<RunSpec> take_cells_without_data(std::vector<RunSpec>& cells,
                                             const std::filesystem::path& data_root) {
  std::vector<RunSpec> keep, skipped;
  for (auto& c : cells) {
    (data::optional_dataset_missing(data_root, c.dataset) ? skipped : keep).push_back(std::move(c));
  }
  cells = std::move(keep);
  return skipped;
}

namespace {

struct Child {
  pid_t pid = -1;
  const RunSpec* spec = nullptr;
  Clock::time_point start;
  std::string command;
};

std::string tail_of_file(const fs::path& p, size_t max_bytes) {
  std::string s;
  try {
    s = util::read_file(p);
  } catch (const Error&) {
    return "";
  }
  if (s.size() > max_bytes) s = "..." + s.substr(s.size() - max_bytes);
  return s;
}

std::string last_line(const std::string& text) {
  size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  size_t begin = text.rfind('\n', end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return text.substr(begin, end - begin + 1);
}

// Environment of the children: ours with OPENBLAS_NUM_THREADS=1.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "OPENBLAS_NUM_THREADS=", 21) == 0) continue;
    env.emplace_back(*e);
  }
  env.emplace_back("OPENBLAS_NUM_THREADS=1");
  return env;
}

pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const fs::path& dir,
            const std::vector<std::string>& env) {
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(exe.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string out = (dir / "stdout.log").string(), err = (dir / "stderr.log").string();
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) throw Error(fmt::format("cannot start '{}': {}", exe, std::strerror(errno)));
  if (pid == 0) {
    // Own process group: a Ctrl-C on the terminal reaches the runner only, which then stops
    // the children itself (and does not record them as failed).
    ::setpgid(0, 0);
    // If the runner dies (even by SIGKILL), the run gets SIGTERM: it checkpoints and stops, and
    // the next `dkp grid run` resumes it instead of racing an orphan.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(126);
    const int in = ::open("/dev/null", O_RDONLY);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || o < 0 || e < 0) ::_exit(125);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const int fd : {in, o, e}) {
      if (fd > 2) ::close(fd);
    }
    ::execve(exe.c_str(), argv.data(), envp.data());
    static const char msg[] = "dkp grid run: cannot execute the program for this cell\n";
    [[maybe_unused]] const ssize_t n = ::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  return pid;
}

}  // namespace

RunnerSummary run_cells(const std::vector<RunSpec>& cells, const fs::path& results_root,
                        const RunnerOptions& opt) {
  std::ostream& log = opt.log ? *opt.log : std::cout;
  if (opt.jobs < 1) throw ConfigError(fmt::format("-j must be at least 1, not {}", opt.jobs));
  if (opt.exe.empty()) throw ConfigError("no program to run the cells with");

  RunnerSummary sum;
  auto note = [](const RunSpec& c, const std::string& detail) {
    return CellNote{c.hash(), c.label(), detail};
  };
  // Whether a cell is to be run, from its state now; false after counting it otherwise.
  auto to_run = [&](const RunSpec& c, bool at_start) {
    if (opt.force) return true;
    const CellStatus st = cell_status(c, results_root, opt.status);
    switch (st.state) {
      case CellState::done:
        ++sum.reused;
        if (!at_start) log << fmt::format("done elsewhere meanwhile: {}\n", c.label());
        return false;
      case CellState::running:
        ++sum.running_elsewhere;
        sum.elsewhere_cells.push_back(note(c, st.detail));
        log << fmt::format("running elsewhere: {} ({})\n", c.label(), st.detail);
        return false;
      case CellState::damaged:
        ++sum.damaged;
        sum.damaged_cells.push_back(note(c, st.detail));
        return false;
      case CellState::stale:
        ++sum.stale;
        sum.stale_cells.push_back(note(c, st.detail));
        return false;
      default:
        return true;
    }
  };
  std::deque<const RunSpec*> queue;
  for (const auto& c : cells) {
    if (to_run(c, true)) queue.push_back(&c);
  }
  size_t total = queue.size();
  std::string also;
  if (sum.running_elsewhere) also += fmt::format(", {} running elsewhere", sum.running_elsewhere);
  if (sum.damaged) also += fmt::format(", {} damaged", sum.damaged);
  if (sum.stale) also += fmt::format(", {} stale", sum.stale);
  log << fmt::format("grid: {} cells, {} already done{}, {} to run{}, {} at a time\n", cells.size(),
                     sum.reused, also, total, opt.force ? " (--force: recomputed afresh)" : "",
                     opt.jobs)
      << std::flush;
  std::vector<std::string> child_extra = opt.extra_args;
  if (opt.force) child_extra.push_back("--force");

  const auto env = child_environment();
  const auto t0 = Clock::now();
  std::vector<Child> running;
  size_t finished = 0;
  Clock::time_point stop_seen{};
  auto stopping = [&]() { return opt.stop && opt.stop->load(); };

  auto report = [&](const Child& c, const std::string& what, const std::string& extra) {
    ++finished;
    const double secs = std::chrono::duration<double>(Clock::now() - c.start).count();
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    const size_t remaining = total - finished;
    const std::string eta =
        remaining == 0 ? "done"
                       : "ETA " + platform::format_duration(elapsed / finished * remaining);
    log << fmt::format("[{}/{}] {:<6} {} ({}) | computed {}, failed {}, {} left, {}{}\n", finished,
                       total, what, c.spec->label(), platform::format_duration(secs), sum.computed,
                       sum.failed, remaining, eta, extra.empty() ? "" : "\n         " + extra)
        << std::flush;
  };

  auto finish = [&](Child& c, int status) {
    const fs::path dir = c.spec->run_dir(results_root);
    const double secs = std::chrono::duration<double>(Clock::now() - c.start).count();
    const bool exited = WIFEXITED(status);
    const int code = exited ? WEXITSTATUS(status) : -1;
    if (exited && code == kRunExitBusy) {
      // Another process took the cell's lock first: it computes the cell, not a failure.
      const std::string who = last_line(tail_of_file(dir / "stderr.log", 4000));
      ++sum.running_elsewhere;
      sum.elsewhere_cells.push_back(note(*c.spec, who));
      report(c, "BUSY", who.empty() ? "running elsewhere" : "running elsewhere: " + who);
      return;
    }
    if (stopping()) {
      // Terminated by us: not a failure of the cell. Its checkpoint (if any) resumes it.
      ++sum.interrupted;
      ++finished;
      return;
    }
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (exited && code == 0 && cell_status(*c.spec, results_root).state == CellState::done) {
      ++sum.computed;
      report(c, "ok", "");
      return;
    }
    Failure f;
    f.exit_code = code;
    f.signal = sig;
    f.seconds = secs;
    f.command = c.command;
    f.stderr_tail = tail_of_file(dir / "stderr.log", 4000);
    if (exited && code == 0) {
      f.reason =
          fmt::format("exited 0 but left no result.json with config_hash {}", c.spec->hash());
    } else if (exited) {
      const std::string msg = last_line(f.stderr_tail);
      f.reason = fmt::format("exit code {}{}", code, msg.empty() ? "" : ": " + msg);
    } else {
      f.reason = fmt::format("killed by signal {} ({})", sig, strsignal(sig));
    }
    write_error_json(*c.spec, results_root, f);
    ++sum.failed;
    sum.failed_cells.push_back(c.spec->label());
    report(c, "FAILED", f.reason);
  };

  while ((!queue.empty() && !stopping()) || !running.empty()) {
    while (!stopping() && !queue.empty() && static_cast<int>(running.size()) < opt.jobs) {
      const RunSpec* spec = queue.front();
      queue.pop_front();
      const fs::path dir = spec->run_dir(results_root);
      // Its state may have changed since the start (another runner on the same store).
      if (!to_run(*spec, false)) {
        --total;
        continue;
      }
      if (opt.force) {
        // Never cleared while another process holds the cell's lock: it is computing it.
        if (const platform::LockProbe p = platform::probe_lock(dir); p.held) {
          --total;
          ++sum.running_elsewhere;
          sum.elsewhere_cells.push_back(note(*spec, "being run by " + p.holder));
          log << fmt::format("running elsewhere, not recomputed: {} (being run by {})\n",
                             spec->label(), p.holder)
              << std::flush;
          continue;
        }
        try {
          clear_run_dir(dir);
        } catch (const Error& e) {
          --total;
          ++sum.failed;
          sum.failed_cells.push_back(spec->label());
          log << fmt::format("FAILED {}: {}\n", spec->label(), e.what()) << std::flush;
          continue;
        }
      }
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) {
        throw Error(
            fmt::format("cannot create run directory '{}': {}", dir.string(), ec.message()));
      }
      fs::remove(dir / "error.json", ec);  // a retried cell starts clean
      Child c;
      c.spec = spec;
      c.start = Clock::now();
      // The child gets the canonical configuration (--spec); the command kept for messages is
      // the same run in flags, for a reader to rerun by hand.
      c.command = spec->command_line(opt.exe, results_root, child_extra);
      c.pid = spawn(opt.exe, spec->spec_args(results_root, child_extra), dir, env);
      running.push_back(c);
    }
    if (stopping() && !running.empty()) {
      // SIGTERM first (a run saves its checkpoint), SIGKILL if it lingers for 20 s.
      if (stop_seen == Clock::time_point{}) stop_seen = Clock::now();
      const bool hard = Clock::now() - stop_seen > std::chrono::seconds(20);
      for (const auto& c : running) ::kill(c.pid, hard ? SIGKILL : SIGTERM);
    }
    bool any = false;
    for (size_t i = 0; i < running.size();) {
      int status = 0;
      const pid_t r = ::waitpid(running[i].pid, &status, WNOHANG);
      if (r == running[i].pid || (r < 0 && errno != EINTR)) {
        if (r < 0) status = 0x7f00;  // lost child: reported as failed (exit code 127)
        Child c = running[i];
        running.erase(running.begin() + static_cast<long>(i));
        finish(c, status);
        any = true;
      } else {
        ++i;
      }
    }
    if (!any && !running.empty()) {
      std::this_thread::sleep_for(std::chrono::duration<double>(opt.poll_seconds));
    }
  }
  sum.not_started = queue.size();
  return sum;
}

}  // namespace dkp::experiments
