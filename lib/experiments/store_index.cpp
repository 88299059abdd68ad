#include "experiments/store_index.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace dkp::experiments {

namespace fs = std::filesystem;

namespace {

bool is_hex16(const std::string& s) {
  if (s.size() != 16) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool is_sha256(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// An exclusive flock(2) on a directory, held while the object lives.
class DirFlock {
 public:
  explicit DirFlock(const fs::path& dir) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) {
      const std::string why = std::strerror(errno);
      if (fd_ >= 0) ::close(fd_);
      throw Error(fmt::format("cannot lock {} for its index: {}", dir.string(), why));
    }
  }
  ~DirFlock() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
  DirFlock(const DirFlock&) = delete;
  DirFlock& operator=(const DirFlock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

fs::path index_file(const fs::path& grid_dir) {
  return grid_dir / "index.tsv";
}

std::map<std::string, IndexEntry> read_store_index(const fs::path& grid_dir) {
  std::map<std::string, IndexEntry> out;
  const fs::path file = index_file(grid_dir);
  std::error_code ec;
  if (!fs::exists(file, ec)) return out;
  if (fs::is_symlink(file, ec)) throw DataError(fmt::format("{}: a symbolic link", file.string()));
  std::istringstream in(util::read_file(file));
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    std::istringstream f(line);
    std::string key, r, m, extra;
    std::getline(f, key, '\t');
    std::getline(f, r, '\t');
    std::getline(f, m, '\t');
    const auto slash = key.rfind('/');
    if (!is_sha256(r) || !is_sha256(m) || slash == std::string::npos ||
        !is_hex16(key.substr(slash + 1)) || std::getline(f, extra) ||
        !out.emplace(key, IndexEntry{r, m}).second) {
      throw DataError(fmt::format(
          "{}:{}: expected '<dataset>/split<k>/<hash> TAB <sha256> TAB <sha256>', once per cell",
          file.string(), n));
    }
  }
  return out;
}

std::shared_ptr<const std::map<std::string, IndexEntry>> cached_store_index(
    const fs::path& grid_dir) {
  using Index = std::map<std::string, IndexEntry>;
  using Stamp = std::pair<fs::file_time_type, uintmax_t>;
  static std::mutex mutex;
  static std::map<std::string, std::pair<Stamp, std::shared_ptr<const Index>>> cache;
  const fs::path file = index_file(grid_dir);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::make_shared<const Index>();
  const Stamp stamp{fs::last_write_time(file, ec), fs::file_size(file, ec)};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(file.string());
    if (it != cache.end() && it->second.first == stamp) return it->second.second;
  }
  auto index = std::make_shared<const Index>(read_store_index(grid_dir));
  std::lock_guard<std::mutex> lock(mutex);
  cache[file.string()] = {stamp, index};
  return index;
}

std::pair<fs::path, std::string> index_place(const fs::path& run_dir) {
  const fs::path dir = run_dir.lexically_normal();
  const fs::path d = dir.filename().empty() ? dir.parent_path() : dir;
  const std::string hash = d.filename().string();
  const std::string split = d.parent_path().filename().string();
  const std::string dataset = d.parent_path().parent_path().filename().string();
  if (!is_hex16(hash) || split.rfind("split", 0) != 0 || split.size() == 5 || dataset.empty()) {
    return {};
  }
  return {d.parent_path().parent_path().parent_path(), dataset + "/" + split + "/" + hash};
}

bool record_in_store_index(const fs::path& run_dir) {
  const auto [grid_dir, key] = index_place(run_dir);
  if (key.empty()) return false;
  const IndexEntry e{util::sha256_file(run_dir / "result.json"),
                     util::sha256_file(run_dir / "manifest.json")};
  DirFlock lock(grid_dir);
  auto index = read_store_index(grid_dir);
  index[key] = e;
  std::string text;
  for (const auto& [k, v] : index)
    text += k + "\t" + v.result_sha256 + "\t" + v.manifest_sha256 + "\n";
  util::write_file_atomic(index_file(grid_dir), text);
  return true;
}

std::string index_mismatch(const fs::path& run_dir,
                           const std::map<std::string, IndexEntry>& index) {
  const auto [grid_dir, key] = index_place(run_dir);
  if (key.empty()) return "";
  const auto it = index.find(key);
  if (it == index.end()) return "";
  std::error_code ec;
  for (const auto& [name, recorded] :
       {std::pair<std::string, std::string>{"result.json", it->second.result_sha256},
        {"manifest.json", it->second.manifest_sha256}}) {
    const fs::path f = run_dir / name;
    if (fs::is_symlink(f, ec)) return fmt::format("{} is a symbolic link", f.string());
    const std::string now = fs::exists(f, ec) ? util::sha256_file(f) : std::string("(absent)");
    if (now != recorded) {
      return fmt::format("{} was modified after dkp wrote it: SHA-256 {}, {} records {}",
                         f.string(), now, index_file(grid_dir).string(), recorded);
    }
  }
  return "";
}

}  // namespace dkp::experiments
