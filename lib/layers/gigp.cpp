#include "layers/gigp.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "linalg/chol.hpp"
#include "linalg/columns.hpp"
#include "linalg/symmetric.hpp"
#include "linalg/triangular.hpp"
#include "util/error.hpp"

namespace dkp::layers {

namespace ad = dkp::autodiff;

namespace {

// op(T) X with T lower triangular (only its lower triangle is read), op(T) = T or T^T, through
// dtrmm (half the flops of a general product). Adjoints: Xbar = op(T)^T Ybar;
// Tbar = tril(Ybar X^T) (no trans) or tril(X Ybar^T) (trans).
Var trmm_lower(const Var& T, const Var& X, bool trans) {
  const int n = int(T.n_rows()), m = int(X.n_cols());
  arma::mat Y = X.val();
  if (n > 0 && m > 0) {
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans,
                CblasNonUnit, n, m, 1.0, T.val().memptr(), n, Y.memptr(), n);
  }
  return T.tape().record(std::move(Y), {T, X}, [T, X, trans, n, m](ad::Node* out) {
    return [T, X, trans, n, m, out] {
      const arma::mat& G = out->adj;
      if (T.needs_grad()) {
        arma::mat& Tbar = T.node()->adj_ref();
        if (trans)
          linalg::add_tri_product(Tbar, linalg::Uplo::Lower, X.val(), G, false, 1.0);
        else
          linalg::add_tri_product(Tbar, linalg::Uplo::Lower, G, X.val(), false, 1.0);
      }
      if (X.needs_grad()) {
        arma::mat Xbar = G;
        if (n > 0 && m > 0) {
          cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasNoTrans : CblasTrans,
                      CblasNonUnit, n, m, 1.0, T.val().memptr(), n, Xbar.memptr(), n);
        }
        ad::accumulate(X, std::move(Xbar));
      }
    };
  });
}

// C^T C + I through dsyrk (half the flops of a general product), returned symmetric.
// Adjoint: Cbar = C (Mbar + Mbar^T).
Var gram_plus_identity(const Var& C) {
  const int k = int(C.n_rows()), n = int(C.n_cols());
  arma::mat M(n, n, arma::fill::none);
  if (n > 0) {
    if (k > 0) {
      cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n, k, 1.0, C.val().memptr(), k, 0.0,
                  M.memptr(), n);
    } else {
      M.zeros();
    }
    M = arma::symmatl(M);
    M.diag() += 1.0;
  }
  return C.tape().record(std::move(M), {C}, [C](ad::Node* out) {
    return [C, out] {
      const arma::mat S = linalg::symmetric_sum(out->adj);
      ad::accumulate(C, C.val() * S);
    };
  });
}

}  // namespace

