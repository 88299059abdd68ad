// A global-inducing GP hidden layer on Gram kernels (the Gram DGP of the DKP paper's Table 1
// baselines; the model around it: models/gram_dgp.hpp): given the kernel blocks K = K(G_{l-1}),
// its features F = [u; F_t] are one GIGP sample (layers/gigp.hpp) of width nu = v's columns, and
// the next layer sees their Gram blocks G_l = F F^T / nu.
#pragma once

#include "autodiff/tape.hpp"
#include "kernels/gram.hpp"
#include "layers/gigp.hpp"
#include "random/stream.hpp"

namespace dkp::layers {

/// One sample of a Gram GP layer: the Gram blocks of its features and log p(u) - log q(u).
struct GramLayerSample {
  kernels::GramBlocks G;
  autodiff::Var logpq;
};

/// The layer's GIGP parameters (v P x nu, L_loc P x P, L_scale 1 x 1), checked against the P
/// inducing points; throws dkp::Error naming the shapes otherwise.
GigpParams gram_gp_params(const autodiff::Var& v, const autodiff::Var& L_loc,
                          const autodiff::Var& L_scale, arma::uword P);

/// One sample from the layer's noise-free part (gigp_prepare on K), e.g. prepared once for
/// every sample when K depends on the data only.
GramLayerSample gram_gp_sample(const GigpPrepared& prepared, random::Stream& rng);

/// One sample of the layer on the kernel blocks K.
GramLayerSample gram_gp_layer(const kernels::GramBlocks& K, const autodiff::Var& v,
                              const autodiff::Var& L_loc, const autodiff::Var& L_scale,
                              random::Stream& rng);

}  // namespace dkp::layers
