// Multi-class classification with the categorical likelihood on softmax logits (the DKP paper,
// eq. 7): p(y | f) = softmax(f)_y. The ELBO's expectation is a Monte Carlo average over sampled
// logits, as in the paper's Algorithm 1 (and bayesfunc); the predictive is the average of
// softmax(f_s) over posterior samples s.
#pragma once

#include <armadillo>

#include "autodiff/tape.hpp"

namespace dkp::likelihoods {

/// Which classification likelihood a model's predictive belongs to (models::Predictive).
enum class ClassLikelihood {
  RobustMax,  ///< Gaussian latent marginals per sample (likelihoods/robustmax.hpp)
  Softmax,    ///< sampled logits per sample (this file)
  Probit,     ///< one Gaussian latent marginal per sample, two classes (likelihoods/probit.hpp)
};

/// Latent columns per sample of a classification predictive over `classes` classes: 1 for the
/// probit, `classes` otherwise.
inline size_t latent_columns(size_t classes, ClassLikelihood kind) {
  return kind == ClassLikelihood::Probit ? 1 : classes;
}

/// Sum over the rows n of log softmax(F_n)_{y_n} for N x C logits F; an autodiff op (adjoint
/// onehot(y) - softmax(F) per row). Throws Error on labels outside 0 .. C - 1.
autodiff::Var log_softmax_pick_sum(const autodiff::Var& F, const arma::uvec& y);

/// softmax of every row of F (stable: the row maximum is subtracted first).
arma::mat softmax_rows(const arma::mat& F);

}  // namespace dkp::likelihoods
