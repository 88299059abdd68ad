#include "kernels/se.hpp"

#include <fmt/format.h>

#include "autodiff/ops.hpp"
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

arma::mat sq_dist(const arma::mat& X, const arma::mat& Z) {
  arma::mat D = -2.0 * X * Z.t();
  D.each_col() += arma::sum(arma::square(X), 1);
  D.each_row() += arma::sum(arma::square(Z), 1).t();
  D.clamp(0.0, arma::datum::inf);
  return D;
}

}  // namespace

arma::mat se_unit_value(const arma::mat& Xs, const arma::mat& Zs) {
  arma::mat K = sq_dist(Xs, Zs);
  K *= -0.5;
  return arma::exp(K);
}

arma::mat se_unit_sym_value(const arma::mat& Xs) {
  arma::mat K = se_unit_value(Xs, Xs);
  K.diag().ones();
  return K;
}

Var se_unit(const Var& Xs, const Var& Zs) {
  if (Xs.n_cols() != Zs.n_cols()) {
    throw Error(
        fmt::format("kernels::se_unit: inputs have {} and {} columns", Xs.n_cols(), Zs.n_cols()));
  }
  arma::mat K = se_unit_value(Xs.val(), Zs.val());
  return Xs.tape().record(std::move(K), {Xs, Zs}, [Xs, Zs](ad::Node* out) {
    return [Xs, Zs, out] {
      const arma::mat G = out->adj % out->val;
      if (Xs.needs_grad()) {
        arma::mat gx = G * Zs.val();
        gx -= Xs.val().each_col() % arma::sum(G, 1);
        ad::accumulate(Xs, std::move(gx));
      }
      if (Zs.needs_grad()) {
        arma::mat gz = G.t() * Xs.val();
        gz -= Zs.val().each_col() % arma::sum(G, 0).t();
        ad::accumulate(Zs, std::move(gz));
      }
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
  return ad::mul(ad::exp(log_var), se_unit(scale_columns(X, log_ell), scale_columns(Z, log_ell)));
}

Var se_ard_sym(const Var& X, const Var& log_ell, const Var& log_var) {
  return ad::mul(ad::exp(log_var), se_unit_sym(scale_columns(X, log_ell)));
}

}  // namespace dkp::kernels
