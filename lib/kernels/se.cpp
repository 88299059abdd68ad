#include "kernels/se.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "kernels/se_detail.hpp"
#include "kernels/vexp.hpp"
#include "linalg/symmetric.hpp"
#include "util/error.hpp"

namespace dkp::kernels {

namespace ad = dkp::autodiff;

Var scale_columns(const Var& X, const Var& log_ell) {
  if (log_ell.n_rows() != 1 || (log_ell.n_cols() != X.n_cols() && log_ell.n_cols() != 1)) {
    throw Error(fmt::format("kernels::scale_columns: lengthscales {}x{} for inputs {}x{}",
                            log_ell.n_rows(), log_ell.n_cols(), X.n_rows(), X.n_cols()));
  }
  arma::rowvec inv = arma::exp(-log_ell.val().row(0));
  if (inv.n_elem == 1 && X.n_cols() != 1) inv = arma::rowvec(X.n_cols(), arma::fill::value(inv[0]));
  arma::mat v = X.val().each_row() % inv;
  return X.tape().record(std::move(v), {X, log_ell}, [X, log_ell, inv](ad::Node* out) {
    return [X, log_ell, inv, out] {
      if (X.needs_grad()) ad::accumulate(X, out->adj.each_row() % inv);
      if (log_ell.needs_grad()) {
        // d(x / l)/d log l = -(x / l)
        const arma::rowvec g = -arma::sum(out->adj % out->val, 0);
        if (log_ell.n_cols() == 1)
          ad::accumulate_fill(log_ell, arma::accu(g));
        else
          ad::accumulate(log_ell, g);
      }
    };
  });
}

namespace {

void se_from_cross(double* k, const double* n, double m, double log_h, arma::uword first,
                   arma::uword last) {
  detail::se_exponent_from_cross(k, k, n, m, 0.5, log_h, first, last);
  if (last > first) kernels::exp_inplace(k + first, last - first);
}

// Columns per panel of the kernel block's passes: about 64 Ki doubles (512 KiB), which stay in
// cache between the panel's product and its exponentials (and, in the adjoint, between the
// elementwise product and the two products with the inputs). A boston block (100 x 455) is one
// panel; smaller panels measured slower there (more, smaller dgemm calls on a block that fits
// in cache anyway).
arma::uword panel_columns(arma::uword rows) {
  return std::max<arma::uword>(64, (arma::uword(1) << 16) / std::max<arma::uword>(rows, 1));
}

// h exp(-1/2 ||x_i - z_j||^2) for the rows of Xs and Zs, one panel of columns at a time: the
// cross product Xs Zs^T into the panel, then the distances and exponentials while it is in
// cache (with a large batch, the whole block's product, zero fill and exponential pass each went
// through memory).
arma::mat se_value(const arma::mat& Xs, const arma::mat& Zs, double log_h) {
  const arma::uword n = Xs.n_rows, m = Zs.n_rows, w = Xs.n_cols;
  arma::mat K(n, m, arma::fill::none);
  if (n == 0 || m == 0) return K;
  const arma::vec nx = arma::sum(arma::square(Xs), 1);
  const arma::vec nz = arma::sum(arma::square(Zs), 1);
  const arma::uword panel = panel_columns(n);
  // With several panels (a large batch), the cross products go into one scratch panel that
  // stays in cache, and K is written once, by the exponent pass: a product straight into K's
  // fresh memory ran at a quarter of its in-cache rate (kin8nm, 100 x 655 x 8), its zero fill
  // and its writes each a pass through memory. One panel is computed in place.
  arma::mat scratch(m > panel ? n : 0, m > panel ? panel : 0, arma::fill::none);
  for (arma::uword j0 = 0; j0 < m; j0 += panel) {
    const arma::uword nc = std::min(panel, m - j0);
    double* cross = scratch.n_elem > 0 ? scratch.memptr() : K.colptr(j0);
    if (w > 0) {
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(n), int(nc), int(w), 1.0,
                  Xs.memptr(), int(n), Zs.memptr() + j0, int(m), 0.0, cross, int(n));
    } else {
      std::fill(cross, cross + n * nc, 0.0);
    }
    for (arma::uword j = j0; j < j0 + nc; ++j)
      detail::se_exponent_from_cross(cross + (j - j0) * n, K.colptr(j), nx.memptr(), nz[j], 0.5,
                                     log_h, 0, n);
    kernels::exp_inplace(K.colptr(j0), n * nc);  // the panel is contiguous
  }
  return K;
}

}  // namespace

