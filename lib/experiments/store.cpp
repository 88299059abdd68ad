#include "experiments/store.hpp"

#include "experiments/store_index.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "platform/dir_lock.hpp"
#include "platform/process.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

const char* to_string(CellState s) {
  switch (s) {
    case CellState::done:
      return "done";
    case CellState::running:
      return "running";
    case CellState::missing:
      return "missing";
    case CellState::failed:
      return "failed";
    case CellState::interrupted:
      return "interrupted";
    case CellState::damaged:
      return "damaged";
    case CellState::stale:
      return "stale";
  }
  return "?";
}

namespace {

// A JSON object from a file, or what is wrong with it (`error` set, an empty value returned):
// "<file>:<line>:<column>: not valid JSON: <error>", "<file>: not a JSON object", or what
// util::read_file says of an unreadable file. Always names the file.
util::JsonValue parse_json_object(const fs::path& file, std::string& error) {
  try {
    return util::read_json_object(file);
  } catch (const Error& e) {
    error = e.what();
    return {};
  }
}

// A string member of a file's JSON object, or the damage when it has another type.
std::string string_member(const util::JsonValue& n, const char* key, const fs::path& file,
                          std::string& damage) {
  try {
    return util::json_string(n, key, file.string());
  } catch (const Error& e) {
    damage = e.what();
    return "";
  }
}

// The result.json schema of a done cell's numbers: what is wrong, "<file>: key 'K': ...", or "".
// Every metric key present is a finite number within its range, test_ll is there when the run
// predicted (n_test >= 1), and a result of `dkp run` (one that names its model) has every metric
// of its task: a damaged or deleted value never becomes a split silently missing from a table.
std::string result_schema_damage(const util::JsonValue& n, const fs::path& file) {
  struct Key {
    const char* name;
    double lo, hi;
  };
  const double big = 1e6;  // |ELBO| or |test LL| per datapoint beyond this is no result
  const Key keys[] = {
      {"elbo", -big, big},    {"elbo_mean", -big, big}, {"elbo_se", 0, big}, {"test_ll", -big, big},
      {"test_rmse", 0, 1e12}, {"test_acc", 0, 1},       {"train_s", 0, 1e9}, {"predict_s", 0, 1e9},
      {"step_s", 0, 1e9},     {"epoch_s", 0, 1e9},      {"n_train", 1, 1e9}, {"n_test", 0, 1e9},
  };
  auto bad = [&](const char* key, const std::string& what) {
    return fmt::format("{}: key '{}': {}", file.string(), key, what);
  };
  for (const Key& k : keys) {
    const auto it = n.find(k.name);
    if (it == n.end()) continue;
    if (!it->is_number()) return bad(k.name, fmt::format("not a number ({})", it->dump()));
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < k.lo || v > k.hi) {
      return bad(k.name, fmt::format("{} is outside [{}, {}]", v, k.lo, k.hi));
    }
  }
  const auto n_test = n.find("n_test");
  if (n_test != n.end() && n_test->get<double>() >= 1 && !n.contains("test_ll")) {
    return bad("test_ll", "missing (the run predicted: n_test >= 1)");
  }
  // A result `dkp run` wrote (it names its model) carries every metric of its task: the ELBO, the
  // data's sizes, the training time, and when it predicted the test LL and the RMSE (regression)
  // or accuracy (classification).
  if (n.contains("model")) {
    for (const char* key : {"elbo", "n_train", "n_test", "train_s"}) {
      if (!n.contains(key)) return bad(key, "missing (every result of dkp run has it)");
    }
    if (n.find("n_test")->get<double>() >= 1 && !n.contains("test_rmse") &&
        !n.contains("test_acc")) {
      return bad("test_rmse", "missing, and no test_acc either (the run predicted: n_test >= 1)");
    }
  }
  return "";
}

}  // namespace

std::optional<std::string> result_hash(const fs::path& result_json) {
  std::error_code ec;
  if (!fs::exists(result_json, ec)) return std::nullopt;
  try {
    return util::json_string(util::read_json_object(result_json), "config_hash",
                             result_json.string());
  } catch (const Error&) {
    return std::nullopt;
  }
}

