// Deep GPs with posteriors correlated across layers: the three models of the compositional-
// uncertainty paper (Ustyuzhaninov, Kazlauskaite, Kaiser, Bodin, Campbell, Ek 2020, sections 2
// and 4; notes/reference-implementations.md section 6), for one-dimensional layers, as in its
// experiment (Figure 5 and Table 1: two layers, SE kernel then periodic kernel).
//
// Every layer l = 1..L maps one dimension to one: f_l = f_l(f_{l-1}), f_0 = x, with a GP prior of
// mean mu_l (identity for the inner layers, zero for the last) and kernel
//   SE:       k(a, b) = alpha exp(-gamma / 2 (a - b)^2),
//   periodic: k(a, b) = alpha exp(-2 gamma sin^2(omega (a - b)))   (the last layer by default),
// alpha, gamma, omega positive (exp of "layer{l}.log_alpha", ".log_gamma", ".log_omega", init 1).
// Train points are sampled with their full covariance within a layer (chol(cov + jitter I)), and
// the likelihood N(y; f_L, noise_std^2) has a fixed noise (0.01). The posteriors:
//
//  - "dsvi" (mean field, the paper's baseline, eq. 4): q(u_l) = N(m_l, S_l S_l^T) independently per
//  layer,
//    inducing inputs Z_l per layer ("layer{l}.Z", init linspace(-1, 1, M)), u_l integrated out in
//    each layer's conditional; KL(q(u_l) || N(mu_l(Z_l), K_l(Z_l, Z_l) + jitter I)) analytic.
//    Init m_l = mu_l(Z_l), S_l = 1e-2 I ("layer{l}.m", ".S", S lower-triangular, any signs).
//  - "jointly-gaussian" (section 4.1, sampling {u_l}): q(u_1, ..., u_L) = N(m, S S^T) over all L M
//  inducing
//    outputs ("q.m", "q.S", init stacked mu_l(Z_l) and 1e-2 I); each sample draws all u_l, then
//    the layers' conditionals given them; KL to the block-diagonal prior analytic.
//  - "inducing-locations" (section 4.2, inducing points as inducing locations): one set of inducing
//  inputs
//    "Z0"; q(f_l^z) = N(m_l, S_l S_l^T) per layer (init mu_l(linspace) + 0.01 N(0, 1) and
//    1e-3 I); layer l's inducing inputs are the sampled f_{l-1}^z of the same sample, its
//    prior p(f_l^z | f_{l-1}^z) = N(mu_l(f_{l-1}^z), K_l(f_{l-1}^z, f_{l-1}^z) + (1/beta + jitter)
//    I) with beta = 1e8 (eq. 20-23), and the KL is analytic given each sample, averaged over
//    samples.
#pragma once

#include <armadillo>
#include <string>
#include <vector>

#include "models/model.hpp"
#include "models/registry.hpp"

namespace dkp::models {

struct CdgpConfig {
  std::string posterior = "dsvi";  ///< dsvi | jointly-gaussian | inducing-locations
  size_t depth = 2;                ///< layers L (the paper: 2)
  size_t inducing = 10;            ///< M per layer (the paper: 10)
  double noise_std = 0.01;         ///< fixed likelihood noise standard deviation
  bool last_periodic = true;       ///< the last layer's kernel is periodic (else SE)
  double jitter = 1e-6;            ///< added to every covariance before factorising (reference)
  double beta = 1e8;  ///< "inducing-locations": prior noise 1 / beta on f_l^z (reference)
  /// "jointly-gaussian": the cross-layer blocks of q's Cholesky factor held at 0 for this many
  /// training steps (held_parameters), so that the run is mean field until then; they are then
  /// the parameter q.S_cross (q.S keeps the blocks of the diagonal). 0: one parameter q.S.
  size_t mf_until = 0;
  /// "jointly-gaussian": the inducing outputs integrated out analytically (the paper's eqs.
  /// 15-17, with the full cross-layer covariance: each layer's q(u_l) is conditioned on the
  /// layers drawn before it) instead of sampled with every draw (its Sec. 4.1, "Sampling").
  bool analytic = false;
};

/// The posteriors' names, as `dkp toy --posterior` takes them.
const std::vector<std::string>& cdgp_posteriors();
/// Whether `name` is one of cdgp_posteriors().
bool is_cdgp_posterior(const std::string& name);

class CompositionalDgp : public Model {
 public:
  /// Throws ConfigError for an unknown posterior, depth < 1, M < 1 or noise_std <= 0. `init`
  /// draws the "inducing-locations" posterior's initial means.
  CompositionalDgp(const CdgpConfig& config, random::Stream& init);

