#include "models/gram_dgp.hpp"

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "layers/gigp.hpp"
#include "util/error.hpp"

namespace dkp::models {

using autodiff::Var;

GpLayerSample gram_dgp_hidden_layer(const kernels::GramBlocks& K, const Var& v, const Var& L_loc,
                                    const Var& L_scale, random::Stream& rng) {
  const arma::uword P = K.ii.n_rows();
  if (v.n_rows() != P || v.n_cols() < 1 || L_loc.n_rows() != P || L_loc.n_cols() != P) {
    throw Error(fmt::format("gram dgp hidden layer: v {}x{}, L_loc {}x{} with {} inducing points",
                            v.n_rows(), v.n_cols(), L_loc.n_rows(), L_loc.n_cols(), P));
  }
  const layers::GigpOutput out =
      layers::gigp_forward({K.ii, K.it, K.tt}, layers::GigpParams{v, L_loc, L_scale}, rng);
  const Var Ft = layers::sample_outputs(out, rng);
  return {kernels::features_to_gram(out.u, Ft, double(v.n_cols())), out.logpq};
}

GramDgp::GramDgp(const GramDgpConfig& cfg, const arma::mat& X_train, const arma::vec& y_train,
                 random::Stream& init)
    : GramModel(cfg, X_train, y_train, init, "gram-dgp") {
  width_ = cfg.width > 0 ? cfg.width : d0_;
  const size_t P = cfg_.inducing;
  for (size_t l = 2; l < cfg_.depth; ++l) {
    init_[layer_key(l, "v")] = random::normal_matrix(init, P, width_);
    init_[layer_key(l, "L_loc")] = arma::eye(P, P);
    init_[layer_key(l, "L_scale")] = arma::mat(1, 1, arma::fill::value(0.5 * cfg_.log_prec_init));
  }
}

std::string GramDgp::describe() const {
  return fmt::format(
      "global-inducing DGP on Gram kernels: {} kernel applications (input Gram with per-feature "
      "scale and bias, {} GP hidden layer{} of width {}, global-inducing output), {} kernel, {} "
      "inducing points",
      cfg_.depth - 1, cfg_.depth - 2, cfg_.depth == 3 ? "" : "s", width_, cfg_.kernel,
      cfg_.inducing);
}

GramModel::Hidden GramDgp::hidden(const VarMap& p, const Var& X, random::Stream& rng) const {
  const auto [Fi, Ft] = input_features(p, X);
  kernels::GramBlocks G = kernels::features_to_gram(Fi, Ft, double(d0_));
  Var logpq = X.tape().constant(0.0);
  for (size_t l = 2; l < cfg_.depth; ++l) {
    const GpLayerSample s =
        gram_dgp_hidden_layer(kernel(p, l, G), get(p, layer_key(l, "v")),
                              get(p, layer_key(l, "L_loc")), get(p, layer_key(l, "L_scale")), rng);
    G = s.G;
    logpq = logpq + s.logpq;
  }
  return {G, logpq};
}

}  // namespace dkp::models
