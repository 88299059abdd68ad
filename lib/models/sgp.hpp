// Sparse variational GP regression baseline "SGP" (Hensman et al. 2015; report section 2.2 and
// section 4: "sparse variational Gaussian processes (SGPs) with 100 and 500 pseudo points and
// squared exponential kernels"). In the reference code the SGP is the one-layer DSVI model
// (run_all_uci.py runs L = 1, 2, 3), so it shares the SVGP layer and its defaults with DSVI.
//
// ELBO per datapoint (model.hpp contract), with the Gaussian likelihood integrated analytically
// (no Monte Carlo, `samples` is ignored):
//   elbo = mean_n E_{q(f_n)} log N(y_n; f_n, s2) - kl_weight KL(q(u) || p(u)) / N_train.
// Predictions: q(f_*) = N(mu_*, s_*), returned as N x S with S identical columns (variance + s2).
//
// Parameters: the layer's "layer0.*" (layers/svgp.hpp) and "likelihood.variance" (positive(),
// init 0.05: the 2018 reference code, normalised y; notes 5b).
#pragma once

#include <armadillo>
#include <string>

#include "layers/svgp.hpp"
#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

struct SgpConfig {
  size_t num_inducing = 100;  ///< M: 100 or 500 (report section 4, tables 4-5 "SGP 100/500")
  bool ard = true;            ///< ARD lengthscales (report section 4; table protocol)
  bool whiten = true;         ///< whitened q(u) (2017 paper code, notes 5b)
  layers::DiagTransform q_diag = layers::DiagTransform::kSoftplus;
  double lengthscale = 1.0;       ///< report section 4: "all lengthscales and variances ... 1"
  double variance = 1.0;          ///< idem
  double noise_variance = 0.05;   ///< notes 5b (2018 code, normalised y)
  double jitter = 1e-6;           ///< absolute jitter on K_uu (GPflow default, notes 5b)
  size_t kmeans_iterations = 10;  ///< scipy kmeans2 default iter
  size_t predict_chunk = 10000;   ///< test rows per block in predict()
  /// 0: regression (Gaussian likelihood with learned noise); C >= 2: classification with the
  /// robust-max likelihood over C latent GPs (report section 3.1.1; no noise parameter).
  size_t num_classes = 0;
};

class SgpModel : public Model {
 public:
  /// Initialises Z by k-means on X_train (models/kmeans.hpp) with `init`. When M is at least the
  /// number of distinct training inputs, Z is those inputs (M reduced, with a warning).
  /// @throws dkp::ConfigError for M = 0 or an empty X
  SgpModel(const SgpConfig& config, const arma::mat& X_train, random::Stream& init);
  /// With given inducing inputs (M = Z.n_rows; used by tests).
  SgpModel(const SgpConfig& config, const arma::mat& Z);

  std::string describe() const override;
  const ParamMap& initial_parameters() const override { return initial_; }
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng, bool keep_hidden = false) const override;
  bool deterministic_elbo() const override { return true; }

  const layers::SvgpLayer& layer() const { return layer_; }
  const SgpConfig& config() const { return cfg_; }

 private:
  SgpConfig cfg_;
  layers::SvgpLayer layer_;
  ParamMap initial_;
};

/// Layer configuration shared by the SGP model.
layers::SvgpConfig sgp_layer_config(const SgpConfig& c);

/// The registry's sgp entry (models/registry.hpp): one SVGP layer (depth 1), SE kernel.
std::vector<RegistryEntry> sgp_entries();

}  // namespace dkp::models