  std::string describe() const override;
  const ParamMap& initial_parameters() const override { return initial_; }
  /// "jointly-gaussian" with mf_until > 0: q.S_cross until step mf_until.
  std::vector<std::pair<std::string, size_t>> held_parameters() const override;
  /// ELBO per datapoint: (mean over samples of sum_n log N(y_n; f_L,n, noise^2) - KL) / N for a
  /// full batch (model.hpp contract; the paper's Table 1 reports N times this). X is N x 1.
  ElboEstimate elbo(const VarMap& params, const arma::mat& X, const arma::vec& y, double n_train,
                    size_t samples, double kl_weight, random::Stream& rng) const override;
  /// Samples of the composition f_L at X (jointly over the points within a sample), each with the
  /// likelihood's variance; with keep_hidden, f_1 .. f_{L-1} at X too.
  Predictive predict(const ParamMap& params, const arma::mat& X, size_t samples,
                     random::Stream& rng, bool keep_hidden = false) const override;
  /// Each layer's own function evaluated at the inputs X (not at the previous layer's output):
  /// result[l - 1](i, s) is f_l(X_i) in sample s, from the posterior over layer l (the first two
  /// columns of the paper's Figure 5; Table 1's Var[f_1(0)] and Var[f_2(0)] are their variances
  /// at X = 0). In "inducing-locations", layer l's function is the GP given the sample's pair
  /// (f_{l-1}^z, f_l^z).
  std::vector<arma::mat> layer_functions(const ParamMap& params, const arma::mat& X, size_t samples,
                                         random::Stream& rng) const;
  /// "var_f{l}_at_0", l = 1..L: Var[f_l(0)] over kSummarySamples samples of layer_functions at
  /// X = 0 (the paper's Table 1; the variance with the n - 1 denominator).
  std::vector<std::pair<std::string, double>> posterior_summaries(
      const ParamMap& params, random::Stream& rng) const override;
  static constexpr size_t kSummarySamples = 10000;

  const CdgpConfig& config() const { return cfg_; }

 private:
  struct SampleOut {
    std::vector<autodiff::Var> f;    ///< f_1 .. f_L at the points (composition)
    std::vector<autodiff::Var> own;  ///< layer l's function at the points themselves
    autodiff::Var kl;  ///< "inducing-locations" with with_kl: this sample's KL (else invalid)
  };
  SampleOut sample(const VarMap& p, const autodiff::Var& X, random::Stream& rng, bool own_functions,
                   bool with_kl) const;
  autodiff::Var kl_shared(
      const VarMap& p) const;  ///< "dsvi" and "jointly-gaussian": the analytic KL
  /// "jointly-gaussian": the lower-triangular factor of q's covariance over all layers' inducing
  /// outputs, tril(q.S), or with mf_until its diagonal blocks plus q.S_cross's other blocks.
  autodiff::Var joint_factor(const VarMap& p) const;
  /// sample() for "jointly-gaussian" with `analytic`.
  SampleOut sample_analytic(const VarMap& p, const autodiff::Var& X, random::Stream& rng,
                            bool own_functions) const;

  CdgpConfig cfg_;
  ParamMap initial_;
};

/// The registry's cdgp entries, one per posterior (dsvi, the default, also "mean-field";
/// jointly-gaussian; inducing-locations): the model of `dkp toy` and experiments/toy.yaml,
/// one-dimensional inputs. The spec's kernel is the last layer's: periodic (the paper's) or se;
/// the inner layers' is SE (CdgpConfig::last_periodic).
std::vector<RegistryEntry> cdgp_entries();

}  // namespace dkp::models