// Each panel of K_it, A and their adjoints is used while in cache: on a large batch the
// composition of a solve, a column sum of squares and a product passed over the P x B blocks some
// twelve times (kin8nm GI-DGP depth-2 step, T = 1: 160 against 192 ms). A is kept for the
// adjoint.
ConditionalMoments conditional_moments(const Var& Lk, const Var& K, const Var& tt, const Var& w) {
  const arma::uword P = K.n_rows(), B = K.n_cols(), WS = w.n_cols();
  auto A = std::make_shared<arma::mat>(P, B, arma::fill::none);
  arma::mat fm(B, WS, arma::fill::none), fv(B, 1, arma::fill::none);
  const arma::mat& Kv = K.val();
  const arma::mat& wv = w.val();
  const double* ttv = tt.val().memptr();
  const linalg::PanelFn fill = [&](arma::uword c0, arma::uword nc, double* panel) {
    std::copy(Kv.colptr(c0), Kv.colptr(c0) + P * nc, panel);
  };
  const linalg::PanelFn done = [&](arma::uword c0, arma::uword nc, double* panel) {
    linalg::col_sumsq(panel, P, nc, fv.memptr() + c0);  // then k_tt - those sums
    for (arma::uword j = 0; j < nc; ++j) fv[c0 + j] = ttv[c0 + j] - fv[c0 + j];
    if (P > 0 && WS > 0) {  // rows c0 .. c0 + nc - 1 of f_mean = panel^T w
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(nc), int(WS), int(P), 1.0, panel,
                  int(P), wv.memptr(), int(P), 0.0, fm.memptr() + c0, int(B));
    } else if (WS > 0) {
      for (arma::uword c = 0; c < WS; ++c)
        for (arma::uword j = 0; j < nc; ++j) fm(c0 + j, c) = 0.0;
    }
  };
  // L_K's leaf inverses serve the solve here and the one with L_K^T in the adjoint.
  const std::shared_ptr<const linalg::TriLeaves> leaves =
      B > 0 ? linalg::tri_leaves(Lk.val(), linalg::Uplo::Lower, B) : nullptr;
  if (B > 0) {
    linalg::tri_solve_panels(Lk.val(), *A, linalg::Uplo::Lower, false, fill, done, leaves.get());
  }
  ad::Tape& tape = K.tape();
  auto [f_mean, f_var] = tape.record_pair(
      std::move(fm), std::move(fv), {Lk, K, tt, w},
      [Lk, K, tt, w, A, leaves](ad::Node* out, ad::Node* out_var) {
        return [Lk, K, tt, w, A, leaves, out, out_var] {
          const arma::uword P = A->n_rows, B = A->n_cols, WS = w.n_cols();
          const arma::mat& dFm = out->adj;
          const arma::vec g =
              out_var->has_adj() ? arma::vec(out_var->adj) : arma::vec(B, arma::fill::zeros);
          if (tt.needs_grad()) ad::accumulate(tt, arma::mat(g));
          if (!(K.needs_grad() || Lk.needs_grad() || w.needs_grad()) || B == 0) return;
          arma::mat dw(P, WS, arma::fill::zeros), dL(P, P, arma::fill::zeros);
          arma::mat X(P, B, arma::fill::none);  // K_it's adjoint
          const bool need_w = w.needs_grad(), need_L = Lk.needs_grad();
          const arma::mat& wv = w.val();
          // Panel of A's adjoint, w dFm^T - 2 A diag(g), before the solve with L_K^T. The
          // panel (fresh memory, out of cache on a large batch) is written once with -2 A
          // diag(g), then the product is added to it (beta = 1): a dgemm with beta = 0 would
          // first clear it, one more pass (kin8nm: the 100 x 256 x 8 product ran at 8 GFlop/s).
          const linalg::PanelFn fill = [&](arma::uword c0, arma::uword nc, double* panel) {
            const double* Ap = A->colptr(c0);
            for (arma::uword j = 0; j < nc; ++j) {
              const double gj = -2.0 * g[c0 + j];
              for (arma::uword i = 0; i < P; ++i) panel[j * P + i] = gj * Ap[j * P + i];
            }
            if (P > 0 && WS > 0) {
              cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(P), int(nc), int(WS), 1.0,
                          wv.memptr(), int(P), dFm.memptr() + c0, int(B), 1.0, panel, int(P));
            }
            if (need_w && P > 0 && WS > 0) {  // dw += A_panel dFm_panel
              cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(P), int(WS), int(nc), 1.0,
                          Ap, int(P), dFm.memptr() + c0, int(B), 1.0, dw.memptr(), int(P));
            }
          };
          // Solved: the panel is K_it's adjoint; L_K's is -tril(Kbar A^T).
          const linalg::PanelFn done = [&](arma::uword c0, arma::uword nc, double* panel) {
            if (!need_L) return;
            const arma::mat Kb(panel, P, nc, false, true);
            const arma::mat Ap(const_cast<double*>(A->colptr(c0)), P, nc, false, true);
            linalg::add_tri_product(dL, linalg::Uplo::Lower, Kb, Ap, false, -1.0);
          };
          linalg::tri_solve_panels(Lk.val(), X, linalg::Uplo::Lower, true, fill, done,
                                   leaves.get());
          if (need_L) ad::accumulate(Lk, std::move(dL));
          if (need_w) ad::accumulate(w, std::move(dw));
          if (K.needs_grad()) ad::accumulate(K, std::move(X));
        };
      });
  return {f_mean, f_var};
}

Var gigp_precision_factor(const GigpParams& p) {
  const double P = double(p.L_loc.n_rows());
  const Var scale = ad::div(ad::exp(p.L_scale), ad::scale(ad::trace(p.L_loc), 1.0 / P));
  return ad::mul(scale, p.L_loc);
}

