#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "test_support.hpp"
#include "training/exact_io.hpp"
#include "training/parameters.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using dkp::training::ParameterRegistry;
using dkp::training::ParameterSet;
using dkp::training::ParameterSpec;
using dkp::training::Transform;

namespace {

const Transform kAll[] = {Transform::kIdentity, Transform::kLog, Transform::kSoftplus,
                          Transform::kSigmoid};

bool bitwise_equal(const arma::mat& a, const arma::mat& b) {
  return a.n_rows == b.n_rows && a.n_cols == b.n_cols &&
         (a.n_elem == 0 || std::memcmp(a.memptr(), b.memptr(), a.n_elem * sizeof(double)) == 0);
}

// A small model's declarations, as a model would write them.
ParameterRegistry example_registry() {
  ParameterRegistry r;
  r.add("noise_var", 1, 1, Transform::kSoftplus, 0.1,
        "Gaussian likelihood variance; init 0.1 (doubly-stochastic DGP, Salimbeni & Deisenroth "
        "2017, GPflow default likelihood variance is 1.0, DSDGP demos use 0.1)");
  r.add("lengthscales", 1, 3, Transform::kLog, 1.0, "ARD SE lengthscales; init 1 (GPflow default)");
  ParameterSpec z;
  z.name = "Z";
  z.rows = 4;
  z.cols = 3;
  z.transform = Transform::kIdentity;
  z.initial = arma::reshape(arma::linspace(-1.5, 2.0, 12), 4, 3);
  z.doc = "inducing inputs; init from k-means of X in the papers (fixed grid here)";
  r.add(z);
  r.add("mix", 2, 1, Transform::kSigmoid, 0.25, "mixing weight; test value");
  return r;
}

}  // namespace

TEST_CASE("transforms round-trip between unconstrained and constrained values") {
  const std::vector<double> us = {-700.0, -40.0, -5.0, -1.0, -1e-8, 0.0, 1e-8, 0.3, 2.0, 35.0};
  for (Transform t : kAll) {
    CAPTURE(std::string(dkp::training::transform_name(t)));
    for (double u : us) {
      CAPTURE(u);
      const double c = dkp::training::constrain(t, u);
      if (t == Transform::kLog && u < -700.0 + 1) continue;  // exp(-700) is fine but stay sane
      if (t == Transform::kSigmoid && std::fabs(u) > 30) continue;  // c rounds to 1 in double
      // Absolute accuracy near u = 0 (where exp/log lose relative accuracy), relative elsewhere.
      CHECK(std::fabs(dkp::training::unconstrain(t, c) - u) <= 1e-12 * std::max(1.0, std::fabs(u)));
    }
    const std::vector<double> cs =
        t == Transform::kSigmoid    ? std::vector<double>{1e-300, 1e-8, 0.25, 0.5, 0.999999}
        : t == Transform::kIdentity ? std::vector<double>{-1e10, -3.0, 0.0, 4.5}
                                    : std::vector<double>{1e-300, 1e-8, 0.5, 3.0, 1e5, 1e300};
    for (double c : cs) {
      CAPTURE(c);
      CHECK(dkp::training::constrain(t, dkp::training::unconstrain(t, c)) ==
            doctest::Approx(c).epsilon(1e-12));
    }
    // Matrix versions agree with the scalar ones.
    const arma::mat u = {{-1.0, 0.5}, {2.0, -3.0}};
    const arma::mat c = dkp::training::constrain(t, u);
    const arma::mat d = dkp::training::constrain_derivative(t, u);
    for (arma::uword i = 0; i < 4; ++i) {
      CHECK(c[i] == dkp::training::constrain(t, u[i]));
      CHECK(d[i] == dkp::training::constrain_derivative(t, u[i]));
    }
    CHECK(arma::approx_equal(dkp::training::unconstrain(t, c), u, "reldiff", 1e-12));
  }
  // Softplus is evaluated without overflow or loss at the extremes.
  CHECK(dkp::training::constrain(Transform::kSoftplus, 800.0) == 800.0);
  CHECK(dkp::training::constrain(Transform::kSoftplus, -800.0) >= 0.0);
  CHECK(dkp::training::constrain(Transform::kSoftplus, -30.0) ==
        doctest::Approx(std::exp(-30.0)).epsilon(1e-12));
  CHECK(dkp::training::constrain(Transform::kSigmoid, -800.0) >= 0.0);
  CHECK(dkp::training::constrain(Transform::kSigmoid, 800.0) == 1.0);
}

TEST_CASE("transform derivatives match central finite differences") {
  const double us[] = {-20.0, -3.0, -0.7, 0.0, 0.4, 1.0, 5.0, 20.0};
  for (Transform t : kAll) {
    CAPTURE(std::string(dkp::training::transform_name(t)));
    for (double u : us) {
      CAPTURE(u);
      const double h = 1e-5 * std::max(1.0, std::fabs(u));
      const double fd =
          (dkp::training::constrain(t, u + h) - dkp::training::constrain(t, u - h)) / (2 * h);
      const double d = dkp::training::constrain_derivative(t, u);
      CHECK(d == doctest::Approx(fd).epsilon(1e-8));
      CHECK(d >= 0.0);
    }
  }
}

