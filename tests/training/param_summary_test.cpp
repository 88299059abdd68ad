// What `dkp params` prints (training/param_summary.hpp): the display scale chosen by name, the
// summaries against values worked out by hand, name and shape mismatches, the table, the JSON
// and the CSV (exact round trip of the shown values).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "training/param_summary.hpp"
#include "util/error.hpp"
#include "util/json.hpp"
#include "util/parse.hpp"

namespace tr = dkp::training;
using tr::DisplayScale;

TEST_CASE("params: the display scale follows the name's last component") {
  CHECK(tr::display_scale("layer1.log_alpha") == DisplayScale::kExp);
  CHECK(tr::display_scale("likelihood.log_noise_var") == DisplayScale::kExp);
  CHECK(tr::display_scale("log_x") == DisplayScale::kExp);
  CHECK(tr::display_scale("layer3.logit_q") == DisplayScale::kLogistic);
  CHECK(tr::display_scale("layer2.L_scale") == DisplayScale::kStored);
  CHECK(tr::display_scale("layer1.mu") == DisplayScale::kStored);
  CHECK(tr::display_scale("layer1.catalog_x") == DisplayScale::kStored);  // a prefix, not a part
  CHECK(tr::display_scale("log_a.mu") == DisplayScale::kStored);          // only the last part
  CHECK(tr::display_scale_name(DisplayScale::kExp) == "exp");
  CHECK(tr::display_scale_name(DisplayScale::kLogistic) == "logistic");
  CHECK(tr::display_scale_name(DisplayScale::kStored).empty());
}

TEST_CASE("params: the table shows L_scale as its exp, result.json keeps it as stored") {
  CHECK(tr::table_scale("layer2.L_scale") == DisplayScale::kExp);
  CHECK(tr::table_scale("layer2.log_alpha") == DisplayScale::kExp);
  CHECK(tr::table_scale("layer2.mu") == DisplayScale::kStored);
  CHECK(tr::table_scale("layer2.L_scale_x") == DisplayScale::kStored);
  const tr::ParameterSet p = {
      {"layer1.L_scale", arma::mat(1, 1, arma::fill::value(std::log(3.0)))}};
  const auto rows = tr::summarise_parameters(p, p);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].scale == DisplayScale::kExp);
  CHECK(rows[0].min == doctest::Approx(3.0));
  CHECK(tr::parameter_csv("layer1.L_scale", p.at("layer1.L_scale")) ==
        tr::parameter_csv("x.log_s", p.at("layer1.L_scale")));
  // result.json's scalar_parameters: the stored value under its own name, and no other key.
  const dkp::util::Json j = tr::scalar_parameters_json(p);
  CHECK(j.dump(0) == dkp::util::Json::object().set("layer1.L_scale", std::log(3.0)).dump(0));
}

namespace {

tr::ParameterSet trained_set() {
  return {{"b.log_s", arma::mat{{0.0, std::log(2.0)}, {std::log(4.0), std::log(0.5)}}},
          {"a.mu", arma::mat(arma::colvec{1.0, -3.0, 0.5})},
          {"c.logit_q", arma::mat(1, 1, arma::fill::zeros)}};
}

tr::ParameterSet initial_set() {
  return {{"b.log_s", arma::mat(2, 2, arma::fill::zeros)},
          {"a.mu", arma::mat(3, 1, arma::fill::ones)},
          {"c.logit_q", arma::mat(1, 1, arma::fill::value(-4.0))}};
}

}  // namespace

