// What a trained run learned, parameter by parameter (`dkp params`): each parameter's shape, its
// values on the scale the model uses them (exp of a stored `log_*`, the logistic of a stored
// `logit_*`, the stored value otherwise), and how far training moved it from its initial value.
// The last answers "did this parameter train at all?" (a parameter stuck at its initialisation
// is a known failure of reference code: notes/practices.md, part 2, item 5).
#pragma once

#include <string>
#include <vector>

#include <armadillo>

#include "training/adam.hpp"
#include "util/json.hpp"

namespace dkp::training {

/// How a stored parameter is shown: by its name's last component (after the last '.').
enum class DisplayScale { kStored, kExp, kLogistic };

/// kExp for `log_*`, kLogistic for `logit_*`, kStored otherwise.
DisplayScale display_scale(const std::string& name);
/// "", "exp", "logistic".
std::string display_scale_name(DisplayScale s);

struct ParamSummary {
  std::string name;
  arma::uword rows = 0, cols = 0;
  DisplayScale scale = DisplayScale::kStored;
  double min = 0.0, mean = 0.0, max = 0.0;  ///< of the shown values (NaN when empty)
  double norm = 0.0;                        ///< ||stored||_F
  double moved = 0.0;                       ///< ||stored - initial||_F
  double init_norm = 0.0;                   ///< ||initial||_F
};

/// One summary per parameter, in name order. `initial` must have the same names and shapes
/// (dkp::DataError naming the first difference otherwise).
std::vector<ParamSummary> summarise_parameters(const ParameterSet& trained,
                                               const ParameterSet& initial);

/// A fixed-width table, one row per parameter: name, shape, scale, the value (1 x 1) or
/// min / mean / max of the shown values, ||theta||_F and ||theta - theta_0||_F (stored values).
std::string parameters_table(const std::vector<ParamSummary>& rows);

/// The same as a JSON array of objects (name, rows, cols, scale, min, mean, max, norm, moved,
/// init_norm).
util::Json parameters_json(const std::vector<ParamSummary>& rows);

/// The shown values of one parameter as CSV, one line per row, 17 significant digits.
std::string parameter_csv(const std::string& name, const arma::mat& stored);

}  // namespace dkp::training
