#include "training/adam.hpp"

#include <cmath>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "training/exact_io.hpp"
#include "util/error.hpp"

namespace dkp::training {

namespace {

constexpr const char* kMagic = "dkp-adam-state";
constexpr const char* kVersion = "v1";

bool same_shape(const arma::mat& a, const arma::mat& b) {
  return a.n_rows == b.n_rows && a.n_cols == b.n_cols;
}

bool bitwise_equal(const ParameterSet& a, const ParameterSet& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || !same_shape(ia->second, ib->second)) return false;
    for (arma::uword i = 0; i < ia->second.n_elem; ++i) {
      const double x = ia->second[i], y = ib->second[i];
      if (!(x == y && std::signbit(x) == std::signbit(y)) && !(std::isnan(x) && std::isnan(y))) {
        return false;
      }
    }
  }
  return true;
}

void check_consistent(const AdamState& s, const char* where) {
  if (s.m.size() != s.v.size()) {
    throw DataError(fmt::format("{}: {} first-moment but {} second-moment entries", where,
                                s.m.size(), s.v.size()));
  }
  for (const auto& [name, m] : s.m) {
    const auto it = s.v.find(name);
    if (it == s.v.end()) {
      throw DataError(fmt::format("{}: parameter '{}' has m but no v", where, name));
    }
    if (!same_shape(m, it->second)) {
      throw DataError(fmt::format("{}: parameter '{}' has m of size {}x{} but v of size {}x{}",
                                  where, name, m.n_rows, m.n_cols, it->second.n_rows,
                                  it->second.n_cols));
    }
  }
}

void check_unit_interval(double x, const char* what) {
  if (!(x >= 0.0 && x < 1.0)) {
    throw ConfigError(fmt::format("Adam: {} must be in [0, 1), got {}", what, x));
  }
}

}  // namespace

bool operator==(const AdamState& a, const AdamState& b) {
  return a.t == b.t && bitwise_equal(a.m, b.m) && bitwise_equal(a.v, b.v) && a.start == b.start;
}

std::string AdamState::serialise() const {
  check_consistent(*this, "AdamState::serialise");
  std::ostringstream os;
  os << kMagic << ' ' << kVersion << '\n' << "t " << t << '\n' << "count " << m.size() << '\n';
  for (const auto& [name, mm] : m) {
    write_named_matrix(os, "m", name, mm);
    write_named_matrix(os, "v", name, v.at(name));
  }
  for (const auto& [name, k] : start) os << "start " << name << ' ' << k << '\n';
  os << "end\n";
  return os.str();
}

AdamState AdamState::deserialise(const std::string& text) {
  constexpr const char* where = "AdamState::deserialise";
  std::istringstream is(text);
  expect_token(is, kMagic, where);
  expect_token(is, kVersion, where);
  AdamState s;
  expect_token(is, "t", where);
  s.t = read_u64(is, "the step count", where);
  expect_token(is, "count", where);
  const uint64_t count = read_u64(is, "the parameter count", where);
  for (uint64_t k = 0; k < count; ++k) {
    NamedMatrix m = read_named_matrix(is, "m", where);
    NamedMatrix v = read_named_matrix(is, "v", where);
    if (m.name != v.name) {
      throw DataError(fmt::format("{}: m of '{}' is followed by v of '{}'", where, m.name, v.name));
    }
    if (s.m.count(m.name)) {
      throw DataError(fmt::format("{}: parameter '{}' appears twice", where, m.name));
    }
    s.m.emplace(m.name, std::move(m.value));
    s.v.emplace(v.name, std::move(v.value));
  }
  std::string token;
  while (is >> token && token == "start") {
    std::string name;
    if (!(is >> name)) throw DataError(fmt::format("{}: a start line without a name", where));
    const uint64_t k = read_u64(is, "a start step", where);
    if (!s.m.count(name) || k > s.t || !s.start.emplace(name, k).second) {
      throw DataError(fmt::format(
          "{}: start {} {} names no parameter of the state, a step beyond {}, or a second start",
          where, name, k, s.t));
    }
  }
  if (token != "end") {
    throw DataError(fmt::format("{}: expected 'end', found '{}'", where, token));
  }
  expect_end_of_input(is, where);
  check_consistent(s, where);
  return s;
}

