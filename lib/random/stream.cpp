#include "random/stream.hpp"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::random {

namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // 2^64 / golden ratio (SplitMix64 increment)
constexpr const char* kStateMagic = "dkp-mt19937_64-v1";

// Draws the two parts of a standard Gamma(shape) sample: log of the boost factor (0 for
// shape >= 1) and the Marsaglia-Tsang draw d*v of Gamma(max(shape, shape + 1)). The order of
// random numbers follows torch 1.13's sample_gamma: the boost uniform first, then the rejection
// loop (normal, then uniform, per trial).
std::pair<double, double> gamma_parts(Stream& s, double shape) {
  if (!(shape > 0.0) || !std::isfinite(shape)) {
    throw Error(
        fmt::format("random::standard_gamma: shape must be positive and finite, got {}", shape));
  }
  auto& eng = s.engine();
  boost::random::uniform_01<double> unif;
  boost::random::normal_distribution<double> norm(0.0, 1.0);
  double log_scale = 0.0;
  double alpha = shape;
  if (alpha < 1.0) {
    // U on (0, 1]: log(U) is finite.
    log_scale = std::log(1.0 - unif(eng)) / alpha;
    alpha += 1.0;
  }
  const double d = alpha - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, y;
    do {
      x = norm(eng);
      y = 1.0 + c * x;
    } while (y <= 0.0);
    const double v = y * y * y;
    const double u = 1.0 - unif(eng);  // (0, 1]
    const double xx = x * x;
    if (u < 1.0 - 0.0331 * xx * xx) return {log_scale, d * v};
    if (std::log(u) < 0.5 * xx + d * (1.0 - v + std::log(v))) return {log_scale, d * v};
  }
}

}  // namespace

uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t hash_string(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a offset basis
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ULL;  // FNV prime
  }
  // Length in as well, then a full-avalanche finaliser.
  return splitmix64_mix(h ^ (static_cast<uint64_t>(s.size()) * kGolden));
}

uint64_t derive_seed(uint64_t seed, std::string_view purpose, uint64_t index) {
  uint64_t h = splitmix64_mix(seed + kGolden);
  h = splitmix64_mix(h ^ hash_string(purpose));
  h = splitmix64_mix(h + kGolden * 2 + splitmix64_mix(index + kGolden * 3));
  return h;
}

Stream::Stream(uint64_t seed) : seed_(seed), engine_(derive_seed(seed, "stream", 0)) {}

Stream Stream::child(std::string_view purpose, uint64_t index) const {
  return Stream(derive_seed(seed_, purpose, index));
}

std::string Stream::state() const {
  std::ostringstream os;
  // The trailing "end" marks a complete state (and keeps the engine's reader off end-of-file,
  // where its trailing std::ws would set failbit).
  os << kStateMagic << ' ' << seed_ << ' ' << engine_ << " end";
  return os.str();
}

Stream Stream::from_state(const std::string& text) {
  std::istringstream is(text);
  std::string magic;
  uint64_t seed = 0;
  is >> magic >> seed;
  if (!is || magic != kStateMagic) {
    throw DataError(
        fmt::format("random::Stream::from_state: not a stream state (expected '{} <seed> <engine> "
                    "end', got '{}')",
                    kStateMagic, text.substr(0, 60)));
  }
  Stream out(seed);
  is >> out.engine_;
  std::string end;
  is >> end;
  if (is.fail() || end != "end") {
    throw DataError("random::Stream::from_state: truncated or malformed engine state");
  }
  is >> std::ws;
  if (!is.eof()) {
    throw DataError("random::Stream::from_state: trailing characters after the engine state");
  }
  return out;
}

double uniform(Stream& s) {
  boost::random::uniform_01<double> unif;
  return unif(s.engine());
}

double uniform(Stream& s, double lo, double hi) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi)) {
    throw Error(fmt::format("random::uniform: need finite lo < hi, got [{}, {})", lo, hi));
  }
  const double u = uniform(s);
  const double x = lo + (hi - lo) * u;
  return x < hi ? x : lo;  // rounding can reach hi only when u is within an ulp of 1
}

double normal(Stream& s) {
  boost::random::normal_distribution<double> norm(0.0, 1.0);
  return norm(s.engine());
}

arma::mat normal_matrix(Stream& s, arma::uword rows, arma::uword cols) {
  arma::mat out(rows, cols, arma::fill::none);
  boost::random::normal_distribution<double> norm(0.0, 1.0);
  auto& eng = s.engine();
  for (arma::uword i = 0; i < out.n_elem; ++i) out[i] = norm(eng);
  return out;
}

arma::mat uniform_matrix(Stream& s, arma::uword rows, arma::uword cols) {
  arma::mat out(rows, cols, arma::fill::none);
  boost::random::uniform_01<double> unif;
  auto& eng = s.engine();
  for (arma::uword i = 0; i < out.n_elem; ++i) out[i] = unif(eng);
  return out;
}

arma::uvec permutation(Stream& s, arma::uword n) {
  arma::uvec p(n);
  for (arma::uword i = 0; i < n; ++i) p[i] = i;
  auto& eng = s.engine();
  for (arma::uword i = n; i > 1; --i) {
    boost::random::uniform_int_distribution<arma::uword> pick(0, i - 1);
    std::swap(p[i - 1], p[pick(eng)]);
  }
  return p;
}

double standard_gamma(Stream& s, double shape) {
  const auto [log_scale, dv] = gamma_parts(s, shape);
  const double x = (shape < 1.0) ? std::exp(log_scale + std::log(dv)) : dv;
  return std::max(x, std::numeric_limits<double>::min());
}

double standard_gamma_log(Stream& s, double shape) {
  const auto [log_scale, dv] = gamma_parts(s, shape);
  return log_scale + std::log(dv);
}

double gamma(Stream& s, double shape, double rate) {
  if (!(rate > 0.0) || !std::isfinite(rate)) {
    throw Error(fmt::format("random::gamma: rate must be positive and finite, got {}", rate));
  }
  return standard_gamma(s, shape) / rate;
}

arma::mat gamma_matrix(Stream& s, const arma::mat& shape, const arma::mat& rate) {
  if (shape.n_rows != rate.n_rows || shape.n_cols != rate.n_cols) {
    throw Error(fmt::format("random::gamma_matrix: shape is {}x{} but rate is {}x{}", shape.n_rows,
                            shape.n_cols, rate.n_rows, rate.n_cols));
  }
  arma::mat out(shape.n_rows, shape.n_cols, arma::fill::none);
  for (arma::uword i = 0; i < out.n_elem; ++i) out[i] = gamma(s, shape[i], rate[i]);
  return out;
}

}  // namespace dkp::random
