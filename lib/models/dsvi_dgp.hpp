// Deep GP with doubly stochastic variational inference, "DSVI" (Salimbeni & Deisenroth 2017;
// reproduced in the DSVI reproduction report (Ashman et al.), sections 3-4; reference code
// notes/reference-implementations.md section 5b).
//
// Model: L GP layers (depth = number of GP layers including the output layer; DGP-2 has one
// hidden layer). Layer l maps D_{l-1} -> D_l with D_l GPs sharing one SE kernel and M inducing
// inputs (layers/svgp.hpp), mean-field q(u) over layers and outputs (report eq. 3.4). Hidden
// widths min(30, D) (issue 5; report section 4). Inner layers have a White kernel and a linear
// mean function (report eq. 3.12, notes 5b `init_layers_linear`):
//   D_in == D_out: identity;
//   D_in >  D_out: fixed W = the first D_out right-singular vectors of the *uncentred* running
//                  inputs X_running (SVD without mean subtraction, as the reference code);
//   D_in <  D_out: zero padding W = [I, 0];
// the output layer has a zero mean function. The running inputs and the inducing inputs are
// propagated through the W's: X_{l+1} = X_l W_l, Z_{l+1} = Z_l W_l (the same k-means Z, mapped,
// at every layer; each layer's Z is then trained on its own).
//
// ELBO (report eq. 3.8), per datapoint: S samples are propagated point by point (eqs. 3.9-3.10):
//   f^l_{n,d} = mu^l_{n,d}(f^{l-1}_n) + sqrt(s^l_{n,d}(f^{l-1}_n) + jitter) eps^l_{n,d},
// (the jitter is GPflow's, added to variances when sampling, notes 5b) and the Gaussian likelihood
// is integrated analytically against the last layer's marginal:
//   elbo = mean_{s,n} E_{N(f; mu^L_sn, s^L_sn)} log N(y_n; f, s2) - kl_weight sum_l KL_l / N_train.
// Noise: sample s takes its draws from rng.child("dsvi-sample", s), layer by layer, so results do
// not depend on how samples are grouped into blocks.
//
// Prediction (report eq. 3.11): S samples propagated the same way; Predictive holds the last
// layer's per-sample means mu^L_sn and variances s^L_sn + s2 (an S-component mixture per point).
#pragma once

#include <armadillo>
#include <string>
#include <vector>

#include "layers/svgp.hpp"
#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

struct DsviConfig {
  size_t depth = 2;           ///< GP layers including the output layer (DSVI-2 .. DSVI-5)
  size_t num_inducing = 100;  ///< M per layer (report section 5.1; reference code)
  size_t hidden_width = 0;    ///< 0: min(30, D) (issue 5; report section 4)
  bool ard = true;            ///< ARD lengthscales (report section 4; the original code has none)
  bool whiten = true;         ///< whitened q(u) (2017 paper code, notes 5b)
  layers::DiagTransform q_diag = layers::DiagTransform::kSoftplus;
  double inner_q_sqrt_scale = 1e-5;  ///< inner layers start almost deterministic (notes 5b)
  double white_variance = 1e-5;      ///< White kernel on inner layers: 1e-5 (2017 code, notes 5b)
  bool learn_white = true;           ///< GPflow parameters are trainable unless fixed
  double lengthscale = 1.0;          ///< report section 4
  double variance = 1.0;             ///< report section 4
  double noise_variance = 0.05;      ///< notes 5b (2018 code, normalised y)
  double jitter = 1e-6;              ///< K_uu jitter and sampling jitter (GPflow default)
  size_t kmeans_iterations = 10;     ///< scipy kmeans2 default iter
  size_t predict_max_rows = 50000;   ///< rows (points x samples) per block in predict()
  /// 0: regression (Gaussian likelihood with learned noise); C >= 2: classification with the
  /// robust-max likelihood over C output GPs (report section 3.1.1; no noise parameter).
  size_t num_classes = 0;
};

/// The layer widths D_0 (inputs), D_1, ..., D_L = 1 (C for C classes) for D input features.
std::vector<arma::uword> dsvi_widths(arma::uword input_dim, const DsviConfig& config);

/// Layer widths as "13-30-1" (for describe()).
std::string widths_text(const std::vector<arma::uword>& widths);

/// The fixed linear mean function of an inner layer from D_in = X_running.n_cols to D_out
/// features (report eq. 3.12; notes 5b `init_layers_linear`): the identity when equal, the first
/// D_out right-singular vectors of the uncentred running inputs when D_in > D_out, zero padding
/// [I, 0] when D_in < D_out. `model` and `layer` name it in errors.
arma::mat linear_mean_map(const arma::mat& X_running, arma::uword dout, const char* model,
                          size_t layer);

class DsviDgp : public Model {
 public:
  /// Initialises Z by k-means on X_train (models/kmeans.hpp, with `init`) and the mean functions
  /// from X_train. If M is at least the number of distinct training inputs, Z is those inputs.
  /// @throws dkp::ConfigError for depth 0, M = 0, an empty X or a zero hidden width
  DsviDgp(const DsviConfig& config, const arma::mat& X_train, random::Stream& init);
  /// With given initial inducing inputs for the first layer (tests).
  DsviDgp(const DsviConfig& config, const arma::mat& X_train, const arma::mat& Z);

  std::string describe() const override;
  const ParamMap& initial_parameters() const override { return initial_; }
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng, bool keep_hidden = false) const override;

  const std::vector<layers::SvgpLayer>& layers() const { return layers_; }
  const DsviConfig& config() const { return cfg_; }

 private:
  // Propagates samples [s0, s0 + S) of the rows of X through the layers (given their prepared
  // states); returns the last layer's marginals (S n x 1, sample-major rows: row s n + i is
  // sample s0 + s of point i). With `hidden`, also each inner layer's sampled output F_l
  // (S n x D_l, the same row order).
  layers::Marginals propagate(const std::vector<layers::SvgpLayer::State>& states,
                              const arma::mat& X, size_t s0, size_t S, random::Stream& rng,
                              std::vector<arma::mat>* hidden = nullptr) const;

  DsviConfig cfg_;
  std::vector<arma::uword> widths_;
  std::vector<layers::SvgpLayer> layers_;
  ParamMap initial_;
};

/// The registry's dgp dsvi entry (models/registry.hpp).
std::vector<RegistryEntry> dsvi_dgp_entries();

}  // namespace dkp::models
