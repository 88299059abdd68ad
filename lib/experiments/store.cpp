#include "experiments/store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
#include "util/parse.hpp"

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
  }
  return "?";
}

namespace {

YAML::Node load_json_object(const fs::path& file) {
  YAML::Node n;
  try {
    n = YAML::Load(util::read_file(file));
  } catch (const YAML::Exception& e) {
    throw DataError(fmt::format("{}: not valid JSON: {}", file.string(), e.what()));
  }
  if (!n.IsMap()) throw DataError(fmt::format("{}: expected a JSON object", file.string()));
  return n;
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostname() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

std::optional<std::string> result_hash(const fs::path& result_json) {
  std::error_code ec;
  if (!fs::exists(result_json, ec)) return std::nullopt;
  try {
    const YAML::Node n = load_json_object(result_json);
    if (n["config_hash"] && n["config_hash"].IsScalar()) return n["config_hash"].Scalar();
    return std::string();
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::map<std::string, double> read_result_values(const fs::path& result_json) {
  const YAML::Node n = load_json_object(result_json);
  std::map<std::string, double> out;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar() || !it->second.IsScalar()) continue;
    // Quoted strings (e.g. "dataset": "boston") are not numbers; yaml-cpp tags them "!".
    if (it->second.Tag() == "!") continue;
    if (const auto v = util::parse_double(it->second.Scalar())) out[it->first.Scalar()] = *v;
  }
  return out;
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
  for (const auto& g : grids) {
    const fs::path r =
        g / spec.dataset / ("split" + std::to_string(spec.split)) / spec.hash() / "result.json";
    if (result_hash(r) == spec.hash()) return r;
  }
  return std::nullopt;
}

}  // namespace

CellStatus cell_status(const RunSpec& spec, const fs::path& results_root) {
  const fs::path dir = spec.run_dir(results_root);
  std::error_code ec;
  CellStatus st;
  const auto h = result_hash(dir / "result.json");
  if (h && *h == spec.hash()) {
    st.state = CellState::done;
    st.result = dir / "result.json";
    return st;
  }
  if (const auto other = result_in_other_grid(spec, results_root)) {
    st.state = CellState::done;
    st.result = *other;
    st.detail =
        fmt::format("computed under grid {}", fs::relative(*other, results_root).begin()->string());
    return st;
  }
  if (h) {
    st.detail = h->empty() ? "result.json has no config_hash (ignored)"
                           : fmt::format("result.json has config_hash {} (stale, ignored)", *h);
  } else if (fs::exists(dir / "result.json", ec)) {
    st.detail = "result.json is unreadable (ignored)";
  }
  if (fs::exists(dir / "error.json", ec)) {
    st.state = CellState::failed;
    const std::string reason = read_error_reason(dir / "error.json");
    st.detail = reason.empty() ? "see error.json" : reason;
    return st;
  }
  if (fs::exists(dir / "checkpoint.bin", ec) || fs::exists(dir / "manifest.json", ec)) {
    st.state = CellState::running;
    // How far it has got (or had got, if it was stopped): its training trace's last row.
    if (fs::exists(dir / "trace.csv", ec)) {
      try {
        const auto rows =
            training::parse_trace_csv(util::read_file(dir / "trace.csv"), "trace.csv");
        if (!rows.empty()) {
          st.detail =
              fmt::format("step {} of {} (trace.csv)", rows.back().step, spec.protocol.steps);
        }
      } catch (const DataError& e) {
        st.detail = e.what();
      }
    }
    return st;
  }
  st.state = CellState::missing;
  return st;
}

std::vector<RunSpec> pending_cells(const Grid& grid, const fs::path& results_root) {
  std::vector<RunSpec> out;
  for (const auto& c : grid.cells) {
    if (cell_status(c, results_root).state != CellState::done) out.push_back(c);
  }
  return out;
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
  j.set("host", hostname());
  j.set("finished_at", now_iso8601());
  util::write_file_atomic(spec.run_dir(results_root) / "error.json", j.dump() + "\n");
}

std::string read_error_reason(const fs::path& error_json) {
  try {
    const YAML::Node n = load_json_object(error_json);
    if (n["reason"] && n["reason"].IsScalar()) return n["reason"].Scalar();
  } catch (const Error&) {
  }
  return "";
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