arma::mat se_unit_value(const arma::mat& Xs, const arma::mat& Zs) {
  return se_value(Xs, Zs, 0.0);
}

arma::mat se_unit_sym_value(const arma::mat& Xs) {
  // Only the strict lower triangle is evaluated (half the exponentials), then mirrored: the
  // result is exactly symmetric, with exact ones on the diagonal.
  const arma::uword n = Xs.n_rows;
  arma::mat K = Xs * Xs.t();
  const arma::vec nx = arma::sum(arma::square(Xs), 1);
  for (arma::uword j = 0; j < n; ++j) {
    double* k = K.colptr(j);
    se_from_cross(k, nx.memptr(), nx[j], 0.0, j + 1, n);
    k[j] = 1.0;
  }
  K = arma::symmatl(K);
  return K;
}

namespace {

// Adjoints of K = h exp(-1/2 ||x_i - z_j||^2) (h = 1 for the unit kernel) w.r.t. Xs and Zs,
// from G = Kbar % K (K including h): Xs_bar = G Zs - diag(rowsum G) Xs and Zs_bar = G^T Xs -
// diag(colsum G) Zs. G is formed one panel of columns at a time and used while in cache (never
// stored whole). Returns sum(G) (h's adjoint times h).
double se_input_adjoints(const Var& Xs, const Var& Zs, const arma::mat& Kbar, const arma::mat& K) {
  const arma::uword n = K.n_rows, m = K.n_cols, w = Xs.n_cols();
  const bool need_x = Xs.needs_grad(), need_z = Zs.needs_grad();
  arma::mat gx(need_x ? n : 0, w, arma::fill::zeros), gz(need_z ? m : 0, w, arma::fill::none);
  arma::vec rs(n, arma::fill::zeros);
  const arma::uword panel = panel_columns(n);
  arma::mat G(n, std::min(panel, m), arma::fill::none);
  arma::vec cs(std::min(panel, m), arma::fill::none);  // the panel's column sums of G
  const arma::mat& Xv = Xs.val();
  const arma::mat& Zv = Zs.val();
  double total = 0.0;
  for (arma::uword j0 = 0; j0 < m; j0 += panel) {
    const arma::uword nc = std::min(panel, m - j0);
    double* r = rs.memptr();
    for (arma::uword j = 0; j < nc; ++j) {
      const double* kb = Kbar.colptr(j0 + j);
      const double* k = K.colptr(j0 + j);
      double* g = G.colptr(j);
      double c = 0.0;
      for (arma::uword i = 0; i < n; ++i) {
        g[i] = kb[i] * k[i];
        r[i] += g[i];
        c += g[i];
      }
      total += c;
      cs[j] = c;
    }
    if (need_z) {  // gz's rows j0 .. j0 + nc - 1 = -diag(colsum G) Zs's, a column at a time
      for (arma::uword d = 0; d < w; ++d) {
        const double* z = Zv.colptr(d) + j0;
        double* out = gz.colptr(d) + j0;
        for (arma::uword j = 0; j < nc; ++j) out[j] = -cs[j] * z[j];
      }
    }
    if (w == 0 || n == 0) continue;
    if (need_x) {  // gx += G_panel Zs(j0 .. j0 + nc, :)
      cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, int(n), int(w), int(nc), 1.0,
                  G.memptr(), int(n), Zv.memptr() + j0, int(m), 1.0, gx.memptr(), int(n));
    }
    if (need_z) {  // gz(j0 .. j0 + nc, :) += G_panel^T Xs
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(nc), int(w), int(n), 1.0, G.memptr(),
                  int(n), Xv.memptr(), int(n), 1.0, gz.memptr() + j0, int(m));
    }
  }
  if (need_x) {
    gx -= Xv.each_col() % rs;
    ad::accumulate(Xs, std::move(gx));
  }
  if (need_z) ad::accumulate(Zs, std::move(gz));
  return total;
}

