#include "kernels/psi.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

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

// Psi2 at point n into P (M x M): h^2 c_n exp(-S) with S the sum over q of the two quadratic terms.
void psi2_point(const arma::mat& mu, const arma::mat& v, const arma::mat& Z, const arma::rowvec& a,
                double h, arma::uword n, arma::mat& P) {
  const arma::uword M = Z.n_rows, D = Z.n_cols;
  P.zeros(M, M);
  double logc = 2.0 * std::log(h);
  for (arma::uword q = 0; q < D; ++q) {
    const double aq = a[q], den = aq + 2.0 * v(n, q), m = mu(n, q);
    logc -= 0.5 * std::log1p(2.0 * v(n, q) / aq);
    const double* z = Z.colptr(q);
    for (arma::uword j = 0; j < M; ++j) {
      double* p = P.colptr(j);
      const double zj = z[j];
      for (arma::uword i = 0; i < M; ++i) {
        const double dz = z[i] - zj, d = m - 0.5 * (z[i] + zj);
        p[i] += dz * dz / (4.0 * aq) + d * d / den;
      }
    }
  }
  P = arma::exp(logc - P);
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
  for (arma::uword n = 0; n < B; ++n) {
    psi2_point(mu.val(), v.val(), Z.val(), av, h.scalar(), n, P);
    e[n] = arma::accu(P % G.val());
  }
  return mu.tape().record(std::move(e), {mu, v, Z, a, h, G}, [mu, v, Z, a, h, G](ad::Node* out) {
    return [mu, v, Z, a, h, G, out] {
      const arma::uword B = mu.n_rows(), D = mu.n_cols(), M = Z.n_rows();
      const arma::mat& m = mu.val();
      const arma::mat& vv = v.val();
      const arma::mat& z = Z.val();
      const arma::rowvec av = a.val();
      const double hv = h.scalar();
      arma::mat dmu(B, D, arma::fill::zeros), dv(B, D, arma::fill::zeros);
      arma::mat dZ(M, D, arma::fill::zeros), dG(M, M, arma::fill::zeros);
      arma::rowvec da(D, arma::fill::zeros);
      double dh = 0.0;
      arma::mat Psi, P;
      for (arma::uword n = 0; n < B; ++n) {
        const double en = out->adj[n];
        if (en == 0.0) continue;
        psi2_point(m, vv, z, av, hv, n, Psi);
        dG += en * Psi;
        P = en * (G.val() % Psi);
        const double sumP = arma::accu(P);
        dh += 2.0 * sumP / hv;
        for (arma::uword q = 0; q < D; ++q) {
          const double aq = av[q], den = aq + 2.0 * vv(n, q), mq = m(n, q);
          const double* zq = z.colptr(q);
          double s_d = 0.0, s_d2 = 0.0, s_dz2 = 0.0;
          for (arma::uword j = 0; j < M; ++j) {
            const double* p = P.colptr(j);
            const double zj = zq[j];
            double dzj = 0.0;
            for (arma::uword i = 0; i < M; ++i) {
              const double dz = zq[i] - zj, d = mq - 0.5 * (zq[i] + zj), pij = p[i];
              s_d += pij * d;
              s_d2 += pij * d * d;
              s_dz2 += pij * dz * dz;
              // z_i's share; z_j's share accumulated in dzj.
              dZ(i, q) += pij * (-dz / (2.0 * aq) + d / den);
              dzj += pij * (dz / (2.0 * aq) + d / den);
            }
            dZ(j, q) += dzj;
          }
          dmu(n, q) += -2.0 * s_d / den;
          dv(n, q) += -sumP / den + 2.0 * s_d2 / (den * den);
          da[q] += sumP * vv(n, q) / (aq * den) + s_dz2 / (4.0 * aq * aq) + s_d2 / (den * den);
        }
      }
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