TEST_CASE("params: summaries on the shown scale, norms and moves on the stored values") {
  const auto rows = tr::summarise_parameters(trained_set(), initial_set());
  REQUIRE(rows.size() == 3);
  // Name order.
  CHECK(rows[0].name == "a.mu");
  CHECK(rows[1].name == "b.log_s");
  CHECK(rows[2].name == "c.logit_q");
  const auto& mu = rows[0];
  CHECK(mu.rows == 3);
  CHECK(mu.cols == 1);
  CHECK(mu.scale == DisplayScale::kStored);
  CHECK(mu.min == -3.0);
  CHECK(mu.max == 1.0);
  CHECK(mu.mean == doctest::Approx(-0.5).epsilon(1e-15));
  CHECK(mu.norm == doctest::Approx(std::sqrt(1.0 + 9.0 + 0.25)).epsilon(1e-15));
  CHECK(mu.moved == doctest::Approx(std::sqrt(0.0 + 16.0 + 0.25)).epsilon(1e-15));
  CHECK(mu.init_norm == doctest::Approx(std::sqrt(3.0)).epsilon(1e-15));
  const auto& s = rows[1];  // exp of {0, log 4; log 2, log 0.5} = {1, 2, 4, 0.5}
  CHECK(s.scale == DisplayScale::kExp);
  CHECK(s.rows == 2);
  CHECK(s.cols == 2);
  CHECK(s.min == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(s.max == doctest::Approx(4.0).epsilon(1e-15));
  CHECK(s.mean == doctest::Approx(7.5 / 4.0).epsilon(1e-15));
  const double l2 = std::log(2.0);
  CHECK(s.norm == doctest::Approx(std::sqrt(l2 * l2 * (1.0 + 4.0 + 1.0))).epsilon(1e-15));
  CHECK(s.moved == doctest::Approx(s.norm).epsilon(1e-15));  // from zero
  CHECK(s.init_norm == 0.0);
  const auto& q = rows[2];  // logistic(0) = 1/2, moved from -4
  CHECK(q.scale == DisplayScale::kLogistic);
  CHECK(q.min == 0.5);
  CHECK(q.mean == 0.5);
  CHECK(q.max == 0.5);
  CHECK(q.moved == 4.0);
  CHECK(q.init_norm == 4.0);
}

TEST_CASE("params: a trained set that is not the model's is an error naming the parameter") {
  auto extra = trained_set();
  extra["z.v"] = arma::mat(1, 1, arma::fill::zeros);
  CHECK_THROWS_WITH_AS(tr::summarise_parameters(extra, initial_set()),
                       doctest::Contains("'z.v' is not a parameter"), dkp::DataError);
  auto missing = trained_set();
  missing.erase("a.mu");
  CHECK_THROWS_WITH_AS(tr::summarise_parameters(missing, initial_set()),
                       doctest::Contains("'a.mu' has no trained value"), dkp::DataError);
  auto shape = trained_set();
  shape["a.mu"] = arma::mat(1, 3, arma::fill::zeros);
  CHECK_THROWS_WITH_AS(tr::summarise_parameters(shape, initial_set()),
                       doctest::Contains("'a.mu' is 1x3, the model's is 3x1"), dkp::DataError);
}

TEST_CASE("params: the table has one row per parameter with its shape, scale and values") {
  const auto rows = tr::summarise_parameters(trained_set(), initial_set());
  const std::string t = tr::parameters_table(rows);
  std::istringstream in(t);
  std::string header, line;
  std::getline(in, header);
  CHECK(header.find("parameter") == 0);
  CHECK(header.find("moved") != std::string::npos);
  std::vector<std::vector<std::string>> fields;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    fields.push_back(f);
  }
  REQUIRE(fields.size() == 3);
  // name shape [scale] min mean max norm moved; a 1 x 1 parameter has its value and no mean/max.
  CHECK(fields[0] == std::vector<std::string>{"a.mu", "3x1", "-3", "-0.5", "1", "3.202", "4.031"});
  CHECK(fields[1][0] == "b.log_s");
  CHECK(fields[1][1] == "2x2");
  CHECK(fields[1][2] == "exp");
  CHECK(fields[1][3] == "0.5");
  CHECK(fields[1][5] == "4");
  CHECK(fields[2] == std::vector<std::string>{"c.logit_q", "1x1", "logistic", "0.5", "0", "4"});
}

TEST_CASE("params: JSON with every field, read back") {
  const auto rows = tr::summarise_parameters(trained_set(), initial_set());
  const YAML::Node j = YAML::Load(tr::parameters_json(rows).dump());
  REQUIRE(j.IsSequence());
  REQUIRE(j.size() == 3);
  CHECK(j[1]["name"].as<std::string>() == "b.log_s");
  CHECK(j[1]["rows"].as<int>() == 2);
  CHECK(j[1]["cols"].as<int>() == 2);
  CHECK(j[1]["scale"].as<std::string>() == "exp");
  CHECK(j[1]["min"].as<double>() == rows[1].min);
  CHECK(j[1]["mean"].as<double>() == rows[1].mean);
  CHECK(j[1]["max"].as<double>() == rows[1].max);
  CHECK(j[1]["norm"].as<double>() == rows[1].norm);
  CHECK(j[1]["moved"].as<double>() == rows[1].moved);
  CHECK(j[1]["init_norm"].as<double>() == rows[1].init_norm);
  CHECK(j[0]["scale"].as<std::string>().empty());
}

TEST_CASE("params: CSV of the shown values, one line per row, exact") {
  const arma::mat stored{{0.3, -1.7, 2.0}, {std::log(3.0), 0.0, -40.0}};
  for (const std::string name : {"x.log_v", "x.v", "x.logit_p"}) {
    const std::string csv = tr::parameter_csv(name, stored);
    const DisplayScale sc = tr::display_scale(name);
    std::istringstream in(csv);
    std::string line;
    arma::uword i = 0;
    while (std::getline(in, line)) {
      REQUIRE(i < stored.n_rows);
      std::istringstream ls(line);
      std::string cell;
      arma::uword j = 0;
      while (std::getline(ls, cell, ',')) {
        REQUIRE(j < stored.n_cols);
        const double u = stored(i, j);
        const double want = sc == DisplayScale::kExp        ? std::exp(u)
                            : sc == DisplayScale::kLogistic ? 1.0 / (1.0 + std::exp(-u))
                                                            : u;
        const auto got = dkp::util::parse_double(cell);
        REQUIRE(got.has_value());
        CHECK(*got == doctest::Approx(want).epsilon(1e-15));
        ++j;
      }
      CHECK(j == stored.n_cols);
      ++i;
    }
    CHECK(i == stored.n_rows);
  }
}