TEST_CASE("transform names and domain errors") {
  for (Transform t : kAll) {
    CHECK(dkp::training::transform_from_name(dkp::training::transform_name(t)) == t);
  }
  CHECK_THROWS_AS(dkp::training::transform_from_name("exp"), dkp::ConfigError);
  CHECK_THROWS_AS(dkp::training::unconstrain(Transform::kLog, 0.0), dkp::ConfigError);
  CHECK_THROWS_AS(dkp::training::unconstrain(Transform::kSoftplus, -1.0), dkp::ConfigError);
  CHECK_THROWS_AS(dkp::training::unconstrain(Transform::kSigmoid, 1.0), dkp::ConfigError);
  CHECK_THROWS_AS(dkp::training::unconstrain(Transform::kSigmoid, 0.0), dkp::ConfigError);
  CHECK_THROWS_AS(dkp::training::unconstrain(Transform::kIdentity, NAN), dkp::ConfigError);
}

TEST_CASE("registry declares parameters and maps between unconstrained and constrained values") {
  const ParameterRegistry r = example_registry();
  CHECK(r.size() == 4);
  CHECK(r.names() == std::vector<std::string>{"noise_var", "lengthscales", "Z", "mix"});
  CHECK(r.contains("Z"));
  CHECK_FALSE(r.contains("z"));
  CHECK(r.spec("lengthscales").transform == Transform::kLog);
  CHECK_THROWS_AS(r.spec("nope"), dkp::Error);

  const ParameterSet u0 = r.initial_unconstrained();
  CHECK(u0.at("noise_var")(0, 0) == doctest::Approx(std::log(std::expm1(0.1))));
  CHECK(u0.at("lengthscales")(0, 2) == 0.0);
  CHECK(u0.at("mix")(1, 0) == doctest::Approx(std::log(0.25 / 0.75)));
  CHECK(bitwise_equal(u0.at("Z"), r.spec("Z").initial));

  const ParameterSet c0 = r.constrained(u0);
  for (const auto& name : r.names()) {
    CAPTURE(name);
    CHECK(arma::approx_equal(c0.at(name), r.spec(name).initial, "reldiff", 1e-14));
  }
  CHECK(arma::approx_equal(r.constrained("mix", u0.at("mix")), c0.at("mix"), "absdiff", 0.0));
  const ParameterSet u1 = r.unconstrained(c0);
  for (const auto& name : r.names()) {
    CHECK(arma::approx_equal(u1.at(name), u0.at(name), "absdiff", 1e-14));
  }
  CHECK(r.describe().find("lengthscales") != std::string::npos);
  CHECK(r.describe().find("GPflow default") != std::string::npos);
}

TEST_CASE("registry chain rule: unconstrained gradient matches finite differences") {
  const ParameterRegistry r = example_registry();
  ParameterSet u = r.initial_unconstrained();
  u["Z"](1, 2) = 0.3;
  u["lengthscales"] = arma::mat{{0.2, -0.5, 1.1}};
  // L(c) = sum_k w_k * sum(c_k^2) / 2 + sum(sin(c_k)) with per-parameter weights; dL/dc = w c +
  // cos(c).
  const std::map<std::string, double> w = {
      {"noise_var", 1.5}, {"lengthscales", 0.7}, {"Z", -0.2}, {"mix", 3.0}};
  auto loss = [&](const ParameterSet& uu) {
    const ParameterSet c = r.constrained(uu);
    double L = 0.0;
    for (const auto& [name, value] : c) {
      L += w.at(name) * arma::accu(arma::square(value)) / 2 + arma::accu(arma::sin(value));
    }
    return L;
  };
  const ParameterSet c = r.constrained(u);
  ParameterSet grad_c;
  for (const auto& [name, value] : c) grad_c[name] = w.at(name) * value + arma::cos(value);
  const ParameterSet grad_u = r.unconstrained_gradient(u, grad_c);
  for (const auto& name : r.names()) {
    for (arma::uword i = 0; i < u.at(name).n_elem; ++i) {
      CAPTURE(name);
      CAPTURE(i);
      const double h = 1e-6;
      ParameterSet up = u, dn = u;
      up[name][i] += h;
      dn[name][i] -= h;
      const double fd = (loss(up) - loss(dn)) / (2 * h);
      CHECK(grad_u.at(name)[i] == doctest::Approx(fd).epsilon(1e-7).scale(1e-7));
    }
  }
}