arma::mat gigp_precision_factor_plain(const arma::mat& L_loc, double L_scale) {
  return std::exp(L_scale) / (arma::trace(L_loc) / double(L_loc.n_rows)) * L_loc;
}

GigpPrepared gigp_prepare(const KernelBlocks& k, const GigpParams& p, const Var& L_given,
                          const Var& Lk_given) {
  const arma::uword W = p.v.n_cols();
  GigpPrepared g;
  g.Lk = Lk_given.valid() ? Lk_given : ad::cholesky(k.ii, "gigp K_ii");
  g.L = L_given.valid() ? L_given : gigp_precision_factor(p);
  // With K = L_K L_K^T: C = L_K^T L and M = L^T K L + I = C^T C + I.
  g.C = trmm_lower(g.Lk, g.L, true);
  g.Lm = ad::cholesky(gram_plus_identity(g.C), "gigp L^T K L + I");
  g.a = ad::matmul(g.L, p.v, true, false);  // L^T v
  // log N(a; 0, M) without the 2π term (it cancels against log N(a; L^T u, I)).
  const Var b = ad::solve_lower(g.Lm, g.a);
  g.logpq =
      ad::scale(ad::logdet_chol(g.Lm), -0.5 * double(W)) - ad::scale(ad::sum(ad::square(b)), 0.5);
  g.Kit = k.it;
  g.tt = k.tt;
  return g;
}

void gigp_share(GigpPrepared& g) {
  if (g.A.valid()) return;
  g.A = ad::solve_lower(g.Lk, g.Kit);   // L_K^{-1} K_it
  g.f_var = g.tt - ad::col_sumsq(g.A);  // k_tt - diag(K_ti K^{-1} K_it)
}

namespace {

// The stacked-noise columns of output column c in each of the S samples: c, W + c, ...
arma::uvec sample_columns(arma::uword c, arma::uword W, arma::uword S) {
  arma::uvec idx(S);
  for (arma::uword s = 0; s < S; ++s) idx[s] = s * W + c;
  return idx;
}

// The per-output layers take one precision factor per output column.
void check_factor_count(size_t factors, arma::uword W) {
  if (factors != W) {
    throw Error(fmt::format("gigp per-output precision: {} factors for {} columns", factors, W));
  }
}

// The taped layer's factors must also be set (an unset one would be read as null).
void check_factors(const std::vector<Var>& factors, arma::uword W) {
  check_factor_count(factors.size(), W);
  for (size_t c = 0; c < factors.size(); ++c) {
    if (!factors[c].valid()) {
      throw Error(fmt::format("gigp per-output precision: factor {} is not set", c));
    }
  }
}

// w = L_K^{-1} u for stacked noise, and log p(u) - log q(u) summed over the samples.
struct Whitened {
  Var w, logpq;
};

Whitened gigp_whiten(const GigpPrepared& g, const arma::mat& eps1_m, const arma::mat& eps2_m) {
  ad::Tape& tape = g.Lk.tape();
  const arma::uword W = g.a.n_cols(), cols = eps1_m.n_cols;
  const arma::uword S = W > 0 ? cols / W : 0;
  const Var eps1 = tape.constant(eps1_m);
  const Var eps2 = tape.constant(eps2_m);
  const Var aS = S == 1 ? g.a : ad::repmat(g.a, 1, S);
  // u = Σ r with r = L (a + ε2) + L_K^{-T} ε1 (the bracket has covariance Σ^{-1}) and
  // Σ = K - K L M^{-1} L^T K. With z = L_K^T r = C (a + ε2) + ε1:
  //   u = L_K w,  w = z - C M^{-1} C^T z,  L^T u = C^T w,  L_K^{-1} u = w.
  const Var z = ad::matmul(g.C, aS + eps2) + eps1;
  const Var t = ad::solve_lower(g.Lm, ad::solve_lower(g.Lm, ad::matmul(g.C, z, true, false)), true);
  const Var w = z - ad::matmul(g.C, t);
  // - log N(a; L^T u, I) for every sample. L^T u = C^T w = C^T z - (M - I) t = t, since
  // M t = C^T z: no product needed.
  const Var resid = aS - t;
  const Var noise_free = S == 1 ? g.logpq : ad::scale(g.logpq, double(S));
  return {w, noise_free + ad::scale(ad::sum(ad::square(resid)), 0.5)};
}

}  // namespace

