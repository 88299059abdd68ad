#include "layers/gram_gp.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::layers {

using autodiff::Var;

GigpParams gram_gp_params(const Var& v, const Var& L_loc, const Var& L_scale, arma::uword P) {
  if (v.n_rows() != P || v.n_cols() < 1 || L_loc.n_rows() != P || L_loc.n_cols() != P) {
    throw Error(fmt::format("gram dgp hidden layer: v {}x{}, L_loc {}x{} with {} inducing points",
                            v.n_rows(), v.n_cols(), L_loc.n_rows(), L_loc.n_cols(), P));
  }
  return {v, L_loc, L_scale};
}

GramLayerSample gram_gp_sample(const GigpPrepared& g, random::Stream& rng) {
  const GigpOutput out = gigp_sample(g, rng);
  const Var Ft = sample_outputs(out, rng);
  return {kernels::features_to_gram(out.u, Ft, double(out.u.n_cols())), out.logpq};
}

GramLayerSample gram_gp_layer(const kernels::GramBlocks& K, const Var& v, const Var& L_loc,
                              const Var& L_scale, random::Stream& rng) {
  const GigpParams gp = gram_gp_params(v, L_loc, L_scale, K.ii.n_rows());
  return gram_gp_sample(gigp_prepare({K.ii, K.it, K.tt}, gp), rng);
}

}  // namespace dkp::layers
