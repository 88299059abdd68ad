// What a trained run learned, parameter by parameter (`dkp params`): each parameter's shape, its
// values on the scale the model uses them (exp of a stored `log_*`, the logistic of a stored
// `logit_*`, softplus(u) + 1e-6 of the SVGP models' GPflow-named positive parameters
// `kern.variance`, `kern.lengthscales`, `kern.white` and `likelihood.variance` (the SGP and the
// DSVI DGP: layers/svgp.hpp's positive()), the stored value otherwise), and how far training
// moved it from its initial value.
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
enum class DisplayScale { kStored, kExp, kLogistic, kSoftplus };

/// kExp for `log_*`, kLogistic for `logit_*`, kSoftplus for `kern.variance`,
/// `kern.lengthscales`, `kern.white` and `likelihood.variance` (the last two components),
/// kStored otherwise.
DisplayScale display_scale(const std::string& name);
/// The scale of `dkp params`' table and CSV: display_scale, and kExp for the precision factors'
/// `L_scale` too (the log of the factor's scale, stored and written to result.json's
/// scalar_parameters under that name as it was; shown here as the scale itself).
DisplayScale table_scale(const std::string& name);
/// "", "exp", "logistic", "softplus".
std::string display_scale_name(DisplayScale s);
/// The value a stored value `u` of parameter `name` stands for (the scale display_scale picks).
double shown_value(const std::string& name, double u);

/// result.json's "scalar_parameters": every 1 x 1 parameter, in name order. A parameter stored
/// as it is used, or whose name says its transform (`log_*`, `logit_*`), keeps its name and
/// stored value (as before); a transformed one is also given on its natural scale under the name
/// without the prefix (`likelihood.log_noise_var` -> `likelihood.noise_var`: exp of it) unless
/// that name is a parameter too. A softplus-stored one (kSoftplus), whose name names the
/// natural quantity, gives its natural value under its name and the stored one under
/// `<name>.unconstrained` (`likelihood.variance`: 0.072, `likelihood.variance.unconstrained`:
/// -2.597), so that every key's value is what its name says.
util::Json scalar_parameters_json(const ParameterSet& params);

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
