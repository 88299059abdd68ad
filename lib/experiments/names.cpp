#include "experiments/names.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "data/datasets.hpp"
#include "data/mnist.hpp"
#include "data/toy.hpp"
#include "data/uci.hpp"
#include "models/registry.hpp"

namespace dkp::experiments {

const std::vector<std::string>& known_models() {
  static const std::vector<std::string> names = models::model_names();
  return names;
}

const std::vector<std::string>& known_kernels() {
  static const std::vector<std::string> names = models::kernel_names();
  return names;
}

const std::vector<std::string>& known_families() {
  static const std::vector<std::string> families = {
      "dkp-uci",  "dkp-mnist",  "gw-uci",          "agw-uci",       "agw-runtime",
      "dsvi-uci", "dsvi-mnist", "dsvi-rectangles", "compositional", "generic"};
  return families;
}

// A dataset's canonical name: MNIST's, or the UCI short name of any accepted spelling (throws
// ConfigError listing the known names).
std::string canonical_dataset(const std::string& name) {
  return data::dataset_info(name).name;
}

const std::vector<std::string> kWidthRules = {"input", "min(input,30)"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

const std::vector<std::string> kPixelRules = {"unit", "standard"};

bool is_width_integer(const std::string& w) {
  if (w.empty() || w.size() > 9) return false;
  for (char c : w)
    if (c < '0' || c > '9') return false;
  return std::stol(w) > 0;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

int uci_split_count(const std::string& dataset) {
  return data::dataset_info(dataset).splits;
}

std::string format_double(double x) {
  return fmt::format("{}", x);
}

}  // namespace dkp::experiments
