// Sparse variational GP layer (Titsias 2009; Hensman et al. 2015), as used per layer by the DSVI
// deep GP (Salimbeni & Deisenroth 2017) and on its own by the SGP baseline.
//
// A layer holds D_out independent GPs f_d that share one kernel and one set of M inducing inputs
// Z (notes/reference-implementations.md section 5b: "D_out independent GPs sharing kernel and Z";
// report section 3, "the same pseudo-point locations and kernel for all dimensions"). Each output
// has its own q(u_d) = N(m_d, S_d), S_d = L_d L_d^T with L_d lower triangular (report eq. 3.3).
//
// Parameterisation (both reference code eras, notes 5b):
//   whitened (default; the 2017 paper code): u_d = L_K v_d, q(v_d) = N(m_d, S_d), prior N(0, I);
//   not whitened (2018 code's default): q(u_d) = N(m_d, S_d), prior N(0, K_uu).
// The mean function sits outside the inducing variables, as in the reference code: f(x) =
// mean_fn(x) + g(x) with g ~ GP(0, k) and u = g(Z) (equivalent to report eq. 3.6 with
// m - m(Z) reparameterised).
//
// Marginals q(f_n) = N(mu_n, s_n) per point and output (report eqs. 2.12-2.13 and 3.6-3.7; never
// the N x N covariance). With A = L_K^{-1} K_uf (M x N) and Aq = A (whitened) or L_K^{-T} A
// (= K_uu^{-1} K_uf, not whitened):
//   mu_nd = mean_fn(x_n)_d + Aq_n^T m_d,
//   s_nd  = k(x_n, x_n) - ||A_n||^2 + ||L_d^T Aq_n||^2.
// KL per output (analytic; summed over outputs):
//   whitened:     1/2 [ ||L_d||_F^2 + ||m_d||^2 - M - log|S_d| ]
//   not whitened: 1/2 [ ||L_K^{-1} L_d||_F^2 + ||L_K^{-1} m_d||^2 - M + log|K_uu| - log|S_d| ].
//
// Kernel: squared exponential (kernels/se.hpp) with ARD lengthscales (1 x D_in; report section 4,
// the table protocol) or one shared lengthscale (1 x 1; the original DSVI code, notes 5b), plus an
// optional White kernel (inner DSVI layers, notes 5b) that adds its variance to the diagonal of
// K_uu and to k(x, x) but not to K_uf (GPflow's White kernel is zero between distinct inputs).
// K_uu also gets a fixed absolute jitter (GPflow's default 1e-6, notes 5b), and
// autodiff::cholesky adds its bounded relative jitter only if the factorisation still fails.
//
// Parameters (unconstrained values, names "<prefix>.<name>"):
//   Z                  M x D_in     identity
//   kern.lengthscales  1 x D_in or 1 x 1, positive()   (init 1, report section 4)
//   kern.variance      1 x 1, positive()               (init 1, report section 4)
//   kern.white         1 x 1, positive()               (only when white_variance > 0 and learned)
//   q_mu               M x D_out    identity           (init 0, reference code)
//   q_sqrt             M(M+1)/2 x D_out: column d packs the lower triangle of L_d column by column
//                      (rows j..M-1 of column j); off-diagonal entries are stored as they are, the
//                      diagonal through the DiagTransform (softplus by default, see below).
//                      Init q_sqrt_scale * I (whitened) or q_sqrt_scale * chol(K_uu) (not whitened,
//                      the 2018 code's "initialise to the prior"); q_sqrt_scale = 1e-5 for inner
//                      DSVI layers (notes 5b).
// positive(u) = softplus(u) + 1e-6: GPflow 0.x/1.x `transforms.positive` = Log1pe(lower=1e-6), the
// transform of every positive parameter in the reference code (kernel variance, lengthscales,
// White variance, likelihood variance).
#pragma once

#include <armadillo>
#include <string>

#include "autodiff/params.hpp"
#include "autodiff/tape.hpp"

