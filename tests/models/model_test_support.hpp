// Shared by the model tests: a tiny seeded regression problem, the ELBO gradient check every
// model runs, and the common checks of a model's predictions.
#pragma once

#include <doctest/doctest.h>

#include <armadillo>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "autodiff/gradcheck.hpp"
#include "models/model.hpp"
#include "random/stream.hpp"
#include "training/trainer.hpp"

namespace dkp::test {

struct Tiny {
  arma::mat X;
  arma::vec y;
};

/// n points with d standard-normal features; y = sin(x_0) + 0.1 noise.
inline Tiny tiny_data(size_t n, size_t d, uint64_t seed) {
  random::Stream s(seed);
  Tiny t;
  t.X = random::normal_matrix(s, n, d);
  t.y = arma::sin(t.X.col(0)) + 0.1 * random::normal_matrix(s, n, 1);
  return t;
}

/// Initial values perturbed by 0.1 N(0, 1) (seeded), so that no parameter sits at a special
/// point; appends every parameter's name and value.
inline void jiggled(const dkp::autodiff::ParamMap& init, uint64_t seed,
                    std::vector<std::string>& names, std::vector<arma::mat>& values) {
  random::Stream jiggle(seed);
  for (const auto& [name, v] : init) {
    names.push_back(name);
    values.push_back(v + 0.1 * random::normal_matrix(jiggle, v.n_rows, v.n_cols));
  }
}

/// The ELBO estimate (N = 20, S = 2, KL weight 0.7) at a fixed noise draw, as a function of the
/// parameters `names` (in that order) for the gradient checker. `model` and `data` must outlive
/// the returned function.
inline autodiff::ScalarFunction elbo_function(const models::Model& model, const Tiny& data,
                                              const std::vector<std::string>& names,
                                              uint64_t noise_seed) {
  return
      [&model, &data, names, noise_seed](autodiff::Tape&, const std::vector<autodiff::Var>& vars) {
        dkp::autodiff::VarMap p;
        for (size_t i = 0; i < names.size(); ++i) p.emplace(names[i], vars[i]);
        random::Stream noise(noise_seed);  // fixed noise draw
        return model.elbo(p, data.X, data.y, 20.0, 2, 0.7, noise).elbo;
      };
}

struct ElboGradientCheck {
  autodiff::GradCheckResult result;  ///< finite differences vs the tape, relative tolerance 1e-5
  double value = 0.0;                ///< the ELBO estimate at the checked point
};

/// Gradient check of the ELBO estimate w.r.t. every parameter, at the initial values jiggled
/// with `jiggle_seed` and the noise draw 12345.
inline ElboGradientCheck check_elbo_gradient(const models::Model& model, const Tiny& data,
                                             uint64_t jiggle_seed) {
  std::vector<std::string> names;
  std::vector<arma::mat> values;
  jiggled(model.initial_parameters(), jiggle_seed, names, values);
  const autodiff::ScalarFunction f = elbo_function(model, data, names, 12345);
  autodiff::Tolerances tol;
  tol.rel = 1e-5;
  return {autodiff::check_gradient(f, values, tol), autodiff::evaluate(f, values)};
}

/// check_elbo_gradient's result asserted: the gradients agree and the ELBO is finite.
inline void expect_elbo_gradient(const models::Model& model, const Tiny& data,
                                 uint64_t jiggle_seed) {
  const ElboGradientCheck c = check_elbo_gradient(model, data, jiggle_seed);
  INFO(c.result.detail);
  CHECK(c.result.ok);
  CHECK(std::isfinite(c.value));
}

/// Predictions of the first five rows of X with 6 samples at the initial parameters: shapes,
/// finite values, positive variances, and the same means again from the same seed, the second
/// time with the hidden layers kept (`kind`, `layers` of 5 x `cols` each per sample; the Gram
/// rows' g_tt positive). Returns the first prediction for further checks.
inline models::Predictive check_predictions(const models::Model& model, const arma::mat& X,
                                            models::HiddenKind kind, size_t layers, size_t cols) {
  random::Stream r1(4), r2(4);
  const auto p1 = model.predict(model.initial_parameters(), X.rows(0, 4), 6, r1);
  const auto p2 = model.predict(model.initial_parameters(), X.rows(0, 4), 6, r2, true);
  CHECK(p1.hidden.empty());
  CHECK(arma::approx_equal(p1.var, p2.var, "absdiff", 0.0));
  CHECK(p2.hidden_kind == kind);
  REQUIRE(p2.hidden.size() == 6);
  for (const auto& sample : p2.hidden) {
    REQUIRE(sample.size() == layers);
    for (const arma::mat& H : sample) {
      CHECK(H.n_rows == 5);
      CHECK(H.n_cols == cols);
      CHECK(H.is_finite());
      if (kind == models::HiddenKind::Gram) CHECK(H.col(0).min() > 0.0);
    }
  }
  CHECK(p1.mean.n_rows == 5);
  CHECK(p1.mean.n_cols == 6);
  CHECK(p1.var.n_rows == 5);
  CHECK(p1.var.n_cols == 6);
  CHECK(p1.mean.is_finite());
  CHECK(p1.var.is_finite());
  CHECK(p1.var.min() > 0.0);
  CHECK(arma::approx_equal(p1.mean, p2.mean, "absdiff", 0.0));
  return p1;
}

/// `steps` Adam steps at a constant 1e-2 with 2 samples and no KL annealing, from the run
/// stream `seed` (the tests of held parameters); each step's ELBO estimate appended to `elbos`.
inline autodiff::ParamMap short_train(const models::Model& model, const arma::mat& X,
                                      const arma::vec& y, size_t steps, uint64_t seed,
                                      std::vector<double>* elbos = nullptr) {
  training::TrainOptions opt;
  opt.steps = steps;
  opt.samples = 2;
  opt.kl = training::KlAnnealing{0};
  opt.lr = training::LrSchedule::constant(1e-2);
  opt.log_every = 0;
  return training::train(model, X, y, opt, random::Stream(seed),
                         [&](const training::StepInfo& s, const auto&) {
                           if (elbos) elbos->push_back(s.elbo);
                         })
      .params;
}

}  // namespace dkp::test
