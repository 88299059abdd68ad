// Parameters on their natural scale (training/param_summary.hpp): the SVGP models' GPflow-named
// positive parameters (softplus + 1e-6) are shown as the positive values they stand for, and
// result.json's scalar_parameters give every key the value its name says, keeping the stored one.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <yaml-cpp/yaml.h>

#include "training/param_summary.hpp"

namespace tr = dkp::training;
using tr::DisplayScale;

namespace {

double softplus(double u) {
  return std::log1p(std::exp(u));
}

}  // namespace

TEST_CASE("params: the SVGP models' positive parameters are shown through softplus") {
  CHECK(tr::display_scale("likelihood.variance") == DisplayScale::kSoftplus);
  CHECK(tr::display_scale("kern.variance") == DisplayScale::kSoftplus);
  CHECK(tr::display_scale("layer1.kern.variance") == DisplayScale::kSoftplus);
  CHECK(tr::display_scale("layer2.kern.lengthscales") == DisplayScale::kSoftplus);
  CHECK(tr::display_scale("layer1.kern.white") == DisplayScale::kSoftplus);
  CHECK(tr::display_scale_name(DisplayScale::kSoftplus) == "softplus");
  // Other models' names keep their scales; a bare "variance" is not the SVGP's.
  CHECK(tr::display_scale("likelihood.log_variance") == DisplayScale::kExp);
  CHECK(tr::display_scale("layer1.log_variance") == DisplayScale::kExp);
  CHECK(tr::display_scale("variance") == DisplayScale::kStored);
  CHECK(tr::display_scale("layer1.variance") == DisplayScale::kStored);
  CHECK(tr::display_scale("layer1.q_mu") == DisplayScale::kStored);
  // The SGP: likelihood.variance stored as -2.597 is a noise variance of about 0.072.
  CHECK(tr::shown_value("likelihood.variance", -2.597) ==
        doctest::Approx(softplus(-2.597) + 1e-6).epsilon(1e-15));
  CHECK(tr::shown_value("likelihood.variance", -2.597) == doctest::Approx(0.0718).epsilon(1e-3));
  // A summary (dkp params) shows the same value.
  const tr::ParameterSet trained{
      {"likelihood.variance", arma::mat(1, 1, arma::fill::value(-2.597))}};
  const tr::ParameterSet initial{{"likelihood.variance", arma::mat(1, 1, arma::fill::zeros)}};
  const auto rows = tr::summarise_parameters(trained, initial);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].scale == DisplayScale::kSoftplus);
  CHECK(rows[0].min > 0.0);
  CHECK(rows[0].min == doctest::Approx(softplus(-2.597) + 1e-6).epsilon(1e-15));
  CHECK(tr::parameters_table(rows).find("softplus") != std::string::npos);
}

TEST_CASE("result.json scalar_parameters: each key's value is what its name says") {
  const tr::ParameterSet params{
      {"likelihood.variance", arma::mat(1, 1, arma::fill::value(-2.597))},    // SGP, softplus
      {"layer1.kern.variance", arma::mat(1, 1, arma::fill::value(0.5))},      // DSVI, softplus
      {"layer1.kern.lengthscales", arma::mat(1, 3, arma::fill::value(0.5))},  // not 1 x 1
      {"likelihood.log_noise_var", arma::mat(1, 1, arma::fill::value(std::log(0.25)))},
      {"layer1.logit_q", arma::mat(1, 1, arma::fill::zeros)},
      {"layer2.log_delta", arma::mat(1, 1, arma::fill::value(1.0))},
      {"layer2.delta", arma::mat(1, 1, arma::fill::value(7.0))},  // the natural name is taken
      {"a.mu", arma::mat(1, 1, arma::fill::value(-3.0))}};
  const YAML::Node j = YAML::Load(tr::scalar_parameters_json(params).dump());
  REQUIRE(j.IsMap());
  // Softplus-stored: the natural value under the name, the stored one beside it.
  CHECK(j["likelihood.variance"].as<double>() ==
        doctest::Approx(softplus(-2.597) + 1e-6).epsilon(1e-15));
  CHECK(j["likelihood.variance.unconstrained"].as<double>() == -2.597);
  CHECK(j["layer1.kern.variance"].as<double>() ==
        doctest::Approx(softplus(0.5) + 1e-6).epsilon(1e-15));
  CHECK(j["layer1.kern.variance.unconstrained"].as<double>() == 0.5);
  CHECK_FALSE(j["layer1.kern.lengthscales"]);
  // A log_ or logit_ name keeps its stored value (as before), its natural value is added.
  CHECK(j["likelihood.log_noise_var"].as<double>() == std::log(0.25));
  CHECK(j["likelihood.noise_var"].as<double>() == doctest::Approx(0.25).epsilon(1e-15));
  CHECK(j["layer1.logit_q"].as<double>() == 0.0);
  CHECK(j["layer1.q"].as<double>() == 0.5);
  CHECK(j["layer2.log_delta"].as<double>() == 1.0);
  CHECK(j["layer2.delta"].as<double>() == 7.0);  // the parameter, not exp(log_delta)
  CHECK(j["a.mu"].as<double>() == -3.0);
  CHECK(j.size() == 11);
}
