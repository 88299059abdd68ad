#include "kernels/gram.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_shape.hpp"
#include "kernels/se_detail.hpp"
#include "kernels/vexp.hpp"
#include "linalg/symmetric.hpp"
#include "util/error.hpp"

namespace dkp::kernels {

namespace ad = dkp::autodiff;

namespace {

void check_block(const Var& C, const Var& a, const Var& b, const char* what) {
  if (a.n_cols() != 1 || b.n_cols() != 1 || a.n_rows() != C.n_rows() || b.n_rows() != C.n_cols()) {
    throw Error(fmt::format("kernels::{}: block {}x{} with diagonals {}x{} and {}x{}", what,
                            C.n_rows(), C.n_cols(), a.n_rows(), a.n_cols(), b.n_rows(),
                            b.n_cols()));
  }
}

void check_blocks(const GramBlocks& G, const char* what) {
  const arma::uword P = G.ii.n_rows(), B = G.tt.n_rows();
  if (G.ii.n_cols() != P || G.it.n_rows() != P || G.it.n_cols() != B || G.tt.n_cols() != 1) {
    throw Error(fmt::format("kernels::{}: blocks ii {}x{}, it {}x{}, tt {}x{}", what, P,
                            G.ii.n_cols(), G.it.n_rows(), G.it.n_cols(), B, G.tt.n_cols()));
  }
}

// eps on the diagonal of a square matrix.
Var add_diag(const Var& A, double eps) {
  return A + A.tape().constant(eps * arma::eye(A.n_rows(), A.n_cols()));
}

}  // namespace

Var scale_shift_features(const Var& X, const Var& log_scale, const Var& bias) {
  if (log_scale.n_rows() != 1 || log_scale.n_cols() != X.n_cols() || bias.n_rows() != 1 ||
      bias.n_cols() != X.n_cols()) {
    throw Error(fmt::format(
        "kernels::scale_shift_features: inputs {}x{}, log scale {}x{}, bias {}x{} (need 1 x {})",
        X.n_rows(), X.n_cols(), log_scale.n_rows(), log_scale.n_cols(), bias.n_rows(),
        bias.n_cols(), X.n_cols()));
  }
  return ad::add_each_row(ad::mul_each_row(X, ad::exp(log_scale)), bias);
}

GramBlocks features_to_gram(const Var& Fi, const Var& Ft, double nu) {
  if (Fi.n_cols() != Ft.n_cols() || !(nu > 0)) {
    throw Error(fmt::format("kernels::features_to_gram: features {}x{} and {}x{}, nu = {}",
                            Fi.n_rows(), Fi.n_cols(), Ft.n_rows(), Ft.n_cols(), nu));
  }
  GramBlocks g;
  g.ii = ad::scale(ad::matmul(Fi, Fi, false, true), 1.0 / nu);
  g.it = ad::scale(ad::matmul(Fi, Ft, false, true), 1.0 / nu);
  g.tt = ad::scale(ad::row_sums(ad::square(Ft)), 1.0 / nu);
  return g;
}

namespace {

// w = 1 / (2 l^2) from the log lengthscale (1 x 1).
double se_gram_weight(const char* op, const Var& log_ell) {
  if (log_ell.val().n_elem != 1) {
    throw Error(fmt::format("kernels::{}: log lengthscale is {}x{}, not 1x1", op, log_ell.n_rows(),
                            log_ell.n_cols()));
  }
  return 0.5 * std::exp(-2.0 * log_ell.scalar());
}

// The adjoint of K = h exp(-w R), R = max(0, a_i + b_j - 2 C_ij), in one pass over the block:
// with G = Kbar % K, Cbar = 2 w G, abar = -w rowsum(G), bbar = -w colsum(G)^T,
// log_ell bar = 2 w sum(G % R) (R recomputed, no exponential), hbar = sum(G) / h (dK/dh = K / h).
void se_from_gram_backward(const arma::mat& Kbar, const arma::mat& K, const Var& h, const Var& C,
                           const Var& a, const Var& b, const Var& log_ell, double w) {
  const arma::uword n = K.n_rows, m = K.n_cols;
  const bool need_c = C.needs_grad(), need_ell = log_ell.needs_grad();
  arma::mat gc(need_c ? n : 0, need_c ? m : 0, arma::fill::none);
  arma::vec ra(n, arma::fill::zeros), cb(m, arma::fill::none);
  const double* av = a.val().memptr();
  const double* bv = b.val().memptr();
  double total = 0.0, gr = 0.0;
  for (arma::uword j = 0; j < m; ++j) {
    const double* kb = Kbar.colptr(j);
    const double* k = K.colptr(j);
    const double* c = C.val().colptr(j);
    double* r = ra.memptr();
    double cs = 0.0, cr = 0.0;
    for (arma::uword i = 0; i < n; ++i) {
      const double g = kb[i] * k[i];
      r[i] += g;
      cs += g;
      if (need_ell) cr += g * detail::sq_dist_from_cross(c[i], av[i], bv[j]);
    }
    if (need_c) {
      double* o = gc.colptr(j);
      for (arma::uword i = 0; i < n; ++i) o[i] = (2.0 * w) * (kb[i] * k[i]);
    }
    cb[j] = cs;
    total += cs;
    gr += cr;
  }
  if (need_c) ad::accumulate(C, std::move(gc));
  if (a.needs_grad()) ad::accumulate(a, arma::mat(-w * ra));
  if (b.needs_grad()) ad::accumulate(b, arma::mat(-w * cb));
  if (need_ell) ad::accumulate_fill(log_ell, 2.0 * w * gr);
  if (h.needs_grad()) ad::accumulate_fill(h, total / h.scalar());
}

// The adjoint of the symmetric block K = h (exp(-w R) + jitter I), R from C's lower triangle and
// its diagonal d. With S = G + G^T, G = Kbar % K (both halves of K come from C's lower triangle):
//   Cbar = w (S - diag(rowsum S)) (the diagonal's terms through R_jj = 0 cancel),
//   log_ell bar = 2 w sum_{i > j} S_ij R_ij, hbar = sum(S) / (2 h).
void se_sym_from_gram_backward(const arma::mat& Kbar, const arma::mat& K, const Var& h,
                               const Var& C, const Var& log_ell, const arma::vec& d, double w,
                               double hv) {
  arma::mat S = Kbar % K;
  linalg::symmetric_sum_inplace(S);
  if (h.needs_grad()) ad::accumulate_fill(h, arma::accu(S) / (2.0 * hv));
  if (log_ell.needs_grad()) {
    const arma::mat& Cv = C.val();
    const arma::uword n = Cv.n_rows;
    double gr = 0.0;
    for (arma::uword j = 0; j < n; ++j) {
      const double* s = S.colptr(j);
      const double* c = Cv.colptr(j);
      double cr = 0.0;
      for (arma::uword i = j + 1; i < n; ++i)
        cr += s[i] * detail::sq_dist_from_cross(c[i], d[i], d[j]);
      gr += cr;
    }
    ad::accumulate_fill(log_ell, 2.0 * w * gr);
  }
  if (C.needs_grad()) {
    const arma::vec rs = arma::sum(S, 1);
    S *= w;
    S.diag() -= w * rs;
    ad::accumulate(C, std::move(S));
  }
}

}  // namespace

Var se_scaled_from_gram(const Var& h, const Var& C, const Var& a, const Var& b,
                        const Var& log_ell) {
  check_block(C, a, b, "se_scaled_from_gram");
  const double w = se_gram_weight("se_scaled_from_gram", log_ell);
  const double log_h = std::log(detail::positive_variance("se_scaled_from_gram", h));
  const arma::uword n = C.n_rows(), m = C.n_cols();
  arma::mat K(n, m, arma::fill::none);
  const double* av = a.val().memptr();
  const double* bv = b.val().memptr();
  for (arma::uword j = 0; j < m; ++j)
    detail::se_exponent_from_cross(C.val().colptr(j), K.colptr(j), av, bv[j], w, log_h, 0, n);
  kernels::exp_inplace(K.memptr(), K.n_elem);
  return C.tape().record(std::move(K), {h, C, a, b, log_ell},
                         [h, C, a, b, log_ell, w](ad::Node* out) {
                           return [h, C, a, b, log_ell, w, out] {
                             se_from_gram_backward(out->adj, out->val, h, C, a, b, log_ell, w);
                           };
                         });
}

Var se_scaled_sym_from_gram(const Var& h, const Var& C, const Var& log_ell, double jitter) {
  if (C.n_rows() != C.n_cols()) {
    throw Error(fmt::format("kernels::se_scaled_sym_from_gram: Gram block {}x{} is not square",
                            C.n_rows(), C.n_cols()));
  }
  const double w = se_gram_weight("se_scaled_sym_from_gram", log_ell);
  const double hv = detail::positive_variance("se_scaled_sym_from_gram", h);
  const double log_h = std::log(hv);
  const arma::uword n = C.n_rows();
  arma::vec d = C.val().diag();  // kept for the adjoint
  // The strict lower triangle (half the exponentials), then mirrored: exactly symmetric, with
  // h (1 + jitter) on the diagonal (R_jj = 0).
  arma::mat K(n, n, arma::fill::none);
  for (arma::uword j = 0; j < n; ++j) {
    double* k = K.colptr(j);
    detail::se_exponent_from_cross(C.val().colptr(j), k, d.memptr(), d[j], w, log_h, j + 1, n);
    if (j + 1 < n) kernels::exp_inplace(k + j + 1, n - j - 1);
    k[j] = hv * (1.0 + jitter);
  }
  linalg::for_each_strict_lower_tiled(n, [&K](arma::uword i, arma::uword j) {
    K.at(j, i) = K.at(i, j);
    return true;
  });
  return C.tape().record(std::move(K), {h, C, log_ell},
                         [h, C, log_ell, w, hv, d = std::move(d)](ad::Node* out) mutable {
                           return [h, C, log_ell, w, hv, d = std::move(d), out] {
                             se_sym_from_gram_backward(out->adj, out->val, h, C, log_ell, d, w, hv);
                           };
                         });
}

namespace {

// The adjoint of K = arccos_relu(C, a, b) in one pass over the block: C_bar = g % dK/dC and,
// with gr = g % r / (2 pi), a_bar = rowsum(gr) / a and b_bar = colsum(gr) / b.
void arccos_relu_backward(const arma::mat& g, const arma::mat& dC, const arma::mat& R, const Var& C,
                          const Var& a, const Var& b) {
  const arma::uword n = g.n_rows, m = g.n_cols;
  const bool need_c = C.needs_grad(), need_ab = a.needs_grad() || b.needs_grad();
  arma::mat gc(need_c ? n : 0, need_c ? m : 0, arma::fill::none);
  arma::vec ra(n, arma::fill::zeros), cb(m, arma::fill::zeros);
  constexpr double kHalfInvPi = 0.5 / M_PI;
  for (arma::uword j = 0; j < m; ++j) {
    const double* __restrict gj = g.colptr(j);
    if (need_c) {
      double* __restrict o = gc.colptr(j);
      const double* __restrict d = dC.colptr(j);
      for (arma::uword i = 0; i < n; ++i) o[i] = gj[i] * d[i];
    }
    if (need_ab) {
      const double* __restrict r = R.colptr(j);
      double* __restrict rs = ra.memptr();
      double c = 0.0;
      for (arma::uword i = 0; i < n; ++i) {
        const double v = gj[i] * r[i] * kHalfInvPi;
        rs[i] += v;
        c += v;
      }
      cb[j] = c;
    }
  }
  if (need_c) ad::accumulate(C, std::move(gc));
  if (a.needs_grad()) ad::accumulate(a, arma::mat(ra / a.val()));
  if (b.needs_grad()) ad::accumulate(b, arma::mat(cb / b.val()));
}

}  // namespace

Var arccos_relu(const Var& C, const Var& a, const Var& b) {
  constexpr double kInvPi = 1.0 / M_PI;
  check_block(C, a, b, "arccos_relu");
  if (!(a.val().min() > 0.0) || !(b.val().min() > 0.0)) {
    throw Error(fmt::format("kernels::arccos_relu: diagonals must be positive (min {} and {})",
                            a.val().min(), b.val().min()));
  }
  const arma::mat& c = C.val();
  const arma::vec& av = a.val();
  const arma::vec& bv = b.val();
  const arma::uword n = c.n_rows, m = c.n_cols;
  arma::mat K(n, m, arma::fill::none), dC(n, m, arma::fill::none),
      R(n, m, arma::fill::none);  // value, dK/dC = (pi - t) / pi, r = sqrt(ab - C^2)
  const arma::vec sa = arma::sqrt(av), sb = arma::sqrt(bv);
  const arma::vec ia = 1.0 / sa, ib = 1.0 / sb;
  const double* sap = sa.memptr();
  const double* iap = ia.memptr();
  for (arma::uword j = 0; j < m; ++j) {
    // cos t into R's column, t = acos(cos t) into dC's column (vectorised), then the rest. Raw
    // pointers and -fno-math-errno (CMakeLists.txt) let the compiler vectorise both loops.
    double* __restrict cs = R.colptr(j);
    double* __restrict t = dC.colptr(j);
    double* __restrict k = K.colptr(j);
    const double* __restrict x = c.colptr(j);
    const double ibj = ib[j], sbj = sb[j];
    for (arma::uword i = 0; i < n; ++i) {
      const double v = x[i] * iap[i] * ibj;
      cs[i] = v < -1.0 ? -1.0 : (v > 1.0 ? 1.0 : v);
      t[i] = cs[i];
    }
    kernels::acos_inplace(t, n);
    for (arma::uword i = 0; i < n; ++i) {
      // K = (s sin t + (pi - t) x) / pi written as x + s (sin t - t cos t) / pi: near t = 0 the
      // bracket is t^3 / 3, so the round-off in t (about sqrt(eps) when x ~ s) does not reach
      // the value (computing r = sqrt(ab - x^2) directly leaves O(sqrt(eps)) noise in K).
      const double s = sap[i] * sbj, co = cs[i], ti = t[i];
      const double st = std::sqrt((1.0 - co) * (1.0 + co));  // sin t
      k[i] = x[i] + s * (st - ti * co) * kInvPi;
      t[i] = 1.0 - ti * kInvPi;  // dK/dC = (pi - t) / pi
      cs[i] = s * st;            // r
    }
  }
  return C.tape().record(std::move(K), {C, a, b},
                         [C, a, b, dC = std::move(dC), R = std::move(R)](ad::Node* out) mutable {
                           return [C, a, b, dC = std::move(dC), R = std::move(R), out] {
                             arccos_relu_backward(out->adj, dC, R, C, a, b);
                           };
                         });
}

GramBlocks se_gram(const GramBlocks& G, const Var& log_lengthscale, const Var& log_variance,
                   double jitter) {
  check_blocks(G, "se_gram");
  ad::Tape& tape = G.ii.tape();
  const arma::uword B = G.tt.n_rows();
  const Var h = ad::exp(log_variance);
  GramBlocks k;
  k.ii = se_scaled_sym_from_gram(h, G.ii, log_lengthscale, jitter);
  k.it = se_scaled_from_gram(h, G.it, ad::diag(G.ii), G.tt, log_lengthscale);
  k.tt = ad::mul(h, tape.constant(arma::mat(B, 1, arma::fill::value(1.0 + jitter))));
  return k;
}

GramBlocks relu_gram(const GramBlocks& G, double jitter) {
  check_blocks(G, "relu_gram");
  const Var d = ad::diag(G.ii);
  GramBlocks k;
  // The formula gives K_jj = G_jj on the diagonal (t = 0) up to round-off, with total derivative 1
  // w.r.t. G_jj through C, a and b together.
  k.ii = add_diag(arccos_relu(G.ii, d, d), jitter);
  k.it = arccos_relu(G.it, d, G.tt);
  k.tt = ad::add_scalar(G.tt, jitter);
  return k;
}

}  // namespace dkp::kernels
