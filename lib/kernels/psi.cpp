#include "kernels/psi.hpp"

#include <cblas.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "kernels/vexp.hpp"
#include "util/error.hpp"

namespace dkp::kernels {

namespace ad = dkp::autodiff;

namespace {

void check_inputs(const char* op, const Var& mu, const Var& v, const Var& Z, const Var& a,
                  const Var& h) {
  const arma::uword B = mu.n_rows(), D = mu.n_cols();
  if (v.n_rows() != B || v.n_cols() != D || Z.n_cols() != D || a.n_rows() != 1 || a.n_cols() != D ||
      h.n_rows() != 1 || h.n_cols() != 1) {
    throw Error(fmt::format("{}: shapes mu {}x{}, v {}x{}, Z {}x{}, a {}x{}, h {}x{}", op, B, D,
                            v.n_rows(), v.n_cols(), Z.n_rows(), Z.n_cols(), a.n_rows(), a.n_cols(),
                            h.n_rows(), h.n_cols()));
  }
  if (!(h.scalar() > 0.0) || !std::isfinite(h.scalar()) || !a.val().is_finite() ||
      arma::any(arma::vectorise(a.val()) <= 0.0)) {
    throw Error(fmt::format("{}: the variance and squared lengthscales must be positive", op));
  }
  if (!v.val().is_finite() || arma::any(arma::vectorise(v.val()) < 0.0)) {
    throw Error(fmt::format("{}: input variances must be finite and non-negative", op));
  }
}

// The lower triangle (i >= j) of Psi2 at point n into P (M x M; the upper triangle is not
// written): h^2 c_n exp(-E - S_n), with E_ij = sum_q (z_iq - z_jq)^2 / (4 a_q) given and
// S_n,ij = sum_q (mu_nq - zbar_ijq)^2 / (a_q + 2 v_nq). Psi2 is symmetric, so the contraction and
// its adjoint visit each pair once.
void psi2_lower(const arma::mat& mu, const arma::mat& v, const arma::mat& Z, const arma::rowvec& a,
                double h, const arma::mat& E, arma::uword n, arma::mat& P) {
  const arma::uword M = Z.n_rows, D = Z.n_cols;
  P.set_size(M, M);
  double logc = 2.0 * std::log(h);
  for (arma::uword q = 0; q < D; ++q) logc -= 0.5 * std::log1p(2.0 * v(n, q) / a[q]);
  for (arma::uword j = 0; j < M; ++j) {
    double* p = P.colptr(j);
    const double* e = E.colptr(j);
    for (arma::uword i = j; i < M; ++i) p[i] = logc - e[i];
  }
  for (arma::uword q = 0; q < D; ++q) {
    const double inv = 1.0 / (a[q] + 2.0 * v(n, q)), m = mu(n, q);
    const double* z = Z.colptr(q);
    for (arma::uword j = 0; j < M; ++j) {
      double* p = P.colptr(j);
      const double zj = z[j];
      for (arma::uword i = j; i < M; ++i) {
        const double d = m - 0.5 * (z[i] + zj);
        p[i] -= d * d * inv;
      }
    }
  }
  for (arma::uword j = 0; j < M; ++j) kernels::exp_inplace(P.colptr(j) + j, M - j);
}

// E_ij = sum_q (z_iq - z_jq)^2 / (4 a_q), lower triangle.
arma::mat psi2_zterm(const arma::mat& Z, const arma::rowvec& a) {
  const arma::uword M = Z.n_rows;
  arma::mat E(M, M, arma::fill::zeros);
  for (arma::uword q = 0; q < Z.n_cols; ++q) {
    const double* z = Z.colptr(q);
    const double s = 1.0 / (4.0 * a[q]);
    for (arma::uword j = 0; j < M; ++j) {
      double* e = E.colptr(j);
      for (arma::uword i = j; i < M; ++i) e[i] += (z[i] - z[j]) * (z[i] - z[j]) * s;
    }
  }
  return E;
}

// G's weights for the lower triangle: G_ij + G_ji below the diagonal, G_ii on it.
arma::mat fold_lower(const arma::mat& G) {
  arma::mat F = G + G.t();
  F.diag() = G.diag();
  return F;
}

}  // namespace

Var psi1(const Var& mu, const Var& v, const Var& Z, const Var& a, const Var& h) {
  check_inputs("psi1", mu, v, Z, a, h);
  const arma::uword B = mu.n_rows(), D = mu.n_cols(), M = Z.n_rows();
  const arma::mat& m = mu.val();
  const arma::mat& vv = v.val();
  const arma::mat& z = Z.val();
  const arma::rowvec av = a.val();
  arma::mat S(B, M, arma::fill::zeros);
  arma::vec logc(B, arma::fill::value(std::log(h.scalar())));
  for (arma::uword q = 0; q < D; ++q) {
    for (arma::uword n = 0; n < B; ++n) logc[n] -= 0.5 * std::log1p(vv(n, q) / av[q]);
    for (arma::uword j = 0; j < M; ++j) {
      double* s = S.colptr(j);
      const double zj = z(j, q);
      for (arma::uword n = 0; n < B; ++n) {
        const double d = m(n, q) - zj;
        s[n] += 0.5 * d * d / (av[q] + vv(n, q));
      }
    }
  }
  arma::mat Psi = arma::exp(-S);
  Psi.each_col() %= arma::exp(logc);
  return mu.tape().record(Psi, {mu, v, Z, a, h}, [mu, v, Z, a, h](ad::Node* out) {
    return [mu, v, Z, a, h, out] {
      const arma::uword B = mu.n_rows(), D = mu.n_cols(), M = Z.n_rows();
      const arma::mat P = out->adj % out->val;
      const arma::mat& m = mu.val();
      const arma::mat& vv = v.val();
      const arma::mat& z = Z.val();
      const arma::rowvec av = a.val();
      arma::mat dmu(B, D, arma::fill::zeros), dv(B, D, arma::fill::zeros);
      arma::mat dZ(M, D, arma::fill::zeros);
      arma::rowvec da(D, arma::fill::zeros);
      const arma::vec prow = arma::sum(P, 1);
      for (arma::uword q = 0; q < D; ++q) {
        for (arma::uword j = 0; j < M; ++j) {
          const double* p = P.colptr(j);
          const double zj = z(j, q);
          double dzj = 0.0;
          for (arma::uword n = 0; n < B; ++n) {
            const double den = av[q] + vv(n, q), d = m(n, q) - zj;
            const double t = p[n] * d / den, t2 = p[n] * d * d / (den * den);
            dmu(n, q) -= t;
            dzj += t;
            dv(n, q) += 0.5 * t2;
            da[q] += 0.5 * t2;
          }
          dZ(j, q) += dzj;
        }
        for (arma::uword n = 0; n < B; ++n) {
          const double den = av[q] + vv(n, q);
          dv(n, q) -= 0.5 * prow[n] / den;
          da[q] += 0.5 * prow[n] * vv(n, q) / (av[q] * den);
        }
      }
      ad::accumulate(mu, std::move(dmu));
      ad::accumulate(v, std::move(dv));
      ad::accumulate(Z, std::move(dZ));
      ad::accumulate(a, arma::mat(da));
      ad::accumulate(h, arma::mat(1, 1, arma::fill::value(arma::accu(P) / h.scalar())));
    };
  });
}

Var psi2_contract(const Var& mu, const Var& v, const Var& Z, const Var& a, const Var& h,
                  const Var& G) {
  check_inputs("psi2_contract", mu, v, Z, a, h);
  const arma::uword B = mu.n_rows(), M = Z.n_rows();
  if (G.n_rows() != M || G.n_cols() != M) {
    throw Error(
        fmt::format("psi2_contract: G is {}x{} for {} inducing inputs", G.n_rows(), G.n_cols(), M));
  }
  arma::mat e(B, 1);
  arma::mat P;
  const arma::rowvec av = a.val();
  const arma::mat E = psi2_zterm(Z.val(), av), F = fold_lower(G.val());
  for (arma::uword n = 0; n < B; ++n) {
    psi2_lower(mu.val(), v.val(), Z.val(), av, h.scalar(), E, n, P);
    double acc = 0.0;
    for (arma::uword j = 0; j < M; ++j) {
      const double *p = P.colptr(j), *f = F.colptr(j);
      for (arma::uword i = j; i < M; ++i) acc += f[i] * p[i];
    }
    e[n] = acc;
  }
  return mu.tape().record(std::move(e), {mu, v, Z, a, h, G}, [mu, v, Z, a, h, G](ad::Node* out) {
    return [mu, v, Z, a, h, G, out] {
      const arma::uword B = mu.n_rows(), D = mu.n_cols(), M = Z.n_rows();
      const arma::mat& m = mu.val();
      const arma::mat& vv = v.val();
      const arma::mat& z = Z.val();
      const arma::rowvec av = a.val();
      const double hv = h.scalar();
      const arma::mat E = psi2_zterm(z, av), F = fold_lower(G.val());
      arma::mat dmu(B, D, arma::fill::zeros), dv(B, D, arma::fill::zeros);
      arma::mat dZ(M, D, arma::fill::zeros), dGl(M, M, arma::fill::zeros);
      arma::rowvec da(D, arma::fill::zeros);
      double dh = 0.0;
      // [Z, 1]: with P the point's weights (lower triangle), P [Z, 1] and P^T [Z, 1] give every
      // sum the adjoint needs (row and column sums, P z_q, P^T z_q) through two triangular
      // products instead of a scalar pass over the pairs per input dimension.
      arma::mat Zx(M, D + 1);
      Zx.head_cols(D) = z;
      Zx.col(D).ones();
      arma::mat Psi, R, Cc;
      for (arma::uword n = 0; n < B; ++n) {
        const double en = out->adj[n];
        if (en == 0.0) continue;
        psi2_lower(m, vv, z, av, hv, E, n, Psi);
        // P_ij = e_n F_ij Psi_ij (i >= j): each pair once, with both orders' weights.
        for (arma::uword j = 0; j < M; ++j) {
          double* ps = Psi.colptr(j);
          const double* f = F.colptr(j);
          double* dg = dGl.colptr(j);
          for (arma::uword i = j; i < M; ++i) {
            dg[i] += en * ps[i];
            ps[i] *= en * f[i];
          }
        }
        R = Zx;
        Cc = Zx;
        cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, int(M),
                    int(D + 1), 1.0, Psi.memptr(), int(M), R.memptr(), int(M));
        cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, int(M),
                    int(D + 1), 1.0, Psi.memptr(), int(M), Cc.memptr(), int(M));
        const double* r = R.colptr(D);   // row sums
        const double* c = Cc.colptr(D);  // column sums
        double sumP = 0.0;
        for (arma::uword i = 0; i < M; ++i) sumP += r[i];
        dh += 2.0 * sumP / hv;
        for (arma::uword q = 0; q < D; ++q) {
          const double aq = av[q], den = aq + 2.0 * vv(n, q), mq = m(n, q);
          const double inv2a = 1.0 / (2.0 * aq), invden = 1.0 / den;
          const double* zq = z.colptr(q);
          const double *Pz = R.colptr(q), *PTz = Cc.colptr(q);
          double* dzq = dZ.colptr(q);
          double zr = 0.0, zc = 0.0, z2r = 0.0, z2c = 0.0, zPz = 0.0;
          for (arma::uword i = 0; i < M; ++i) {
            const double zi = zq[i];
            zr += zi * r[i];
            zc += zi * c[i];
            z2r += zi * zi * r[i];
            z2c += zi * zi * c[i];
            zPz += zi * Pz[i];
            // z_i as the row of a pair gets d / den - (z_i - z_j) / (2a), as its column
            // d / den + (z_j - z_i) / (2a), with d = m - (z_i + z_j) / 2.
            dzq[i] += ((r[i] + c[i]) * (mq - 0.5 * zi) - 0.5 * (Pz[i] + PTz[i])) * invden +
                      (Pz[i] + PTz[i] - zi * (r[i] + c[i])) * inv2a;
          }
          // sums over the pairs of P d, P d^2 and P (z_i - z_j)^2
          const double s_d = mq * sumP - 0.5 * (zr + zc);
          const double s_d2 = mq * mq * sumP - mq * (zr + zc) + 0.25 * (z2r + z2c + 2.0 * zPz);
          const double s_dz2 = z2r + z2c - 2.0 * zPz;
          dmu(n, q) += -2.0 * s_d * invden;
          dv(n, q) += -sumP * invden + 2.0 * s_d2 * invden * invden;
          da[q] += sumP * vv(n, q) / (aq * den) + s_dz2 / (4.0 * aq * aq) + s_d2 * invden * invden;
        }
      }
      // dG_ij = sum_n e_n Psi2_nij for both orders of a pair.
      arma::mat dG = arma::symmatl(dGl);
      ad::accumulate(mu, std::move(dmu));
      ad::accumulate(v, std::move(dv));
      ad::accumulate(Z, std::move(dZ));
      ad::accumulate(a, arma::mat(da));
      ad::accumulate(h, arma::mat(1, 1, arma::fill::value(dh)));
      ad::accumulate(G, std::move(dG));
    };
  });
}

}  // namespace dkp::kernels
