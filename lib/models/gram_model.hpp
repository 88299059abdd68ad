// Models built on kernels of Gram matrices (DKP paper; notes/reference-implementations.md
// sections 2 and 4): the NNGP (models/nngp.hpp), the deep inverse Wishart process (models/diwp.hpp)
// and the Gram DGP (models/gram_dgp.hpp), with what they share: GramModel.
//
// They carry only the Gram blocks (ii P x P, it P x B, diag tt B x 1) from layer to layer, start
// from the input layer of DKP paper sec. 7 (a learned scale and bias per input feature,
// X' = X diag(exp(s)) + b, applied to the data and to the global inducing inputs X_i alike) and
// end in a global-inducing GP output layer on K(G_L) (appendix G; layers/gigp.hpp).
//
// Layers are numbered 1..depth (depth = L + 1, output included, as in gi_dgp): layer 1 gives the
// input Gram G_1, layers 2..L give G_2..G_L, layer L + 1 = depth is the GIGP output on K(G_L).
// The kernel that feeds layer l (K(G_{l-1}), l = 2..depth) owns the parameters layer{l}.* of an
// SE kernel. depth 3 = "two hidden layers and one output layer" (DKP paper sec. 7).
//
// Parameters (unconstrained; initial values and sources):
//   inducing_inputs P x N0       random subset of the training inputs (as gi_dgp)
//   input.log_scale 1 x N0       0  (bayesfunc MultFeatures, log scale init 0)
//   input.bias      1 x N0       0  (bayesfunc Bias, init 0)
//   layer{l}.log_lengthscale 1x1, layer{l}.log_variance 1x1, l = 2..depth (SE kernel only)
//                                0, 0 (bayesfunc SqExpKernelGram: log l and log height init 0)
//   layer{depth}.v P x 1         y of the inducing subset (inducing_targets; trieste fork, gi_dgp)
//   layer{depth}.L_loc P x P     I;  layer{depth}.L_scale 1x1: log_prec_init / 2 (bayesfunc GIGP)
//   likelihood.log_noise_var 1x1 log 1 (bayesfunc NormalLearnedScale, log sigma = 0)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kernels/gram.hpp"
#include "layers/gigp.hpp"
#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

/// Options shared by the Gram-kernel models.
struct GramModelConfig {
  size_t depth = 3;             ///< layers including the output layer; at least 2
  std::string kernel = "relu";  ///< relu | se
  size_t inducing = 100;        ///< P; capped at the number of training points
  double jitter = 1e-6;  ///< on K's diagonal, relative to h for SE, absolute for ReLU (bayesfunc)
  double log_prec_init = -4.0;  ///< initial log pseudo-precision of the output layer (bayesfunc)
  double noise_var_init = 1.0;  ///< bayesfunc NormalLearnedScale: log sigma = 0
  /// 0: regression (Gaussian likelihood with learned noise); C >= 2: classification with the
  /// categorical softmax likelihood on C output columns (DKP paper eq. 7; likelihoods/softmax.hpp):
  /// the output layer's v starts at one-hot(y) of the picked inducing points, no noise parameter.
  size_t classes = 0;
  /// The learned per-feature scale and bias of the inputs (DKP paper section 7, UCI); the paper
  /// omits them for MNIST and CIFAR-10: without, the first layer sees the inputs as they are.
  bool input_scale_bias = true;
  /// The output layer's kernel times exp(layer{depth}.log_output_scale), learned from 0 (option
  /// output_scale learned); off: K(G_L) as it is, the paper's.
  bool learned_output_scale = false;
};

