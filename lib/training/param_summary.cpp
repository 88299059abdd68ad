#include "training/param_summary.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "layers/svgp.hpp"
#include "training/parameters.hpp"
#include "util/error.hpp"

namespace dkp::training {

namespace {

std::string last_component(const std::string& name) {
  const auto dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

arma::mat shown(DisplayScale s, const arma::mat& stored) {
  switch (s) {
    case DisplayScale::kExp:
      return constrain(Transform::kLog, stored);
    case DisplayScale::kLogistic:
      return constrain(Transform::kSigmoid, stored);
    case DisplayScale::kSoftplus:
      return constrain(Transform::kSoftplus, stored) + layers::kPositiveLower;
    case DisplayScale::kStored:
      break;
  }
  return stored;
}

// The component before the last ("" when there is none).
std::string parent_component(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  const auto before = name.rfind('.', dot - 1);
  const size_t from = before == std::string::npos ? 0 : before + 1;
  return name.substr(from, dot - from);
}

std::string shape(const ParamSummary& r) {
  return fmt::format("{}x{}", r.rows, r.cols);
}

}  // namespace

DisplayScale display_scale(const std::string& name) {
  const std::string last = last_component(name);
  if (last.rfind("log_", 0) == 0) return DisplayScale::kExp;
  if (last.rfind("logit_", 0) == 0) return DisplayScale::kLogistic;
  // The SVGP layers' GPflow names (layers/svgp.hpp), stored through positive().
  const std::string parent = parent_component(name);
  if (parent == "kern" && (last == "variance" || last == "lengthscales" || last == "white"))
    return DisplayScale::kSoftplus;
  if (parent == "likelihood" && last == "variance") return DisplayScale::kSoftplus;
  return DisplayScale::kStored;
}

DisplayScale table_scale(const std::string& name) {
  return last_component(name) == "L_scale" ? DisplayScale::kExp : display_scale(name);
}

double shown_value(const std::string& name, double u) {
  return shown(display_scale(name), arma::mat(1, 1, arma::fill::value(u)))(0, 0);
}

util::Json scalar_parameters_json(const ParameterSet& params) {
  util::Json out = util::Json::object();
  for (const auto& [name, value] : params) {
    if (value.n_elem != 1) continue;
    const double u = value(0, 0);
    const DisplayScale scale = display_scale(name);
    if (scale == DisplayScale::kSoftplus) {
      out.set(name, shown_value(name, u));
      out.set(name + ".unconstrained", u);
      continue;
    }
    out.set(name, u);
    if (scale == DisplayScale::kStored) continue;
    // log_x / logit_x -> x, in the same place of the name.
    const std::string last = last_component(name);
    const std::string bare = last.substr(scale == DisplayScale::kExp ? 4 : 6);
    const std::string natural = name.substr(0, name.size() - last.size()) + bare;
    if (!bare.empty() && !params.count(natural)) out.set(natural, shown_value(name, u));
  }
  return out;
}

std::string display_scale_name(DisplayScale s) {
  switch (s) {
    case DisplayScale::kExp:
      return "exp";
    case DisplayScale::kLogistic:
      return "logistic";
    case DisplayScale::kSoftplus:
      return "softplus";
    case DisplayScale::kStored:
      break;
  }
  return "";
}

std::vector<ParamSummary> summarise_parameters(const ParameterSet& trained,
                                               const ParameterSet& initial) {
  for (const auto& [name, v] : initial) {
    if (!trained.count(name)) {
      throw DataError(fmt::format("parameters: '{}' has no trained value", name));
    }
  }
  std::vector<ParamSummary> out;
  for (const auto& [name, v] : trained) {
    const auto it = initial.find(name);
    if (it == initial.end()) {
      throw DataError(fmt::format("parameters: '{}' is not a parameter of the model", name));
    }
    if (it->second.n_rows != v.n_rows || it->second.n_cols != v.n_cols) {
      throw DataError(fmt::format("parameters: '{}' is {}x{}, the model's is {}x{}", name, v.n_rows,
                                  v.n_cols, it->second.n_rows, it->second.n_cols));
    }
    ParamSummary r;
    r.name = name;
    r.rows = v.n_rows;
    r.cols = v.n_cols;
    r.scale = table_scale(name);
    if (v.n_elem > 0) {
      const arma::mat s = shown(r.scale, v);
      r.min = s.min();
      r.mean = arma::accu(s) / double(s.n_elem);
      r.max = s.max();
    } else {
      r.min = r.mean = r.max = std::numeric_limits<double>::quiet_NaN();
    }
    r.norm = arma::norm(arma::vectorise(v), 2);
    r.moved = arma::norm(arma::vectorise(v - it->second), 2);
    r.init_norm = arma::norm(arma::vectorise(it->second), 2);
    out.push_back(std::move(r));
  }
  return out;
}

std::string parameters_table(const std::vector<ParamSummary>& rows) {
  size_t wn = std::string("parameter").size();
  for (const auto& r : rows) wn = std::max(wn, r.name.size());
  std::string out =
      fmt::format("{:<{}}  {:>9}  {:>8}  {:>11}  {:>11}  {:>11}  {:>10}  {:>10}\n", "parameter", wn,
                  "shape", "shown as", "min / value", "mean", "max", "||theta||", "moved");
  for (const auto& r : rows) {
    // A 1 x 1 parameter: its value under "min / value", no mean or max.
    const bool scalar = r.rows * r.cols == 1;
    out += fmt::format("{:<{}}  {:>9}  {:>8}  {:>11.4g}  {:>11}  {:>11}  {:>10.4g}  {:>10.4g}\n",
                       r.name, wn, shape(r), display_scale_name(r.scale), r.min,
                       scalar ? "" : fmt::format("{:.4g}", r.mean),
                       scalar ? "" : fmt::format("{:.4g}", r.max), r.norm, r.moved);
  }
  return out;
}

util::Json parameters_json(const std::vector<ParamSummary>& rows) {
  util::Json a = util::Json::array();
  for (const auto& r : rows) {
    util::Json o = util::Json::object();
    o.set("name", r.name);
    o.set("rows", r.rows);
    o.set("cols", r.cols);
    o.set("scale", display_scale_name(r.scale));
    o.set("min", r.min);
    o.set("mean", r.mean);
    o.set("max", r.max);
    o.set("norm", r.norm);
    o.set("moved", r.moved);
    o.set("init_norm", r.init_norm);
    a.push(std::move(o));
  }
  return a;
}

std::string parameter_csv(const std::string& name, const arma::mat& stored) {
  const arma::mat s = shown(table_scale(name), stored);
  std::string out;
  for (arma::uword i = 0; i < s.n_rows; ++i) {
    for (arma::uword j = 0; j < s.n_cols; ++j) {
      if (j > 0) out += ',';
      out += fmt::format("{:.17g}", s(i, j));
    }
    out += '\n';
  }
  return out;
}

}  // namespace dkp::training