GigpOutput gigp_finish(const GigpPrepared& g, const arma::mat& eps1_m, const arma::mat& eps2_m) {
  const auto [w, logpq] = gigp_whiten(g, eps1_m, eps2_m);
  GigpOutput out;
  out.u = trmm_lower(g.Lk, w, false);
  out.logpq = logpq;
  if (g.A.valid()) {  // shared by several calls: A and f_var computed once (gigp_share)
    out.f_mean = ad::matmul(g.A, w, true, false);
    out.f_var = g.f_var;
  } else {
    const ConditionalMoments m = conditional_moments(g.Lk, g.Kit, g.tt, w);
    out.f_mean = m.f_mean;
    out.f_var = m.f_var;
  }
  return out;
}

GigpOutput gigp_forward_per_output(const KernelBlocks& k, const Var& v, const std::vector<Var>& Ls,
                                   const arma::mat& eps1, const arma::mat& eps2) {
  const arma::uword W = v.n_cols(), S = W > 0 ? eps1.n_cols / W : 0;
  check_factors(Ls, W);
  const Var Lk = ad::cholesky(k.ii, "gigp K_ii");
  std::vector<Var> w(W * S);  // w[s W + c]: column c of sample s
  Var logpq;
  for (arma::uword c = 0; c < W; ++c) {
    const GigpPrepared g = gigp_prepare(k, {ad::cols(v, c, c), Var(), Var()}, Ls[c], Lk);
    const arma::uvec idx = sample_columns(c, W, S);
    const Whitened wc = gigp_whiten(g, eps1.cols(idx), eps2.cols(idx));
    logpq = c == 0 ? wc.logpq : logpq + wc.logpq;
    for (arma::uword s = 0; s < S; ++s) w[s * W + c] = S == 1 ? wc.w : ad::cols(wc.w, s, s);
  }
  const Var wall = w.size() == 1 ? w[0] : ad::join_horiz(w);
  GigpOutput out;
  out.u = trmm_lower(Lk, wall, false);
  out.logpq = logpq;
  const ConditionalMoments m = conditional_moments(Lk, k.it, k.tt, wall);
  out.f_mean = m.f_mean;
  out.f_var = m.f_var;
  return out;
}

GigpOutput gigp_sample(const GigpPrepared& g, random::Stream& rng) {
  const arma::uword P = g.Lk.n_rows(), W = g.a.n_cols();
  const arma::mat eps1 = random::normal_matrix(rng, P, W);
  const arma::mat eps2 = random::normal_matrix(rng, P, W);
  return gigp_finish(g, eps1, eps2);
}

GigpOutput gigp_forward(const KernelBlocks& k, const GigpParams& p, random::Stream& rng) {
  return gigp_sample(gigp_prepare(k, p), rng);
}

GigpPrepared gigp_constants(ad::Tape& tape, const GigpPrepared& g) {
  auto c = [&tape](const Var& v) { return tape.constant(v.val()); };
  auto c_opt = [&c](const Var& v) { return v.valid() ? c(v) : Var(); };
  // A shared layer (gigp_share) needs A and f_var, not K_it and k_tt: copy only what it uses.
  const bool shared = g.A.valid();
  return {c(g.Lk),
          c(g.L),
          c(g.C),
          c(g.Lm),
          c(g.a),
          c(g.logpq),
          shared ? Var() : c(g.Kit),
          shared ? Var() : c(g.tt),
          c_opt(g.A),
          c_opt(g.f_var)};
}

Var sample_outputs(const GigpOutput& out, arma::mat eps) {
  return ad::add_scaled_noise(out.f_mean, std::move(eps), ad::sqrt(out.f_var));
}

Var sample_outputs(const GigpOutput& out, random::Stream& rng) {
  return sample_outputs(out, random::normal_matrix(rng, out.f_mean.n_rows(), out.f_mean.n_cols()));
}

// ---- plain evaluation -------------------------------------------------------------------------

