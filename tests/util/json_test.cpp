#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include <yaml-cpp/yaml.h>

#include "util/json.hpp"

using dkp::util::Json;

TEST_CASE("json writer escapes, round-trips doubles exactly and maps non-finite to null") {
  Json j = Json::object();
  j.set("name", "a \"quoted\"\\ line\nnext\t\x01");
  j.set("pi", 3.141592653589793);
  j.set("third", 1.0 / 3.0);
  j.set("n", 42);
  j.set("ok", true);
  j.set("nan", std::numeric_limits<double>::quiet_NaN());
  j.set("list", Json::array().push(1).push("x").push(Json()));
  j.set("n", 43);  // replace keeps one key
  const std::string s = j.dump();
  const YAML::Node back = YAML::Load(s);
  CHECK(back["name"].as<std::string>() == "a \"quoted\"\\ line\nnext\t\x01");
  CHECK(back["pi"].as<double>() == 3.141592653589793);
  CHECK(back["third"].as<double>() == 1.0 / 3.0);
  CHECK(back["n"].as<int>() == 43);
  CHECK(back["ok"].as<bool>());
  CHECK(back["nan"].IsNull());
  CHECK(back["list"].size() == 3);
  CHECK(Json::object().dump(0) == "{}");
  CHECK(Json::array().push(1).push(2).dump(0) == "[1,2]");
  CHECK_THROWS(Json(1).set("k", 1));
}