void check_se_inputs(const char* op, const Var& Xs, const Var& Zs) {
  if (Xs.n_cols() != Zs.n_cols()) {
    throw Error(
        fmt::format("kernels::{}: inputs have {} and {} columns", op, Xs.n_cols(), Zs.n_cols()));
  }
}

}  // namespace

Var se_unit(const Var& Xs, const Var& Zs) {
  check_se_inputs("se_unit", Xs, Zs);
  arma::mat K = se_unit_value(Xs.val(), Zs.val());
  return Xs.tape().record(std::move(K), {Xs, Zs}, [Xs, Zs](ad::Node* out) {
    return [Xs, Zs, out] { se_input_adjoints(Xs, Zs, out->adj, out->val); };
  });
}

Var se_scaled(const Var& h, const Var& Xs, const Var& Zs) {
  check_se_inputs("se_scaled", Xs, Zs);
  detail::check_variance("se_scaled", h);
  const double hv = h.scalar();
  // h inside the exponential (one pass fewer); a variance <= 0 (never from exp(log variance))
  // multiplies the unit kernel instead.
  arma::mat K = se_value(Xs.val(), Zs.val(), hv > 0.0 ? std::log(hv) : 0.0);
  if (!(hv > 0.0)) K *= hv;
  return Xs.tape().record(std::move(K), {h, Xs, Zs}, [h, Xs, Zs, hv](ad::Node* out) {
    return [h, Xs, Zs, hv, out] {
      // dK/dh = K / h, so hbar = sum(Kbar % K) / h.
      const double total = se_input_adjoints(Xs, Zs, out->adj, out->val);
      if (h.needs_grad()) ad::accumulate_fill(h, total / hv);
    };
  });
}

namespace {

// The adjoint of Xs in K = k(Xs, Xs) from G = Kbar % K (both arguments are Xs: the two
// contributions combine to (G + G^T) Xs - rowsum(G + G^T) % Xs; G's diagonal cancels, so a
// jitter on K's diagonal needs no correction). G is symmetrised in place.
arma::mat se_sym_input_adjoint(arma::mat& G, const arma::mat& X) {
  linalg::symmetric_sum_inplace(G);
  arma::mat gx = G * X;
  gx -= X.each_col() % arma::sum(G, 1);
  return gx;
}

}  // namespace

Var se_unit_sym(const Var& Xs) {
  arma::mat K = se_unit_sym_value(Xs.val());
  return Xs.tape().record(std::move(K), {Xs}, [Xs](ad::Node* out) {
    return [Xs, out] {
      arma::mat G = out->adj % out->val;
      ad::accumulate(Xs, se_sym_input_adjoint(G, Xs.val()));
    };
  });
}

Var se_scaled_sym(const Var& h, const Var& Xs, double jitter) {
  const double hv = detail::positive_variance("se_scaled_sym", h);
  arma::mat K = se_unit_sym_value(Xs.val());
  K.diag() += jitter;
  K *= hv;
  return Xs.tape().record(std::move(K), {h, Xs}, [h, Xs, hv](ad::Node* out) {
    return [h, Xs, hv, out] {
      arma::mat G = out->adj % out->val;
      if (h.needs_grad()) ad::accumulate_fill(h, arma::accu(G) / hv);  // dK/dh = K / h
      if (Xs.needs_grad()) ad::accumulate(Xs, se_sym_input_adjoint(G, Xs.val()));
    };
  });
}

Var se_ard(const Var& X, const Var& Z, const Var& log_ell, const Var& log_var) {
  return se_scaled(ad::exp(log_var), scale_columns(X, log_ell), scale_columns(Z, log_ell));
}

Var se_ard_sym(const Var& X, const Var& log_ell, const Var& log_var) {
  return ad::mul(ad::exp(log_var), se_unit_sym(scale_columns(X, log_ell)));
}

}  // namespace dkp::kernels