/// The parts the NNGP and the DIWP share: parameters of the input, kernel and output layers,
/// the Gaussian-likelihood ELBO and the prediction loop. Subclasses provide hidden().
class GramModel : public Model {
 public:
  const ParamMap& initial_parameters() const override { return init_; }
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng, bool keep_hidden = false) const override;

  /// Output moments of one Monte Carlo sample (what elbo/predict use; public for tests).
  struct SampleOut {
    autodiff::Var f_mean, f_var;  ///< B x 1 each
    autodiff::Var logpq;          ///< 1 x 1, log p - log q of all layers at the sample
  };
  /// What every sample's hidden layers share, computed once per elbo / predict call from the
  /// parameters and the data (hidden_shared()).
  struct HiddenShared {
    /// Gram DGP: the first hidden GP layer's noise-free part (a GP layer on K(G_1), whose input
    /// is the data).
    std::optional<layers::GigpPrepared> first;
    /// Gram DGP: G_1, the input Gram `first` is prepared on (Hidden::layers' first entry; a
    /// prediction without keep_hidden leaves it out of its per-sample copies).
    kernels::GramBlocks input_gram;
    /// DIWP: V_l V_l^T / n_l of every inverse Wishart layer (l = 1..L; a P^3 product each).
    std::vector<autodiff::Var> v_terms;
  };
  /// One Monte Carlo sample of every layer: hidden(), then the output layer on K(G_L).
  SampleOut forward(const VarMap& p, const autodiff::Var& X, random::Stream& rng) const;
  /// With `layers`, also every hidden layer's Gram blocks G_1 .. G_L of the sample.
  SampleOut forward(const VarMap& p, const autodiff::Var& X, const HiddenShared& shared,
                    random::Stream& rng, std::vector<kernels::GramBlocks>* layers = nullptr) const;

 protected:
  /// The last hidden Gram blocks G_L of one sample and the hidden layers' log p - log q.
  struct Hidden {
    kernels::GramBlocks G;
    autodiff::Var logpq;
    std::vector<kernels::GramBlocks> layers;  ///< G_1 .. G_L (G_L = G)
  };
  /// `shared`: hidden_shared(p, X), computed once per elbo / predict call.
  virtual Hidden hidden(const VarMap& p, const autodiff::Var& X, const HiddenShared& shared,
                        random::Stream& rng) const = 0;
  /// The sample-independent parts of hidden(); none by default.
  virtual HiddenShared hidden_shared(const VarMap&, const autodiff::Var&) const { return {}; }
  /// True when hidden() is deterministic (NNGP): elbo and predict then compute K(G_L) once and
  /// draw only the output layer per sample.
  virtual bool deterministic_hidden() const { return false; }

  /// Checks the options and data, and initialises the shared parameters (see the table above).
  GramModel(const GramModelConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
            random::Stream& init, const char* name);

  /// Scaled and shifted inducing inputs (P x N0) and inputs X (B x N0).
  /// describe()'s words for the input layer ("with per-feature scale and bias" or "without
  /// learned scale and bias") and the likelihood ("Gaussian likelihood" or "softmax likelihood over
  /// C classes").
  std::string input_words() const;
  std::string likelihood_words() const;
  std::pair<autodiff::Var, autodiff::Var> input_features(const VarMap& p,
                                                         const autodiff::Var& X) const;
  /// K(G) with the kernel that feeds layer l.
  kernels::GramBlocks kernel(const VarMap& p, size_t l, const kernels::GramBlocks& G) const;
  /// The GIGP output layer (layer `depth`) on the kernel blocks K = K(G_L); logpq is its
  /// log p(u) - log q(u).
  SampleOut output(const VarMap& p, const kernels::GramBlocks& K, random::Stream& rng) const;
  /// The output layer's noise-free part on K (what output() computes before drawing).
  layers::GigpPrepared prepare_output(const VarMap& p, const kernels::GramBlocks& K) const;

  GramModelConfig cfg_;
  size_t d0_ = 0;
  ParamMap init_;
};

/// The options a spec gives every Gram-kernel model: depth + 1 layers (--depth counts kernel
/// applications, and these models number the input Gram as a layer too), kernel, inducing
/// points, and C classes without the learned input scale and bias (DKP paper section 7: none
/// for the image datasets).
GramModelConfig gram_model_config(const ModelSpec& spec);

/// A registry entry of a Gram-kernel model with the softmax output (nngp, diwp): the relu and se
/// kernels, regression, and classification with the softmax likelihood with either.
RegistryEntry gram_model_entry(std::string posterior, std::string summary);

}  // namespace dkp::models