TEST_CASE("registry rejects bad declarations") {
  ParameterRegistry r;
  r.add("a", 2, 2, Transform::kLog, 1.0, "doc");
  CHECK_THROWS_AS(r.add("a", 1, 1, Transform::kIdentity, 0.0, "dup"), dkp::ConfigError);
  CHECK_THROWS_AS(r.add("", 1, 1, Transform::kIdentity, 0.0, ""), dkp::ConfigError);
  CHECK_THROWS_AS(r.add("has space", 1, 1, Transform::kIdentity, 0.0, ""), dkp::ConfigError);
  CHECK_THROWS_AS(r.add("neg", 1, 1, Transform::kSoftplus, -1.0, ""), dkp::ConfigError);
  CHECK_THROWS_AS(r.add("p", 1, 1, Transform::kSigmoid, 1.0, ""), dkp::ConfigError);
  ParameterSpec bad;
  bad.name = "shape";
  bad.rows = 2;
  bad.cols = 3;
  bad.initial = arma::mat(3, 2, arma::fill::zeros);
  CHECK_THROWS_AS(r.add(bad), dkp::ConfigError);
  CHECK(r.size() == 1);
}

TEST_CASE("parameter checkpoints round-trip exactly and are checked against the declarations") {
  const ParameterRegistry r = example_registry();
  ParameterSet u = r.initial_unconstrained();
  u["Z"](2, 1) = -1.0 / 3.0;
  u["lengthscales"](0, 1) = std::nextafter(0.1, 1.0);
  u["mix"](0, 0) = -0.0;
  u["noise_var"](0, 0) = 1e-310;  // subnormal

  const auto dir = dkp::test::temp_dir("params-ckpt");
  dkp::util::write_file_atomic(dir / "params.txt", r.save(u));
  const std::string text = dkp::util::read_file(dir / "params.txt");
  const ParameterSet back = r.load(text);
  CHECK(back.size() == u.size());
  for (const auto& name : r.names()) {
    CAPTURE(name);
    CHECK(bitwise_equal(back.at(name), u.at(name)));
  }
  CHECK(std::signbit(back.at("mix")(0, 0)));
  CHECK(r.save(back) == text);

  // A registry that differs in a name, a shape or a transform refuses the checkpoint, naming it.
  auto message_of = [&](const ParameterRegistry& other) -> std::string {
    try {
      (void)other.load(text);
    } catch (const dkp::DataError& e) {
      return e.what();
    }
    return "";
  };
  {
    ParameterRegistry other = example_registry();
    other.add("extra", 1, 1, Transform::kIdentity, 0.0, "declared after the checkpoint was made");
    const std::string msg = message_of(other);
    CHECK(msg.find("'extra' is missing") != std::string::npos);
  }
  {
    ParameterRegistry other;
    other.add("noise_var", 1, 1, Transform::kSoftplus, 0.1, "");
    other.add("lengthscales", 1, 4, Transform::kLog, 1.0, "");  // one more input dimension
    const std::string msg = message_of(other);
    CHECK(msg.find("'lengthscales'") != std::string::npos);
    CHECK(msg.find("stored as 1x3 but the model declares 1x4") != std::string::npos);
  }
  {
    ParameterRegistry other;
    other.add("noise_var", 1, 1, Transform::kLog, 0.1, "");
    const std::string msg = message_of(other);
    CHECK(msg.find("transform 'softplus' but the model declares 'log'") != std::string::npos);
  }
  {
    ParameterRegistry other;
    other.add("noise_var", 1, 1, Transform::kSoftplus, 0.1, "");
    const std::string msg = message_of(other);
    CHECK(msg.find("'lengthscales', which this model does not declare") != std::string::npos);
  }
  // Corrupted text.
  CHECK_THROWS_AS(r.load(""), dkp::DataError);
  CHECK_THROWS_AS(r.load(text.substr(0, text.size() / 2)), dkp::DataError);
  CHECK_THROWS_AS(r.load(text + "junk"), dkp::DataError);
  std::string bad_number = text;
  bad_number[bad_number.find("param Z identity 4 3 ") + 21] = 'q';  // first value of Z
  CHECK_THROWS_AS(r.load(bad_number), dkp::DataError);
  // Saving a set that does not match the declarations is refused too.
  ParameterSet missing = u;
  missing.erase("mix");
  CHECK_THROWS_AS(r.save(missing), dkp::DataError);
  ParameterSet reshaped = u;
  reshaped["Z"] = arma::mat(3, 4, arma::fill::zeros);
  CHECK_THROWS_AS(r.constrained(reshaped), dkp::DataError);
}

TEST_CASE("exact number format round-trips every double bit for bit") {
  const double xs[] = {0.0,
                       -0.0,
                       1.0,
                       0.1,
                       -1.0 / 3.0,
                       std::numeric_limits<double>::min(),
                       std::numeric_limits<double>::denorm_min(),
                       std::numeric_limits<double>::max(),
                       std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity(),
                       6.02214076e23};
  for (double x : xs) {
    const double y =
        dkp::training::parse_exact(dkp::training::format_exact(x), "exact-number test");
    CHECK(std::memcmp(&x, &y, sizeof x) == 0);
  }
  CHECK(std::isnan(dkp::training::parse_exact(
      dkp::training::format_exact(std::numeric_limits<double>::quiet_NaN()), "nan")));
  CHECK_THROWS_AS(dkp::training::parse_exact("1.5x", "t"), dkp::DataError);
  CHECK_THROWS_AS(dkp::training::parse_exact("", "t"), dkp::DataError);
}
