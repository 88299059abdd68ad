#include "training/parameters.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "training/exact_io.hpp"
#include "util/error.hpp"

namespace dkp::training {

namespace {

constexpr const char* kMagic = "dkp-parameters";
constexpr const char* kVersion = "v1";

double softplus(double u) {
  return u > 0.0 ? u + std::log1p(std::exp(-u)) : std::log1p(std::exp(u));
}

double sigmoid(double u) {
  if (u >= 0.0) return 1.0 / (1.0 + std::exp(-u));
  const double e = std::exp(u);
  return e / (1.0 + e);
}

template <class F>
arma::mat map(const arma::mat& x, F f) {
  arma::mat out(x.n_rows, x.n_cols);
  for (arma::uword i = 0; i < x.n_elem; ++i) out[i] = f(x[i]);
  return out;
}

std::string shape_str(const arma::mat& m) {
  return fmt::format("{}x{}", m.n_rows, m.n_cols);
}

}  // namespace

std::string_view transform_name(Transform t) {
  switch (t) {
    case Transform::kIdentity:
      return "identity";
    case Transform::kLog:
      return "log";
    case Transform::kSoftplus:
      return "softplus";
    case Transform::kSigmoid:
      return "sigmoid";
  }
  return "unknown";
}

Transform transform_from_name(std::string_view name) {
  for (Transform t :
       {Transform::kIdentity, Transform::kLog, Transform::kSoftplus, Transform::kSigmoid}) {
    if (transform_name(t) == name) return t;
  }
  throw ConfigError(fmt::format(
      "unknown parameter transform '{}' (expected identity, log, softplus or sigmoid)", name));
}

double constrain(Transform t, double u) {
  switch (t) {
    case Transform::kIdentity:
      return u;
    case Transform::kLog:
      return std::exp(u);
    case Transform::kSoftplus:
      return softplus(u);
    case Transform::kSigmoid:
      return sigmoid(u);
  }
  return u;
}

double unconstrain(Transform t, double c) {
  const auto fail = [&](const char* range) {
    return ConfigError(fmt::format("transform '{}': value {} is outside its range {}",
                                   transform_name(t), c, range));
  };
  if (!std::isfinite(c)) throw fail("(finite values)");
  switch (t) {
    case Transform::kIdentity:
      return c;
    case Transform::kLog:
      if (!(c > 0.0)) throw fail("(0, inf)");
      return std::log(c);
    case Transform::kSoftplus:
      if (!(c > 0.0)) throw fail("(0, inf)");
      return c + std::log(-std::expm1(-c));
    case Transform::kSigmoid:
      if (!(c > 0.0 && c < 1.0)) throw fail("(0, 1)");
      return std::log(c) - std::log1p(-c);
  }
  return c;
}

double constrain_derivative(Transform t, double u) {
  switch (t) {
    case Transform::kIdentity:
      return 1.0;
    case Transform::kLog:
      return std::exp(u);
    case Transform::kSoftplus:
      return sigmoid(u);
    case Transform::kSigmoid: {
      // c (1 - c) = sigmoid(u) sigmoid(-u), accurate for large |u|.
      return sigmoid(u) * sigmoid(-u);
    }
  }
  return 1.0;
}

arma::mat constrain(Transform t, const arma::mat& u) {
  return map(u, [t](double x) { return constrain(t, x); });
}

arma::mat unconstrain(Transform t, const arma::mat& c) {
  return map(c, [t](double x) { return unconstrain(t, x); });
}

arma::mat constrain_derivative(Transform t, const arma::mat& u) {
  return map(u, [t](double x) { return constrain_derivative(t, x); });
}

void ParameterRegistry::add(ParameterSpec spec) {
  check_name(spec.name, "ParameterRegistry::add");
  if (specs_.count(spec.name)) {
    throw ConfigError(
        fmt::format("ParameterRegistry::add: parameter '{}' is declared twice", spec.name));
  }
  if (spec.initial.n_rows != spec.rows || spec.initial.n_cols != spec.cols) {
    throw ConfigError(fmt::format(
        "ParameterRegistry::add: parameter '{}' is declared {}x{} but its initial value is {}",
        spec.name, spec.rows, spec.cols, shape_str(spec.initial)));
  }
  try {
    (void)unconstrain(spec.transform, spec.initial);
  } catch (const ConfigError& e) {
    throw ConfigError(fmt::format("ParameterRegistry::add: initial value of parameter '{}': {}",
                                  spec.name, e.what()));
  }
  order_.push_back(spec.name);
  const std::string name = spec.name;
  specs_.emplace(name, std::move(spec));
}

void ParameterRegistry::add(const std::string& name, arma::uword rows, arma::uword cols,
                            Transform transform, double initial, const std::string& doc) {
  ParameterSpec s;
  s.name = name;
  s.rows = rows;
  s.cols = cols;
  s.transform = transform;
  s.initial = arma::mat(rows, cols);
  s.initial.fill(initial);
  s.doc = doc;
  add(std::move(s));
}

bool ParameterRegistry::contains(const std::string& name) const {
  return specs_.count(name) > 0;
}

const ParameterSpec& ParameterRegistry::spec(const std::string& name) const {
  const auto it = specs_.find(name);
  if (it == specs_.end()) {
    throw Error(fmt::format("parameter '{}' is not declared", name));
  }
  return it->second;
}

ParameterSet ParameterRegistry::initial_unconstrained() const {
  ParameterSet out;
  for (const auto& [name, s] : specs_) out.emplace(name, unconstrain(s.transform, s.initial));
  return out;
}

arma::mat ParameterRegistry::constrained(const std::string& name, const arma::mat& u) const {
  const ParameterSpec& s = spec(name);
  if (u.n_rows != s.rows || u.n_cols != s.cols) {
    throw DataError(fmt::format("parameter '{}' is declared {}x{} but the value given is {}", name,
                                s.rows, s.cols, shape_str(u)));
  }
  return constrain(s.transform, u);
}

ParameterSet ParameterRegistry::constrained(const ParameterSet& u) const {
  check(u, "unconstrained parameter set");
  ParameterSet out;
  for (const auto& [name, value] : u) out.emplace(name, constrain(spec(name).transform, value));
  return out;
}

ParameterSet ParameterRegistry::unconstrained(const ParameterSet& c) const {
  check(c, "constrained parameter set");
  ParameterSet out;
  for (const auto& [name, value] : c) {
    try {
      out.emplace(name, unconstrain(spec(name).transform, value));
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("parameter '{}': {}", name, e.what()));
    }
  }
  return out;
}