Adam::Adam(double beta1, double beta2, double eps) : beta1_(0.9), beta2_(0.999), eps_(1e-8) {
  set_beta1(beta1);
  set_beta2(beta2);
  set_eps(eps);
}

void Adam::set_beta1(double beta1) {
  check_unit_interval(beta1, "beta1");
  beta1_ = beta1;
}

void Adam::set_beta2(double beta2) {
  check_unit_interval(beta2, "beta2");
  beta2_ = beta2;
}

void Adam::set_eps(double eps) {
  if (!(eps > 0.0) || !std::isfinite(eps)) {
    throw ConfigError(fmt::format("Adam: eps must be positive and finite, got {}", eps));
  }
  eps_ = eps;
}

void Adam::set_state(AdamState state) {
  check_consistent(state, "Adam::set_state");
  state_ = std::move(state);
}

void Adam::step(ParameterSet& params, const ParameterSet& grads, double lr,
                const std::set<std::string>& held) {
  if (!(lr >= 0.0) || !std::isfinite(lr)) {
    throw Error(
        fmt::format("Adam::step: learning rate must be non-negative and finite, got {}", lr));
  }
  // Validate everything before changing anything.
  for (const auto& [name, g] : grads) {
    if (!params.count(name)) {
      throw Error(fmt::format("Adam::step: gradient for unknown parameter '{}'", name));
    }
  }
  for (const auto& [name, theta] : params) {
    const auto it = grads.find(name);
    if (it == grads.end()) {
      throw Error(fmt::format("Adam::step: no gradient for parameter '{}'", name));
    }
    const arma::mat& g = it->second;
    if (!same_shape(g, theta)) {
      throw Error(fmt::format("Adam::step: gradient of '{}' is {}x{} but the parameter is {}x{}",
                              name, g.n_rows, g.n_cols, theta.n_rows, theta.n_cols));
    }
    if (!g.is_finite()) {
      throw Error(fmt::format("Adam::step: non-finite gradient for parameter '{}'", name));
    }
    const auto im = state_.m.find(name);
    if (im != state_.m.end() && !same_shape(im->second, theta)) {
      throw Error(fmt::format(
          "Adam::step: parameter '{}' is {}x{} but its Adam moments are {}x{} (state from "
          "another model?)",
          name, theta.n_rows, theta.n_cols, im->second.n_rows, im->second.n_cols));
    }
  }

  const uint64_t t = state_.t + 1;
  for (auto& [name, theta] : params) {
    if (held.count(name)) continue;
    const arma::mat& g = grads.at(name);
    auto [im, new_m] = state_.m.try_emplace(name, theta.n_rows, theta.n_cols, arma::fill::zeros);
    auto [iv, new_v] = state_.v.try_emplace(name, theta.n_rows, theta.n_cols, arma::fill::zeros);
    (void)new_v;
    if (new_m && state_.t > 0) state_.start[name] = state_.t;
    const auto is = state_.start.find(name);
    const uint64_t own = is == state_.start.end() ? t : t - is->second;
    const double bias_correction1 = 1.0 - std::pow(beta1_, static_cast<double>(own));
    const double bias_correction2 = 1.0 - std::pow(beta2_, static_cast<double>(own));
    const double step_size = lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    arma::mat& m = im->second;
    arma::mat& v = iv->second;
    m = beta1_ * m + (1.0 - beta1_) * g;
    v = beta2_ * v + (1.0 - beta2_) * (g % g);
    theta -= step_size * (m / (arma::sqrt(v) / bias_correction2_sqrt + eps_));
  }
  state_.t = t;
}

}  // namespace dkp::training
