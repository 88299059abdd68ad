#include "experiments/merge.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "experiments/run_spec.hpp"
#include "experiments/store.hpp"
#include "experiments/store_index.hpp"
#include "platform/dir_lock.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

namespace {

// Timing and bookkeeping keys of result.json: two runs of one configuration differ in them.
const std::set<std::string> kNotResults = {
    "train_s",           "step_s",  "epoch_s",          "predict_s",
    "resumed_from_step", "threads", "threads_effective"};

// Files of a run directory that are not copied: the lock, temporary files of interrupted atomic
// writes, and the record of an earlier failure.
bool copied_file(const std::string& name) {
  return name != "run.lock" && name != "error.json" && name.find(".tmp.") == std::string::npos;
}

// Flushes a file or directory to disk (best effort: a failure here is not a failed copy).
void sync_path(const fs::path& p, bool directory) {
  const int fd = ::open(p.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A copied cell enters the destination's index (store_index.hpp) when its source's index holds it
// as it is: a source cell that dkp did not write, or that was edited since, is copied unindexed.
void carry_index(const fs::path& source_dir, const fs::path& target_dir) {
  const auto [grid_dir, key] = index_place(source_dir);
  if (key.empty()) return;
  try {
    const auto index = read_store_index(grid_dir);
    if (index.count(key) && index_mismatch(source_dir, index).empty()) {
      record_in_store_index(target_dir);
    }
  } catch (const DataError&) {
  }
}

void rename_or_throw(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw Error(fmt::format("cannot rename '{}' to '{}': {}", from.string(), to.string(),
                            std::strerror(errno)));
  }
}

std::atomic<unsigned> g_counter{0};

// Copies the files of a finished run directory into a fresh temporary directory beside `target`
// and checks the copy; returns the temporary directory. Removes it and throws on failure.
fs::path copy_to_temp(const fs::path& src, const fs::path& target, const std::string& hash) {
  const fs::path tmp =
      target.parent_path() /
      fmt::format(".{}.merge.{}.{}", target.filename().string(), ::getpid(), g_counter++);
  try {
    fs::create_directories(tmp);
    for (const auto& e : fs::directory_iterator(src)) {
      const std::string name = e.path().filename().string();
      if (!e.is_regular_file() || !copied_file(name)) continue;
      fs::copy_file(e.path(), tmp / name);
      sync_path(tmp / name, false);
    }
    sync_path(tmp, true);
    // The source may have changed while it was copied (a `--force` rerun): check the copy.
    if (const std::string p = finished_cell_problem(tmp, hash); !p.empty()) {
      throw Error(fmt::format("the copy of {} is not a finished cell: {}", src.string(), p));
    }
  } catch (const fs::filesystem_error& e) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw Error(fmt::format("cannot copy {} to {}: {}", src.string(), tmp.string(), e.what()));
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
  return tmp;
}

std::string format_value(const std::map<std::string, double>& m, const std::string& key) {
  const auto it = m.find(key);
  return it == m.end() ? "(absent)" : fmt::format("{:.17g}", it->second);
}

}  // namespace

std::vector<std::string> result_differences(const fs::path& a, const fs::path& b, size_t max) {
  const auto va = read_result_values(a), vb = read_result_values(b);
  std::vector<std::string> out;
  std::set<std::string> keys;
  for (const auto& [k, v] : va) keys.insert(k);
  for (const auto& [k, v] : vb) keys.insert(k);
  for (const auto& k : keys) {
    if (kNotResults.count(k)) continue;
    const auto ia = va.find(k), ib = vb.find(k);
    const bool same =
        ia != va.end() && ib != vb.end() &&
        (ia->second == ib->second || (std::isnan(ia->second) && std::isnan(ib->second)));
    if (!same)
      out.push_back(fmt::format("{}: {} vs {}", k, format_value(va, k), format_value(vb, k)));
  }
  const std::string da = util::json_string(util::read_json_object(a), "data_sha256", a.string());
  const std::string db = util::json_string(util::read_json_object(b), "data_sha256", b.string());
  if (da != db) out.push_back(fmt::format("data_sha256: {} vs {}", da, db));
  if (out.size() > max) {
    const size_t more = out.size() - max;
    out.resize(max);
    out.push_back(fmt::format("and {} more", more));
  }
  return out;
}

std::string MergeReport::line() const {
  return fmt::format(
      "copied {}, replaced {}, duplicates {}, conflicts {}, unfinished {}, running {}, invalid {}, "
      "snapshots {}",
      copied, replaced, duplicates, conflicts, unfinished, running, invalid, snapshots);
}

MergeReport merge_stores(const std::vector<fs::path>& sources, const fs::path& dest,
                         const MergeOptions& opt) {
  std::error_code ec;
  if (fs::exists(dest, ec) && !fs::is_directory(dest, ec)) {
    throw Error(fmt::format("destination store {} is not a directory", dest.string()));
  }
  for (const auto& s : sources) {
    if (!fs::is_directory(s, ec)) {
      throw Error(fmt::format("source store {} is not a directory", s.string()));
    }
    if (fs::exists(dest, ec) && fs::equivalent(s, dest, ec)) {
      throw Error(fmt::format("source store {} is the destination", s.string()));
    }
  }
  if (!opt.dry_run) {
    fs::create_directories(dest, ec);
    if (ec) {
      throw Error(
          fmt::format("cannot create destination store {}: {}", dest.string(), ec.message()));
    }
  }

  // The destination's finished cells by hash (any grid: a configuration is stored once).
  std::map<std::string, fs::path> finished;
  for (const auto& d : store_run_dirs(dest)) {
    if (finished_cell_problem(d).empty()) finished.emplace(d.filename().string(), d);
  }

  MergeReport rep;
  // A finished cell the destination holds already: a duplicate or a conflict.
  auto compare = [&](const fs::path& src, const fs::path& existing, const std::string& hash) {
    const auto diffs = result_differences(existing / "result.json", src / "result.json");
    if (diffs.empty()) {
      ++rep.duplicates;
      return;
    }
    ++rep.conflicts;
    std::string detail;
    for (const auto& d : diffs) detail += (detail.empty() ? "" : "; ") + d;
    rep.conflict_notes.push_back(
        {hash, src, existing,
         fmt::format("other results than the destination's (destination vs source: {}); the "
                     "destination's kept",
                     detail)});
  };

  for (const auto& src_root : sources) {
    const std::vector<fs::path> dirs = store_run_dirs(src_root);
    if (dirs.empty()) rep.empty_sources.push_back(src_root);
    for (const auto& dir : dirs) {
      const std::string hash = dir.filename().string();
      const fs::path rel = fs::relative(dir, src_root);
      if (const auto p = platform::probe_lock(dir); p.held) {
        ++rep.running;
        rep.running_notes.push_back(
            {hash, dir, {}, fmt::format("being run by {} in the source: not copied", p.holder)});
        continue;
      }
      if (const std::string problem = finished_cell_problem(dir); !problem.empty()) {
        if (fs::exists(dir / "result.json", ec)) {
          ++rep.invalid;
          rep.invalid_notes.push_back({hash, dir, {}, problem});
        } else {
          ++rep.unfinished;
        }
        continue;
      }
      if (const auto it = finished.find(hash); it != finished.end()) {
        compare(dir, it->second, hash);
        continue;
      }
      const fs::path target = dest / rel;
      const bool exists = fs::exists(target, ec);
      if (opt.dry_run) {
        if (exists && platform::probe_lock(target).held) {
          ++rep.running;
          rep.running_notes.push_back(
              {hash, dir, target, "being run in the destination: not copied"});
          continue;
        }
        ++(exists ? rep.replaced : rep.copied);
        rep.copied_cells.push_back(rel.string());
        finished.emplace(hash, dir);
        continue;
      }
      const fs::path tmp = copy_to_temp(dir, target, hash);
      // A new run directory: the whole cell appears at once.
      if (!exists && ::rename(tmp.c_str(), target.c_str()) == 0) {
        sync_path(target.parent_path(), true);
        carry_index(dir, target);
        ++rep.copied;
        rep.copied_cells.push_back(rel.string());
        finished.emplace(hash, target);
        continue;
      }
      if (!exists && errno != EEXIST && errno != ENOTEMPTY) {
        const int err = errno;
        fs::remove_all(tmp, ec);
        throw Error(fmt::format("cannot rename '{}' to '{}': {}", tmp.string(), target.string(),
                                std::strerror(err)));
      }
      // An unfinished run directory is there (or appeared meanwhile): replace it under its lock,
      // result.json last.
      const std::optional<platform::DirLock> lock = platform::DirLock::try_acquire(target);
      if (!lock) {
        fs::remove_all(tmp, ec);
        ++rep.running;
        rep.running_notes.push_back({hash, dir, target,
                                     fmt::format("being run by {} in the destination: not copied",
                                                 platform::probe_lock(target).holder)});
        continue;
      }
      if (finished_cell_problem(target).empty()) {  // finished meanwhile
        fs::remove_all(tmp, ec);
        compare(dir, target, hash);
        finished.emplace(hash, target);
        continue;
      }
      try {
        std::vector<fs::path> stale;
        for (const auto& e : fs::directory_iterator(target)) {
          const std::string name = e.path().filename().string();
          if (name == "error.json" || name == "result.json" ||
              name.find(".tmp.") != std::string::npos) {
            stale.push_back(e.path());
          }
        }
        for (const auto& p : stale) fs::remove(p);
        for (const auto& e : fs::directory_iterator(tmp)) {
          if (e.path().filename() != "result.json") {
            rename_or_throw(e.path(), target / e.path().filename());
          }
        }
        rename_or_throw(tmp / "result.json", target / "result.json");
        sync_path(target, true);
        fs::remove_all(tmp, ec);
        carry_index(dir, target);
      } catch (const fs::filesystem_error& e) {
        fs::remove_all(tmp, ec);
        throw Error(fmt::format("cannot replace {}: {}", target.string(), e.what()));
      } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
      }
      ++rep.replaced;
      rep.copied_cells.push_back(rel.string());
      finished.emplace(hash, target);
    }

    // The grids' snapshots, for `dkp tables <dest>`.
    for (const auto& g : fs::directory_iterator(src_root, ec)) {
      if (!g.is_directory(ec)) continue;
      std::error_code ec2;
      for (const auto& f : fs::directory_iterator(g.path(), ec2)) {
        const std::string name = f.path().filename().string();
        if (name.rfind("snapshot-", 0) != 0 || f.path().extension() != ".yaml") continue;
        const fs::path to = dest / g.path().filename() / name;
        const std::string text = util::read_file(f.path());
        if (fs::exists(to, ec2)) {
          if (util::read_file(to) != text) {
            rep.snapshot_notes.push_back(
                {"", f.path(), to, "another grid text for this profile: the destination's kept"});
          }
          continue;
        }
        if (!opt.dry_run) util::write_file_atomic(to, text);
        ++rep.snapshots;
      }
    }
  }
  return rep;
}

}  // namespace dkp::experiments
