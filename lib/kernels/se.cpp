#include "kernels/se.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "util/error.hpp"
#include "util/vexp.hpp"

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

// k <- exp(log_h - 1/2 max(0, n_i + m - 2 k)) for i in [first, last): the squared distance from
// the cross product k, the squared norms n of the rows of X and the squared norm m of one row of
// Z, clamped at 0 against round-off, then the SE kernel with variance h (log_h = 0: the unit
// kernel, exactly). One pass, in place.
void se_from_cross(double* k, const double* n, double m, double log_h, arma::uword first,
                   arma::uword last) {
  for (arma::uword i = first; i < last; ++i) {
    double d = (-2.0 * k[i] + n[i]) + m;
    d = d < 0.0 ? 0.0 : d;
    k[i] = -0.5 * d + log_h;
  }
  if (last > first) util::exp_inplace(k + first, last - first);
}

// h exp(-1/2 ||x_i - z_j||^2) for the rows of Xs and Zs.
arma::mat se_value(const arma::mat& Xs, const arma::mat& Zs, double log_h) {
  arma::mat K = Xs * Zs.t();
  const arma::vec nx = arma::sum(arma::square(Xs), 1);
  const arma::vec nz = arma::sum(arma::square(Zs), 1);
  for (arma::uword j = 0; j < K.n_cols; ++j)
    se_from_cross(K.colptr(j), nx.memptr(), nz[j], log_h, 0, K.n_rows);
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

// The products G = Kbar % K of a kernel block's adjoint and value, with the sums of G's rows
// and columns, in one pass.
struct AdjointProducts {
  arma::mat G;
  arma::vec row_sums;
  arma::rowvec col_sums;
};

AdjointProducts adjoint_products(const arma::mat& Kbar, const arma::mat& K) {
  AdjointProducts a;
  a.G.set_size(K.n_rows, K.n_cols);
  a.row_sums.zeros(K.n_rows);
  a.col_sums.set_size(K.n_cols);
  double* rs = a.row_sums.memptr();
  for (arma::uword j = 0; j < K.n_cols; ++j) {
    const double* kb = Kbar.colptr(j);
    const double* k = K.colptr(j);
    double* g = a.G.colptr(j);
    double c = 0.0;
    for (arma::uword i = 0; i < K.n_rows; ++i) {
      g[i] = kb[i] * k[i];
      rs[i] += g[i];
      c += g[i];
    }
    a.col_sums[j] = c;
  }
  return a;
}

// Adjoints of K = h exp(-1/2 ||x_i - z_j||^2) (h = 1 for the unit kernel) w.r.t. Xs and Zs,
// from G = Kbar % K (K including h) and its row and column sums.
void se_input_adjoints(const Var& Xs, const Var& Zs, const AdjointProducts& a) {
  if (Xs.needs_grad()) {
    arma::mat gx = a.G * Zs.val();
    gx -= Xs.val().each_col() % a.row_sums;
    ad::accumulate(Xs, std::move(gx));
  }
  if (Zs.needs_grad()) {
    arma::mat gz = a.G.t() * Xs.val();
    gz -= Zs.val().each_col() % a.col_sums.t();
    ad::accumulate(Zs, std::move(gz));
  }
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
    return [Xs, Zs, out] { se_input_adjoints(Xs, Zs, adjoint_products(out->adj, out->val)); };
  });
}

Var se_scaled(const Var& h, const Var& Xs, const Var& Zs) {
  check_se_inputs("se_scaled", Xs, Zs);
  if (h.n_rows() != 1 || h.n_cols() != 1) {
    throw Error(
        fmt::format("kernels::se_scaled: variance is {}x{}, not 1x1", h.n_rows(), h.n_cols()));
  }
  const double hv = h.scalar();
  // h inside the exponential (one pass fewer); a variance <= 0 (never from exp(log variance))
  // multiplies the unit kernel instead.
  arma::mat K = se_value(Xs.val(), Zs.val(), hv > 0.0 ? std::log(hv) : 0.0);
  if (!(hv > 0.0)) K *= hv;
  return Xs.tape().record(std::move(K), {h, Xs, Zs}, [h, Xs, Zs, hv](ad::Node* out) {
    return [h, Xs, Zs, hv, out] {
      const AdjointProducts a = adjoint_products(out->adj, out->val);
      // dK/dh = K / h, so hbar = sum(Kbar % K) / h.
      if (h.needs_grad()) ad::accumulate_fill(h, arma::accu(a.col_sums) / hv);
      se_input_adjoints(Xs, Zs, a);
    };
  });
}

Var se_unit_sym(const Var& Xs) {
  arma::mat K = se_unit_sym_value(Xs.val());
  return Xs.tape().record(std::move(K), {Xs}, [Xs](ad::Node* out) {
    return [Xs, out] {
      // Both arguments are Xs: the two contributions combine to (G + G^T) X - rowsum(G+G^T) % X.
      arma::mat G = out->adj % out->val;
      G += G.t();
      arma::mat gx = G * Xs.val();
      gx -= Xs.val().each_col() % arma::sum(G, 1);
      ad::accumulate(Xs, std::move(gx));
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