namespace {

// C = L_K^T L (triangular multiply), M = C^T C + I (symmetric rank-k update, lower triangle),
// Lm = chol(M) and a = L^T v, for a given L_K.
void plain_factors(GigpPlain& g, const arma::mat& L, const arma::mat& v, linalg::CholStats* stats) {
  const int P = int(g.Lk.n_rows);
  g.C = L;
  if (P > 0) {
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, P, P, 1.0,
                g.Lk.memptr(), P, g.C.memptr(), P);
  }
  arma::mat M(P, P, arma::fill::none);
  if (P > 0) {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, P, P, 1.0, g.C.memptr(), P, 0.0, M.memptr(),
                P);
  }
  M = arma::symmatl(M);
  M.diag() += 1.0;
  g.Lm = linalg::chol(M, "gigp L^T K L + I", {}, stats);
  g.a = L.t() * v;
}

// L_K = chol(K_ii), A = L_K^{-1} K_it and f_var = k_tt - colsum(A o A): the part of a layer that
// does not depend on its precision factor.
void plain_kernel_part(GigpPlain& g, const arma::mat& Kii, const arma::mat& Kit,
                       const arma::vec& ktt, linalg::CholStats* stats) {
  g.Lk = linalg::chol(Kii, "gigp K_ii", {}, stats);
  g.A = linalg::solve_lower(g.Lk, Kit);
  g.f_var = ktt - arma::sum(arma::square(g.A), 0).t();
}

// w = L_K^{-1} u = z - C M^{-1} C^T z with z = C (a + ε2) + ε1, for stacked noise.
arma::mat plain_whiten(const GigpPlain& g, const arma::mat& eps1, const arma::mat& eps2) {
  const arma::uword W = g.a.n_cols, cols = eps1.n_cols;
  const arma::uword S = W > 0 ? cols / W : 0;
  arma::mat z = eps2;
  for (arma::uword s = 0; s < S; ++s) z.cols(s * W, s * W + W - 1) += g.a;
  z = g.C * z;
  z += eps1;
  arma::mat t = linalg::solve_lower(g.Lm, g.C.t() * z);
  t = linalg::solve_lower(g.Lm, std::move(t), true);
  z -= g.C * t;
  return z;
}

// f_mean = A^T w and, when u is not null, u = L_K w.
void plain_outputs(const GigpPlain& g, arma::mat w, arma::mat* u, arma::mat& f_mean) {
  f_mean = g.A.t() * w;
  if (u) {
    *u = std::move(w);
    const int P = int(g.Lk.n_rows), n = int(u->n_cols);
    if (P > 0 && n > 0) {
      cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, P, n, 1.0,
                  g.Lk.memptr(), P, u->memptr(), P);
    }
  }
}

}  // namespace

GigpPlain gigp_prepare_plain(const arma::mat& Kii, const arma::mat& Kit, const arma::vec& ktt,
                             const arma::mat& L, const arma::mat& v, linalg::CholStats* stats) {
  GigpPlain g;
  plain_kernel_part(g, Kii, Kit, ktt, stats);
  plain_factors(g, L, v, stats);
  return g;
}

void gigp_finish_plain(const GigpPlain& g, const arma::mat& eps1, const arma::mat& eps2,
                       arma::mat* u, arma::mat& f_mean) {
  plain_outputs(g, plain_whiten(g, eps1, eps2), u, f_mean);
}

arma::vec gigp_forward_per_output_plain(const arma::mat& Kii, const arma::mat& Kit,
                                        const arma::vec& ktt, const std::vector<arma::mat>& Ls,
                                        const arma::mat& v, const arma::mat& eps1,
                                        const arma::mat& eps2, arma::mat* u, arma::mat& f_mean,
                                        linalg::CholStats* stats) {
  const arma::uword W = v.n_cols, S = W > 0 ? eps1.n_cols / W : 0;
  check_factor_count(Ls.size(), W);
  // K_ii's factor, A and f_var once; C, Lm and a per column.
  GigpPlain g;
  plain_kernel_part(g, Kii, Kit, ktt, stats);
  arma::mat w(Kii.n_rows, W * S, arma::fill::none);
  for (arma::uword c = 0; c < W; ++c) {
    plain_factors(g, Ls[c], v.col(c), stats);
    const arma::uvec idx = sample_columns(c, W, S);
    w.cols(idx) = plain_whiten(g, eps1.cols(idx), eps2.cols(idx));
  }
  plain_outputs(g, std::move(w), u, f_mean);
  return g.f_var;
}

}  // namespace dkp::layers
