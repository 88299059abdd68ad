#include <doctest/doctest.h>

#include "training/schedules.hpp"
#include "util/error.hpp"

using dkp::training::KlAnnealing;
using dkp::training::LrSchedule;

TEST_CASE("constant learning rate") {
  const LrSchedule s = LrSchedule::constant(0.05);
  CHECK(s.at(0) == 0.05);
  CHECK(s.at(123456789) == 0.05);
  CHECK(s.describe() == "0.05");
  CHECK_THROWS_AS(LrSchedule::constant(0.0), dkp::ConfigError);
  CHECK_THROWS_AS(LrSchedule::constant(-1e-3), dkp::ConfigError);
}

TEST_CASE("step drops: 1e-2 for steps 0..9999, 1e-3 from step 10000") {
  const LrSchedule s = LrSchedule::steps(1e-2, {{10000, 1e-3}});
  CHECK(s.at(0) == 1e-2);
  CHECK(s.at(9999) == 1e-2);
  CHECK(s.at(10000) == 1e-3);
  CHECK(s.at(19999) == 1e-3);
  CHECK(s.describe() == "0.01, 0.001 from step 10000");

  const LrSchedule m = LrSchedule::steps(1.0, {{10, 0.5}, {20, 0.25}, {21, 0.125}});
  CHECK(m.at(9) == 1.0);
  CHECK(m.at(10) == 0.5);
  CHECK(m.at(19) == 0.5);
  CHECK(m.at(20) == 0.25);
  CHECK(m.at(21) == 0.125);
  CHECK(m.at(1000000) == 0.125);

  CHECK_THROWS_AS(LrSchedule::steps(1e-2, {{0, 1e-3}}), dkp::ConfigError);
  CHECK_THROWS_AS(LrSchedule::steps(1e-2, {{10, 1e-3}, {10, 1e-4}}), dkp::ConfigError);
  CHECK_THROWS_AS(LrSchedule::steps(1e-2, {{10, 1e-3}, {5, 1e-4}}), dkp::ConfigError);
  CHECK_THROWS_AS(LrSchedule::steps(1e-2, {{10, 0.0}}), dkp::ConfigError);
}

TEST_CASE("KL annealing: linear 0 -> 1 over K steps, K = 0 means always 1") {
  const KlAnnealing k(500);
  CHECK(k.weight(0) == 0.0);
  CHECK(k.weight(1) == 1.0 / 500);
  CHECK(k.weight(250) == 0.5);
  CHECK(k.weight(499) == 499.0 / 500);
  CHECK(k.weight(500) == 1.0);
  CHECK(k.weight(100000) == 1.0);

  const KlAnnealing none(0);
  CHECK(none.weight(0) == 1.0);
  CHECK(none.weight(7) == 1.0);
  CHECK(KlAnnealing().weight(0) == 1.0);

  const KlAnnealing one(1);
  CHECK(one.weight(0) == 0.0);
  CHECK(one.weight(1) == 1.0);
}