ParameterSet ParameterRegistry::unconstrained_gradient(const ParameterSet& u,
                                                       const ParameterSet& grad_c) const {
  check(u, "unconstrained parameter set");
  check(grad_c, "gradient set");
  ParameterSet out;
  for (const auto& [name, value] : u) {
    out.emplace(name, grad_c.at(name) % constrain_derivative(spec(name).transform, value));
  }
  return out;
}

void ParameterRegistry::check(const ParameterSet& values, std::string_view what) const {
  for (const auto& name : order_) {
    const auto it = values.find(name);
    if (it == values.end()) {
      throw DataError(fmt::format("{}: parameter '{}' is missing", what, name));
    }
    const ParameterSpec& s = specs_.at(name);
    if (it->second.n_rows != s.rows || it->second.n_cols != s.cols) {
      throw DataError(fmt::format("{}: parameter '{}' is {} but is declared {}x{}", what, name,
                                  shape_str(it->second), s.rows, s.cols));
    }
  }
  for (const auto& [name, value] : values) {
    if (!specs_.count(name)) {
      throw DataError(fmt::format("{}: parameter '{}' is not declared by this model", what, name));
    }
  }
}

std::string ParameterRegistry::save(const ParameterSet& u) const {
  check(u, "ParameterRegistry::save");
  std::ostringstream os;
  os << kMagic << ' ' << kVersion << '\n' << "count " << order_.size() << '\n';
  for (const auto& name : order_) {
    const arma::mat& value = u.at(name);
    os << "param " << name << ' ' << transform_name(specs_.at(name).transform) << ' '
       << value.n_rows << ' ' << value.n_cols;
    for (arma::uword i = 0; i < value.n_elem; ++i) os << ' ' << format_exact(value[i]);
    os << '\n';
  }
  os << "end\n";
  return os.str();
}

ParameterSet ParameterRegistry::load(const std::string& text) const {
  constexpr const char* where = "parameter checkpoint";
  std::istringstream is(text);
  expect_token(is, kMagic, where);
  expect_token(is, kVersion, where);
  expect_token(is, "count", where);
  const uint64_t count = read_u64(is, "the parameter count", where);
  ParameterSet out;
  for (uint64_t k = 0; k < count; ++k) {
    expect_token(is, "param", where);
    std::string name, transform;
    if (!(is >> name >> transform)) {
      throw DataError(fmt::format("{}: truncated entry {} of {}", where, k + 1, count));
    }
    const std::string ctx = fmt::format("{}, parameter '{}'", where, name);
    const auto it = specs_.find(name);
    if (it == specs_.end()) {
      throw DataError(fmt::format(
          "{}: the checkpoint has parameter '{}', which this model does not declare", where, name));
    }
    const ParameterSpec& s = it->second;
    if (transform != transform_name(s.transform)) {
      throw DataError(fmt::format("{}: stored with transform '{}' but the model declares '{}'", ctx,
                                  transform, transform_name(s.transform)));
    }
    const uint64_t rows = read_u64(is, "a row count", ctx);
    const uint64_t cols = read_u64(is, "a column count", ctx);
    if (rows != s.rows || cols != s.cols) {
      throw DataError(fmt::format("{}: stored as {}x{} but the model declares {}x{}", ctx, rows,
                                  cols, s.rows, s.cols));
    }
    if (out.count(name)) throw DataError(fmt::format("{}: appears twice", ctx));
    arma::mat value(s.rows, s.cols);
    std::string tok;
    for (arma::uword i = 0; i < value.n_elem; ++i) {
      if (!(is >> tok)) {
        throw DataError(fmt::format("{}: truncated after {} of {} values", ctx, i, value.n_elem));
      }
      value[i] = parse_exact(tok, ctx);
    }
    out.emplace(name, std::move(value));
  }
  expect_token(is, "end", where);
  expect_end_of_input(is, where);
  check(out, where);  // names the first declared parameter the checkpoint lacks
  return out;
}

std::string ParameterRegistry::describe() const {
  std::string out;
  for (const auto& name : order_) {
    const ParameterSpec& s = specs_.at(name);
    const double first = s.initial.n_elem > 0 ? s.initial[0] : 0.0;
    out += fmt::format("{:<24} {:>9} {:<9} init {:<12g} {}\n", name,
                       fmt::format("{}x{}", s.rows, s.cols), transform_name(s.transform), first,
                       s.doc);
  }
  return out;
}

}  // namespace dkp::training
