// Parameter registry (DESIGN.md section 4, "parameters unconstrained"): models declare each
// parameter once, with its name, shape, transform, initial (constrained) value and a doc string
// citing where that value comes from. The optimiser works on unconstrained values u; the model
// uses constrained values c = T(u). Checkpoints store u exactly and are checked against the
// declarations when loaded.
//
// Transforms, c = T(u), and their inverses and derivatives dc/du:
//   identity   c = u                      u = c                       dc/du = 1
//   log        c = exp(u)       (c > 0)   u = log(c)                  dc/du = exp(u) = c
//   softplus   c = log(1 + e^u) (c > 0)   u = c + log(-expm1(-c))     dc/du = sigmoid(u)
//   sigmoid    c = 1/(1 + e^-u) (0<c<1)   u = log(c) - log1p(-c)      dc/du = c (1 - c)
// ("log" names the storage: the parameter is stored as its logarithm.) All are evaluated in
// overflow-free forms.
#pragma once

#include <armadillo>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "training/adam.hpp"

namespace dkp::training {

enum class Transform { kIdentity, kLog, kSoftplus, kSigmoid };

/// "identity", "log", "softplus", "sigmoid".
std::string_view transform_name(Transform t);
/// Inverse of transform_name; dkp::ConfigError for an unknown name.
Transform transform_from_name(std::string_view name);

/// c = T(u), elementwise.
arma::mat constrain(Transform t, const arma::mat& u);
/// u = T^-1(c), elementwise. Throws dkp::ConfigError if a value is outside T's range (or not
/// finite).
arma::mat unconstrain(Transform t, const arma::mat& c);
/// dc/du at u, elementwise (for the chain rule dL/du = dL/dc % dc/du).
arma::mat constrain_derivative(Transform t, const arma::mat& u);

double constrain(Transform t, double u);
double unconstrain(Transform t, double c);
double constrain_derivative(Transform t, double u);

/// One declared parameter.
struct ParameterSpec {
  std::string name;      ///< unique; no whitespace
  arma::uword rows = 1;  ///< shape
  arma::uword cols = 1;
  Transform transform = Transform::kIdentity;
  arma::mat initial;  ///< initial CONSTRAINED value, rows x cols
  std::string doc;    ///< meaning and source of the initial value (paper, reference code)
};

class ParameterRegistry {
 public:
  /// Declares a parameter. Throws dkp::ConfigError on a duplicate or malformed name, an initial
  /// value of the wrong shape, or an initial value outside the transform's range.
  void add(ParameterSpec spec);
  /// Convenience: a rows x cols parameter with every element initialised to `initial`.
  void add(const std::string& name, arma::uword rows, arma::uword cols, Transform transform,
           double initial, const std::string& doc);

  bool contains(const std::string& name) const;
  /// Throws dkp::Error naming the parameter when it is not declared.
  const ParameterSpec& spec(const std::string& name) const;
  /// Names in declaration order.
  const std::vector<std::string>& names() const { return order_; }
  size_t size() const { return order_.size(); }

  /// Unconstrained values of the initial constrained values.
  ParameterSet initial_unconstrained() const;
  /// c = T(u) for one parameter / for all (u must match the declarations, see check()).
  arma::mat constrained(const std::string& name, const arma::mat& u) const;
  ParameterSet constrained(const ParameterSet& u) const;
  /// u = T^-1(c) for all parameters.
  ParameterSet unconstrained(const ParameterSet& c) const;
  /// Chain rule: dL/du = dL/dc % dc/du for all parameters, given u and dL/dc.
  ParameterSet unconstrained_gradient(const ParameterSet& u, const ParameterSet& grad_c) const;

  /// Throws dkp::DataError unless `values` has exactly the declared names, with the declared
  /// shapes; the message names the first missing, unexpected or mis-shaped parameter.
  void check(const ParameterSet& values, std::string_view what = "parameter set") const;

  /// Exact text checkpoint of unconstrained values: names, shapes, transforms and values
  /// (hexadecimal floating point):
  ///   dkp-parameters v1 / count <n> / per parameter "param <name> <transform> <rows> <cols>
  ///   <values>" / end
  std::string save(const ParameterSet& u) const;
  /// Reads save()'s output and checks it against the declarations: the same names, shapes and
  /// transforms (dkp::DataError with a clear message otherwise).
  ParameterSet load(const std::string& text) const;

  /// A table: name, shape, transform, initial value (first element if not a scalar), doc.
  std::string describe() const;

 private:
  std::vector<std::string> order_;
  std::map<std::string, ParameterSpec> specs_;
};

}  // namespace dkp::training
