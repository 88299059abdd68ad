#include "layers/gigp.hpp"

#include <cmath>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"

namespace dkp::layers {

namespace ad = dkp::autodiff;

GigpOutput gigp_forward(const KernelBlocks& k, const GigpParams& p, random::Stream& rng) {
  ad::Tape& tape = k.ii.tape();
  const arma::uword P = k.ii.n_rows(), W = p.v.n_cols();
  const Var Lk = ad::cholesky(k.ii, "gigp K_ii");
  // L = L_loc exp(L_scale) / mean(diag L_loc)
  const Var scale = ad::div(ad::exp(p.L_scale), ad::scale(ad::trace(p.L_loc), 1.0 / double(P)));
  const Var L = ad::mul(scale, p.L_loc);
  const Var KL = ad::matmul(k.ii, L);
  const Var M = ad::add(ad::matmul(L, KL, true, false), tape.constant(arma::eye(P, P)));
  const Var Lm = ad::cholesky(M, "gigp L^T K L + I");

  const Var eps1 = tape.constant(random::normal_matrix(rng, P, W));
  const Var eps2 = tape.constant(random::normal_matrix(rng, P, W));
  const Var a = ad::matmul(L, p.v, true, false);  // L^T v
  const Var r = ad::matmul(L, a) + ad::solve_lower(Lk, eps1, true) + ad::matmul(L, eps2);
  const Var Kr = ad::matmul(k.ii, r);
  const Var s = ad::solve_lower(Lm, ad::solve_lower(Lm, ad::matmul(L, Kr, true, false)), true);
  GigpOutput out;
  out.u = Kr - ad::matmul(KL, s);

  // log N(a; 0, M) - log N(a; L^T u, I); the log 2π terms cancel.
  const Var b = ad::solve_lower(Lm, a);
  const Var resid = a - ad::matmul(L, out.u, true, false);
  out.logpq = ad::scale(ad::logdet_chol(Lm), -0.5 * double(W)) -
              ad::scale(ad::sum(ad::square(b)), 0.5) + ad::scale(ad::sum(ad::square(resid)), 0.5);

  const Var A = ad::solve_lower(Lk, k.it);  // L_K^{-1} K_it
  out.f_mean = ad::matmul(A, ad::solve_lower(Lk, out.u), true, false);
  out.f_var = k.tt - ad::matmul(ad::square(A), tape.constant(arma::ones(P, 1)), true, false);
  return out;
}

Var sample_outputs(const GigpOutput& out, random::Stream& rng) {
  ad::Tape& tape = out.f_mean.tape();
  const arma::uword B = out.f_mean.n_rows(), W = out.f_mean.n_cols();
  const Var sd = ad::matmul(ad::sqrt(out.f_var), tape.constant(arma::ones(1, W)));
  return out.f_mean + ad::mul(sd, tape.constant(random::normal_matrix(rng, B, W)));
}

}  // namespace dkp::layers