namespace {

std::map<std::string, double> numeric_values(const util::JsonValue& n) {
  std::map<std::string, double> out;
  for (const auto& [key, v] : n.items()) {
    if (v.is_number()) out[key] = v.get<double>();
  }
  return out;
}

}  // namespace

std::map<std::string, double> read_result_values(const fs::path& result_json) {
  const util::JsonValue n = util::read_json_object(result_json);
  if (const std::string damage = result_schema_damage(n, result_json); !damage.empty()) {
    throw DataError(damage);
  }
  return numeric_values(n);
}

double run_seconds(const std::map<std::string, double>& values) {
  auto get = [&](const char* key) {
    const auto it = values.find(key);
    return it != values.end() && std::isfinite(it->second) && it->second > 0 ? it->second : 0.0;
  };
  const double step_s = get("step_s"), steps = get("steps");
  const double train_s = step_s > 0 && steps > 0 ? step_s * steps : get("train_s");
  return train_s + get("predict_s");
}

namespace {

// The result.json of the same configuration under another grid of the results root, in the
// order of the grid names.
std::optional<fs::path> result_in_other_grid(const RunSpec& spec, const fs::path& results_root) {
  std::error_code ec;
  std::vector<fs::path> grids;
  for (const auto& g : fs::directory_iterator(results_root, ec)) {
    if (g.is_directory(ec) && g.path().filename() != spec.grid) grids.push_back(g.path());
  }
  std::sort(grids.begin(), grids.end());
  // Only a cell that dkp wrote there (its grid's index holds it, store_index.hpp): a stray
  // directory's result.json, written by hand, is never taken for a computed cell.
  const std::string key = spec.dataset + "/split" + std::to_string(spec.split) + "/" + spec.hash();
  for (const auto& g : grids) {
    const fs::path r = g / key / "result.json";
    if (result_hash(r) != spec.hash()) continue;
    try {
      if (cached_store_index(g)->count(key)) return r;
    } catch (const DataError&) {
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> DataFingerprints::get(const std::string& dataset, int split) {
  const auto key = std::make_pair(dataset, split);
  const auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  std::optional<std::string> v;
  if (fn_) v = fn_(dataset, split);
  cache_.emplace(key, v);
  return v;
}

namespace {

// A result.json as cell_status sees it.
struct ResultFile {
  bool exists = false;
  std::string damage;  ///< "<path>: <error>" when malformed
  std::string hash;    ///< its config_hash
  std::string data_sha256;
};

ResultFile read_result_file(const fs::path& file) {
  ResultFile r;
  std::error_code ec;
  r.exists = fs::exists(file, ec);
  if (!r.exists) return r;
  const util::JsonValue n = parse_json_object(file, r.damage);
  if (!r.damage.empty()) return r;
  r.hash = string_member(n, "config_hash", file, r.damage);
  if (!r.damage.empty()) return r;
  if (r.hash.empty()) r.damage = fmt::format("{}: no config_hash", file.string());
  r.data_sha256 = string_member(n, "data_sha256", file, r.damage);
  if (r.damage.empty()) r.damage = result_schema_damage(n, file);
  return r;
}

// The data fingerprint recorded in a manifest.json ("" when absent); `damage` set when the file
// is malformed.
std::string manifest_data_sha256(const fs::path& manifest, std::string& damage) {
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return "";
  const util::JsonValue n = parse_json_object(manifest, damage);
  if (!damage.empty()) return "";
  const std::string hash = string_member(n, "config_hash", manifest, damage);
  if (!damage.empty()) return "";
  if (hash.empty()) {
    damage = fmt::format("{}: no config_hash", manifest.string());
    return "";
  }
  return string_member(n, "data_sha256", manifest, damage);
}

// "" when the recorded fingerprint is the data's now (or either is unknown), else the note.
std::string data_mismatch(const RunSpec& spec, const StatusOptions& opt,
                          const std::string& recorded, const std::string& what) {
  if (!opt.data || recorded.empty()) return "";
  const auto now = opt.data->get(spec.dataset, spec.split);
  if (!now || *now == recorded) return "";
  return fmt::format("{} made from other data: data_sha256 {}, the data of {} split {} now {}",
                     what, recorded, spec.dataset, spec.split, *now);
}

// A done cell's result, checked against the data now present (from result.json's
// data_sha256, else its manifest's).
CellStatus done_or_stale(const RunSpec& spec, const StatusOptions& opt, const fs::path& result,
                         const ResultFile& r, std::string detail) {
  CellStatus st;
  st.result = result;
  st.state = CellState::done;
  st.detail = std::move(detail);
  // Files changed since dkp wrote them (the grid's index.tsv): damaged, with the reason.
  try {
    const fs::path dir = result.parent_path();
    const auto [grid_dir, key] = index_place(dir);
    const std::string why = key.empty() ? "" : index_mismatch(dir, *cached_store_index(grid_dir));
    if (!why.empty()) {
      st.state = CellState::damaged;
      st.detail = why;
      return st;
    }
  } catch (const DataError& e) {
    st.state = CellState::damaged;
    st.detail = e.what();
    return st;
  }
  if (!opt.data) return st;
  std::string recorded = r.data_sha256, source = result.string();
  if (recorded.empty()) {
    const fs::path manifest = result.parent_path() / "manifest.json";
    std::string damage;
    recorded = manifest_data_sha256(manifest, damage);
    if (!damage.empty()) {
      st.state = CellState::damaged;
      st.detail = damage;
      return st;
    }
    source = manifest.string();
  }
  const std::string note = data_mismatch(spec, opt, recorded, "result");
  if (!note.empty()) {
    st.state = CellState::stale;
    st.detail = fmt::format("{} ({})", note, source);
  }
  return st;
}

}  // namespace

CellStatus cell_status(const RunSpec& spec, const fs::path& results_root,
                       const StatusOptions& opt) {
  const fs::path dir = spec.run_dir(results_root);
  std::error_code ec;
  const ResultFile r = read_result_file(dir / "result.json");
  if (r.damage.empty() && r.hash == spec.hash()) {
    return done_or_stale(spec, opt, dir / "result.json", r, "");
  }
  // A result of the same configuration under another grid: used where it is, unless this grid's
  // own run directory is damaged (reported below).
  if (r.damage.empty()) {
    if (const auto other = result_in_other_grid(spec, results_root)) {
      return done_or_stale(spec, opt, *other, read_result_file(*other),
                           fmt::format("computed under grid {}",
                                       fs::relative(*other, results_root).begin()->string()));
    }
  }
  CellStatus st;
  const std::string stale_result =
      r.exists && r.damage.empty()
          ? fmt::format("result.json of another configuration (config_hash {}) ignored", r.hash)
          : std::string();
  // How far a run has got (or had got): its training trace's last row.
  std::string trace_damage, progress;
  if (fs::exists(dir / "trace.csv", ec)) {
    try {
      const auto rows = training::parse_trace_csv(util::read_file(dir / "trace.csv"),
                                                  (dir / "trace.csv").string());
      if (!rows.empty()) {
        progress = fmt::format("step {} of {} (trace.csv)", rows.back().step, spec.protocol.steps);
      }
    } catch (const Error& e) {
      trace_damage = e.what();
    }
  }
  if (fs::is_directory(dir, ec)) {
    const platform::LockProbe lock = platform::probe_lock(dir);
    if (lock.held) {
      st.state = CellState::running;
      st.detail = fmt::format("being run by {}", lock.holder);
      if (!progress.empty()) st.detail += ", " + progress;
      return st;
    }
  }
  // Nobody is writing it: malformed files are damage.
  std::string manifest_damage;
  const std::string checkpoint_data = manifest_data_sha256(dir / "manifest.json", manifest_damage);
  for (const std::string& damage : {r.damage, manifest_damage, trace_damage}) {
    if (!damage.empty()) {
      st.state = CellState::damaged;
      st.detail = damage;
      return st;
    }
  }
  if (fs::exists(dir / "error.json", ec)) {
    st.state = CellState::failed;
    const std::string reason = read_error_reason(dir / "error.json");
    st.detail = reason.empty() ? "see error.json" : reason;
    return st;
  }
  if (fs::exists(dir / "checkpoint.bin", ec) || fs::exists(dir / "manifest.json", ec)) {
    const std::string note = data_mismatch(spec, opt, checkpoint_data, "checkpoint");
    if (!note.empty()) {
      st.state = CellState::stale;
      st.detail = fmt::format("{} ({})", note, (dir / "manifest.json").string());
      return st;
    }
    st.state = CellState::interrupted;
    st.detail = progress;
    if (!stale_result.empty()) st.detail += (st.detail.empty() ? "" : "; ") + stale_result;
    return st;
  }
  st.state = CellState::missing;
  st.detail = stale_result;
  return st;
}

namespace {

// finished_cell_problem, keeping what it read when `cell` is given and the cell is finished: each
// file is read and parsed once.
std::string check_finished_cell(const fs::path& dir, const std::string& hash, FinishedCell* cell) {
  const fs::path result = dir / "result.json", manifest = dir / "manifest.json";
  std::error_code ec;
  if (!fs::exists(result, ec)) return fmt::format("{}: no result.json", dir.string());
  if (!fs::exists(manifest, ec)) return fmt::format("{}: no manifest.json", dir.string());
  try {
    const util::JsonValue res = util::read_json_object(result);
    const std::string r = util::json_string(res, "config_hash", result.string());
    if (std::string damage = result_schema_damage(res, result); !damage.empty()) return damage;
    if (r != hash) {
      return fmt::format("{}: config_hash '{}' is not the run directory's {}", result.string(), r,
                         hash);
    }
    const util::JsonValue m = util::read_json_object(manifest);
    const std::string mh = util::json_string(m, "config_hash", manifest.string());
    if (mh != hash) {
      return fmt::format("{}: config_hash '{}' is not the run directory's {}", manifest.string(),
                         mh, hash);
    }
    const std::string canonical = util::json_string(m, "canonical_config", manifest.string());
    if (canonical.empty()) return fmt::format("{}: no canonical_config", manifest.string());
    RunSpec spec = RunSpec::parse_canonical(canonical);
    const std::string ch = spec.hash();
    if (ch != hash) {
      return fmt::format("{}: canonical_config hashes to {}, not {}", manifest.string(), ch, hash);
    }
    if (cell) {
      cell->dir = dir;
      cell->spec = std::move(spec);
      cell->values = numeric_values(res);
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

std::string finished_cell_problem(const fs::path& dir, const std::string& hash) {
  return check_finished_cell(dir, hash, nullptr);
}

std::vector<fs::path> store_run_dirs(const fs::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  auto subdirs = [&](const fs::path& p) {
    std::vector<fs::path> v;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      if (e.is_directory(ec) && e.path().filename().string().rfind('.', 0) != 0) {
        v.push_back(e.path());
      }
    }
    return v;
  };
  for (const auto& g : subdirs(root)) {
    for (const auto& d : subdirs(g)) {
      for (const auto& s : subdirs(d)) {
        if (s.filename().string().rfind("split", 0) != 0) continue;
        for (const auto& h : subdirs(s)) out.push_back(h);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string finished_cell_problem(const fs::path& run_dir) {
  return finished_cell_problem(run_dir, run_dir.filename().string());
}

std::optional<FinishedCell> read_finished_cell(const fs::path& run_dir) {
  FinishedCell c;
  if (!check_finished_cell(run_dir, run_dir.filename().string(), &c).empty()) return std::nullopt;
  c.spec.grid = run_dir.parent_path().parent_path().parent_path().filename().string();
  return c;
}

std::vector<RunSpec> pending_cells(const Grid& grid, const fs::path& results_root,
                                   const StatusOptions& opt) {
  std::vector<RunSpec> out;
  for (const auto& c : grid.cells) {
    switch (cell_status(c, results_root, opt).state) {
      case CellState::done:
      case CellState::damaged:
      case CellState::stale:
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

size_t clear_run_dir(const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) return 0;
  const std::optional<platform::DirLock> lock = platform::DirLock::try_acquire(run_dir);
  if (!lock) {
    const platform::LockProbe p = platform::probe_lock(run_dir);
    throw Error(fmt::format("{} is being run by {} (run.lock): not clearing it", run_dir.string(),
                            p.holder.empty() ? "another process" : p.holder));
  }
  static const char* const files[] = {"result.json",   "checkpoint.bin", "trace.csv",
                                      "manifest.json", "error.json",     "stdout.log",
                                      "stderr.log",    "verified.json"};
  size_t removed = 0;
  for (const char* f : files) removed += fs::remove(run_dir / f, ec) ? 1 : 0;
  // Temporary files of interrupted atomic writes (<name>.tmp.<suffix>).
  std::vector<fs::path> tmp;
  for (const auto& e : fs::directory_iterator(run_dir, ec)) {
    if (e.path().filename().string().find(".tmp.") != std::string::npos) tmp.push_back(e.path());
  }
  for (const auto& p : tmp) removed += fs::remove(p, ec) ? 1 : 0;
  return removed;
}

std::vector<RunSpec> shard(const std::vector<RunSpec>& cells, int i, int n) {
  if (n < 1 || i < 0 || i >= n) {
    throw ConfigError(fmt::format("invalid shard {}/{}: need 0 <= i < n", i, n));
  }
  std::vector<RunSpec> out;
  for (size_t j = 0; j < cells.size(); ++j) {
    if (static_cast<int>(j % static_cast<size_t>(n)) == i) out.push_back(cells[j]);
  }
  return out;
}

std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto bad = [&]() {
    return ConfigError(fmt::format("invalid shard '{}': expected i/n with 0 <= i < n", text));
  };
  if (slash == std::string::npos) throw bad();
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  char* end = nullptr;
  const long i = std::strtol(a.c_str(), &end, 10);
  if (a.empty() || *end != '\0') throw bad();
  const long n = std::strtol(b.c_str(), &end, 10);
  if (b.empty() || *end != '\0') throw bad();
  if (n < 1 || i < 0 || i >= n || n > 1000000) throw bad();
  return {static_cast<int>(i), static_cast<int>(n)};
}

void write_error_json(const RunSpec& spec, const fs::path& results_root, const Failure& f) {
  util::Json j = util::Json::object();
  j.set("config_hash", spec.hash());
  j.set("cell", spec.label());
  j.set("reason", f.reason);
  j.set("exit_code", f.exit_code >= 0 ? util::Json(f.exit_code) : util::Json(nullptr));
  j.set("signal", f.signal > 0 ? util::Json(f.signal) : util::Json(nullptr));
  j.set("stderr_tail", f.stderr_tail);
  j.set("command", f.command);
  j.set("seconds", f.seconds);
  j.set("host", platform::hostname());
  j.set("finished_at", platform::now_iso8601());
  util::write_file_atomic(spec.run_dir(results_root) / "error.json", j.dump() + "\n");
}

std::string read_error_reason(const fs::path& error_json) {
  try {
    return util::json_string(util::read_json_object(error_json), "reason", error_json.string());
  } catch (const Error&) {
    return "";
  }
}

void write_grid_snapshot(const Grid& grid, const std::string& grid_text,
                         const fs::path& results_root) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "source" << YAML::Value << grid.file.string();
  out << YAML::Key << "profile" << YAML::Value << grid.profile;
  out << YAML::Key << "text" << YAML::Value << YAML::Literal << grid_text;
  out << YAML::EndMap;
  util::write_file_atomic(results_root / grid.name / ("snapshot-" + grid.profile + ".yaml"),
                          std::string(out.c_str()) + "\n");
}

std::vector<Grid> load_grid_snapshots(const fs::path& results_root) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& d : fs::directory_iterator(results_root, ec)) {
    if (!d.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(d.path(), ec)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("snapshot-", 0) == 0 && f.path().extension() == ".yaml") {
        files.push_back(f.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Grid> grids;
  for (const auto& f : files) {
    YAML::Node n;
    try {
      n = YAML::Load(util::read_file(f));
    } catch (const YAML::Exception& e) {
      throw ConfigError(fmt::format("{}: unreadable grid snapshot: {}", f.string(), e.what()));
    }
    if (!n.IsMap() || !n["source"] || !n["profile"] || !n["text"]) {
      throw ConfigError(fmt::format("{}: not a grid snapshot (source, profile, text)", f.string()));
    }
    grids.push_back(parse_grid(n["text"].Scalar(), n["source"].Scalar(), n["profile"].Scalar()));
  }
  return grids;
}

}  // namespace dkp::experiments