namespace dkp::layers {

using autodiff::Var;

// ---- ops used by the layer (gradient-tested in tests/models/svgp_test.cpp) ---------------------

/// How the diagonal of each Cholesky factor L_d is stored. GPflow stores it unconstrained (its
/// KL takes log(diag^2)); by default we keep it positive so that log|S_d| and the factor are
/// unambiguous. Softplus (default) behaves like exp for the tiny initial values of inner DSVI
/// layers (1e-5) and like the identity for values of order one and more, which keeps Adam's
/// steps on the final layer's factor close to GPflow's unconstrained ones; but from 1e-5 it takes
/// some thousand steps of the learning rate 1e-2 to reach order one, where GPflow's takes about
/// a hundred. kIdentity is GPflow's: the diagonal as it is, of either sign (log|S_d| from
/// log|diag|; a column's sign does not change S_d = L_d L_d^T).
enum class DiagTransform { kSoftplus, kExp, kIdentity };

/// Lower bound added by positive() (GPflow Log1pe's `lower`).
inline constexpr double kPositiveLower = 1e-6;

/// softplus(u) + kPositiveLower, elementwise (GPflow `transforms.positive`).
Var positive(const Var& u);
/// Inverse of positive() for plain values c > kPositiveLower.
arma::mat positive_inverse(const arma::mat& c);
double positive_inverse(double c);

/// Unpacks the packed lower triangles (M(M+1)/2 x D, see above) into the D factors side by side,
/// an M x (M D) matrix [L_1, ..., L_D] with zero upper triangles, the diagonals through `t`.
Var unpack_lower(const Var& packed, arma::uword m, DiagTransform t);
/// Inverse of unpack_lower for plain values: packs the lower triangles of the M x (M D) factors
/// (their diagonals must be positive).
arma::mat pack_lower(const arma::mat& factors, DiagTransform t);

/// sum_d sum_i log |L_d(i, i)| for the M x (M D) factors (1 x 1): log |S_d| / 2 summed.
Var sum_log_diag_blocks(const Var& factors);

/// The variance correction of the marginals, N x D: out(n, d) = ||L_d^T Aq_n||^2 - ||A_n||^2, for
/// A and Aq of size M x N (columns are points) and the M x (M D) factors. Forward: one triangular
/// product (dtrmm) per output, M^2 N D flops. The products L_d^T Aq are kept for the backward pass
/// when they fit in kMarginalVarKeepBytes, and recomputed otherwise. Backward: dAq via one more
/// dtrmm per output, dL_d = tril(2 Aq diag(g_d) Aq^T L_d) via two dsyrk (columns with positive and
/// negative g_d), i.e. 2 M^2 N D flops (3 when recomputing) instead of the 4 of a plain gemm.
inline constexpr double kMarginalVarKeepBytes = 256.0 * 1024 * 1024;
/// `keep_bytes` overrides the budget (tests exercise both paths).
Var marginal_var_delta(const Var& A, const Var& Aq, const Var& factors,
                       double keep_bytes = kMarginalVarKeepBytes);

/// E_{N(f; m, v)} log N(y; f, s2), averaged over all elements (1 x 1):
///   -1/2 log(2 pi s2) - ((y - m)^2 + v) / (2 s2)   (GPflow Gaussian.variational_expectations).
/// `mean`, `var` are n x 1, `y` has n entries, `noise_var` is 1 x 1.
Var gaussian_expected_loglik(const Var& mean, const Var& var, const arma::vec& y,
                             const Var& noise_var);

// ---- the layer ----------------------------------------------------------------------------------

/// Mean function of a layer (report eq. 3.12; notes 5b). Never trainable.
enum class MeanFunction {
  kZero,      ///< final layer
  kIdentity,  ///< D_in == D_out
  kLinear,    ///< fixed W (D_in x D_out): SVD projection or zero-padding [I, 0]
};

struct SvgpConfig {
  arma::uword num_outputs = 1;  ///< D_out GPs sharing kernel and Z
  bool whiten = true;           ///< the 2017 paper code (notes 5b)
  bool ard = true;              ///< one lengthscale per input dimension (report section 4)
  DiagTransform q_diag = DiagTransform::kSoftplus;
  double q_sqrt_scale = 1.0;    ///< initial L_d = scale * I (or scale * chol K_uu); 1e-5 inner
  double lengthscale = 1.0;     ///< initial lengthscales (report section 4)
  double variance = 1.0;        ///< initial kernel variance (report section 4)
  double white_variance = 0.0;  ///< initial White kernel variance; 0: no White kernel
  bool learn_white = true;      ///< GPflow parameters are trainable unless fixed (2018 code)
  double jitter = 1e-6;         ///< absolute jitter on K_uu (GPflow default, notes 5b)
};

/// Marginals of one layer at n inputs: n x D_out each.
struct Marginals {
  Var mean;
  Var var;
};

class SvgpLayer {
 public:
  /// `Z` (M x D_in): initial inducing inputs. `W` (D_in x D_out) only for MeanFunction::kLinear.
  /// @throws dkp::ConfigError on inconsistent sizes
  SvgpLayer(std::string prefix, const arma::mat& Z, SvgpConfig config,
            MeanFunction mean = MeanFunction::kZero, arma::mat W = {});

  /// Adds this layer's initial unconstrained parameters to `params`.
  void add_initial_parameters(autodiff::ParamMap& params) const;

  /// Quantities computed once per ELBO/prediction evaluation: the Cholesky factor of K_uu, the
  /// unpacked q_sqrt factors and the constrained kernel parameters.
  struct State {
    Var Z, Zs;    ///< inducing inputs, and scaled by the lengthscales
    Var log_ell;  ///< log lengthscales (1 x D_in or 1 x 1)
    Var kvar;     ///< kernel variance (1 x 1)
    Var kdiag;    ///< k(x, x) = variance (+ White variance), 1 x 1
    Var LK;       ///< lower Cholesky factor of K_uu (M x M)
    Var q_mu;     ///< M x D_out
    Var factors;  ///< M x (M D_out)
  };
  State prepare(const autodiff::VarMap& params) const;

  /// q(f_n) for the rows of X (n x D_in).
  Marginals marginals(const State& s, const Var& X) const;

  /// sum_d KL(q(u_d) || p(u_d)) (1 x 1).
  Var kl(const State& s) const;

  const std::string& prefix() const { return prefix_; }
  arma::uword num_inducing() const { return Z0_.n_rows; }
  arma::uword input_dim() const { return Z0_.n_cols; }
  arma::uword output_dim() const { return cfg_.num_outputs; }
  const SvgpConfig& config() const { return cfg_; }
  MeanFunction mean_function() const { return mean_; }
  const arma::mat& mean_weights() const { return W_; }

  /// "<prefix>.<name>"
  std::string name(const char* what) const { return prefix_ + "." + what; }

 private:
  std::string prefix_;
  arma::mat Z0_;
  SvgpConfig cfg_;
  MeanFunction mean_;
  arma::mat W_;
};

/// The n x n SE(+White) kernel matrix of plain values with the given constrained parameters (for
/// tests and initialisation): variance * exp(-1/2 ||(x - z) / ell||^2).
arma::mat se_kernel(const arma::mat& X, const arma::mat& Z, const arma::rowvec& ell,
                    double variance);

}  // namespace dkp::layers
