#include "layers/svgp.hpp"

#include <cblas.h>

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_special.hpp"
#include "kernels/se.hpp"
#include "linalg/chol.hpp"
#include "util/error.hpp"

namespace dkp::layers {

namespace ad = dkp::autodiff;
using ad::Node;

namespace {

using ad::sigmoid;
using ad::softplus;

// u with softplus(u) = c > 0.
double softplus_inverse(double c) {
  return c > 30.0 ? c + std::log(-std::expm1(-c)) : std::log(std::expm1(c));
}

double diag_forward(DiagTransform t, double u) {
  return t == DiagTransform::kExp ? std::exp(u) : t == DiagTransform::kIdentity ? u : softplus(u);
}
double diag_derivative(DiagTransform t, double u) {
  return t == DiagTransform::kExp ? std::exp(u) : t == DiagTransform::kIdentity ? 1.0 : sigmoid(u);
}
double diag_inverse(DiagTransform t, double c) {
  return t == DiagTransform::kExp        ? std::log(c)
         : t == DiagTransform::kIdentity ? c
                                         : softplus_inverse(c);
}

void check_int_range(arma::uword a, arma::uword b, const char* op) {
  constexpr auto kMax = arma::uword(std::numeric_limits<int>::max());
  if (a > kMax || b > kMax) throw Error(fmt::format("layers::{}: matrix too large for BLAS", op));
}

// B <- op(L) B for a lower-triangular M x M block L and an M x n matrix B, both stored with
// leading dimension M.
void trmm_lower(const double* L, arma::uword m, double* B, arma::uword n, bool trans) {
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, trans ? CblasTrans : CblasNoTrans, CblasNonUnit,
              int(m), int(n), 1.0, L, int(m), B, int(m));
}

}  // namespace

// ---- ops
// ------------------------------------------------------------------------------------------

Var positive(const Var& u) {
  return ad::add_scalar(ad::softplus(u), kPositiveLower);
}

double positive_inverse(double c) {
  if (!(c > kPositiveLower) || !std::isfinite(c)) {
    throw ConfigError(
        fmt::format("positive parameter value {} is not above the lower bound {} (GPflow Log1pe)",
                    c, kPositiveLower));
  }
  return softplus_inverse(c - kPositiveLower);
}

arma::mat positive_inverse(const arma::mat& c) {
  arma::mat u(arma::size(c));
  for (arma::uword i = 0; i < c.n_elem; ++i) u[i] = positive_inverse(c[i]);
  return u;
}

Var unpack_lower(const Var& packed, arma::uword m, DiagTransform t) {
  const arma::uword p = m * (m + 1) / 2;
  if (packed.n_rows() != p) {
    throw Error(fmt::format("layers::unpack_lower: {} packed rows for M = {} (expected {})",
                            packed.n_rows(), m, p));
  }
  const arma::uword D = packed.n_cols();
  arma::mat L(m, m * D, arma::fill::zeros);
  const arma::mat& P = packed.val();
  for (arma::uword d = 0; d < D; ++d) {
    const double* src = P.colptr(d);
    for (arma::uword j = 0; j < m; ++j) {
      double* col = L.colptr(d * m + j);
      col[j] = diag_forward(t, *src++);
      for (arma::uword i = j + 1; i < m; ++i) col[i] = *src++;
    }
  }
  return packed.tape().record(std::move(L), {packed}, [packed, m, t](Node* out) {
    return [packed, m, t, out] {
      arma::mat& g = packed.node()->adj_ref();
      const arma::mat& P = packed.val();
      for (arma::uword d = 0; d < P.n_cols; ++d) {
        const double* u = P.colptr(d);
        double* dst = g.colptr(d);
        for (arma::uword j = 0; j < m; ++j) {
          const double* col = out->adj.colptr(d * m + j);
          *dst++ += col[j] * diag_derivative(t, *u++);
          for (arma::uword i = j + 1; i < m; ++i) {
            *dst++ += col[i];
            ++u;
          }
        }
      }
    };
  });
}

arma::mat pack_lower(const arma::mat& factors, DiagTransform t) {
  const arma::uword m = factors.n_rows;
  if (m == 0 || factors.n_cols % m != 0) {
    throw Error(fmt::format("layers::pack_lower: {}x{} is not a row of square blocks",
                            factors.n_rows, factors.n_cols));
  }
  const arma::uword D = factors.n_cols / m;
  arma::mat P(m * (m + 1) / 2, D);
  for (arma::uword d = 0; d < D; ++d) {
    double* dst = P.colptr(d);
    for (arma::uword j = 0; j < m; ++j) {
      const double* col = factors.colptr(d * m + j);
      if (!(col[j] > 0.0)) {
        throw Error(
            fmt::format("layers::pack_lower: diagonal entry {} of factor {} is {} (must "
                        "be positive)",
                        j, d, col[j]));
      }
      *dst++ = diag_inverse(t, col[j]);
      for (arma::uword i = j + 1; i < m; ++i) *dst++ = col[i];
    }
  }
  return P;
}

Var sum_log_diag_blocks(const Var& factors) {
  const arma::uword m = factors.n_rows();
  if (m == 0 || factors.n_cols() % m != 0) {
    throw Error(fmt::format("layers::sum_log_diag_blocks: {}x{} is not a row of square blocks",
                            factors.n_rows(), factors.n_cols()));
  }
  const arma::uword D = factors.n_cols() / m;
  double s = 0.0;
  for (arma::uword d = 0; d < D; ++d)
    for (arma::uword i = 0; i < m; ++i) s += std::log(std::abs(factors.val().at(i, d * m + i)));
  return factors.tape().record(arma::mat(1, 1, arma::fill::value(s)), {factors},
                               [factors, m, D](Node* out) {
                                 return [factors, m, D, out] {
                                   arma::mat& g = factors.node()->adj_ref();
                                   const double a = out->adj[0];
                                   for (arma::uword d = 0; d < D; ++d)
                                     for (arma::uword i = 0; i < m; ++i)
                                       g.at(i, d * m + i) += a / factors.val().at(i, d * m + i);
                                 };
                               });
}

Var marginal_var_delta(const Var& A, const Var& Aq, const Var& factors, double keep_bytes) {
  const arma::uword m = A.n_rows(), n = A.n_cols();
  if (Aq.n_rows() != m || Aq.n_cols() != n || factors.n_rows() != m ||
      factors.n_cols() % std::max<arma::uword>(m, 1) != 0) {
    throw Error(fmt::format("layers::marginal_var_delta: A {}x{}, Aq {}x{}, factors {}x{}", m, n,
                            Aq.n_rows(), Aq.n_cols(), factors.n_rows(), factors.n_cols()));
  }
  check_int_range(m, n, "marginal_var_delta");
  const arma::uword D = m == 0 ? 0 : factors.n_cols() / m;
  const bool need_backward = Aq.needs_grad() || factors.needs_grad();
  // Keep the products L_d^T Aq for the backward pass when they fit the budget.
  const bool keep =
      need_backward && double(m) * double(n) * double(D) * sizeof(double) <= keep_bytes;
  arma::mat out(n, D);
  arma::mat kept(keep ? m : 0, keep ? n * D : 0);
  arma::mat buf(keep ? 0 : m, keep ? 0 : n);
  for (arma::uword d = 0; d < D; ++d) {
    double* B = keep ? kept.colptr(d * n) : buf.memptr();
    std::copy(Aq.val().begin(), Aq.val().end(), B);
    trmm_lower(factors.val().colptr(d * m), m, B, n, true);
    double* o = out.colptr(d);
    for (arma::uword j = 0; j < n; ++j) {
      const double* b = B + j * m;
      const double* a = A.val().colptr(j);
      double sb = 0.0, sa = 0.0;
      for (arma::uword i = 0; i < m; ++i) {
        sb += b[i] * b[i];
        sa += a[i] * a[i];
      }
      o[j] = sb - sa;
    }
  }
  return A.tape().record(
      std::move(out), {A, Aq, factors},
      [A, Aq, factors, m, n, D, keep, kept = std::move(kept)](Node* o) mutable {
        return [A, Aq, factors, m, n, D, keep, kept = std::move(kept), o]() mutable {
          const arma::mat& G = o->adj;  // n x D
          if (A.needs_grad()) {
            const arma::rowvec gsum = arma::sum(G, 1).t();
            A.node()->adj_ref() -= 2.0 * (A.val().each_row() % gsum);
          }
          if (!Aq.needs_grad() && !factors.needs_grad()) return;
          arma::mat buf(m, n);  // recomputed products, then the scaled columns of Aq
          arma::mat W(m, m);
          arma::mat dAq;
          if (Aq.needs_grad()) dAq.zeros(m, n);
          for (arma::uword d = 0; d < D; ++d) {
            const double* Ld = factors.val().colptr(d * m);
            const double* g = G.colptr(d);
            if (factors.needs_grad()) {
              // d var_n / d L_d = 2 a_n a_n^T L_d, so dL_d = tril(2 W L_d) with
              // W = Aq diag(g_d) Aq^T = P P^T - Q Q^T: P (Q) holds the columns with g > 0
              // (g < 0) scaled by sqrt(|g|); two rank-k updates (dsyrk), M^2 N flops in all.
              arma::uword np = 0, nq = 0;
              for (arma::uword j = 0; j < n; ++j) {
                if (g[j] == 0.0) continue;
                const double w = std::sqrt(std::abs(g[j]));
                double* dst = g[j] > 0.0 ? buf.colptr(np++) : buf.colptr(n - 1 - nq++);
                const double* src = Aq.val().colptr(j);
                for (arma::uword i = 0; i < m; ++i) dst[i] = w * src[i];
              }
              cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, int(m), int(np), 1.0,
                          buf.memptr(), int(m), 0.0, W.memptr(), int(m));
              if (nq > 0) {
                cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, int(m), int(nq), -1.0,
                            buf.colptr(n - nq), int(m), 1.0, W.memptr(), int(m));
              }
              W = arma::symmatl(W);
              cblas_dtrmm(CblasColMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, int(m),
                          int(m), 2.0, Ld, int(m), W.memptr(), int(m));
              arma::mat& adj = factors.node()->adj_ref();
              for (arma::uword j = 0; j < m; ++j) {
                double* dst = adj.colptr(d * m + j);
                const double* src = W.colptr(j);
                for (arma::uword i = j; i < m; ++i) dst[i] += src[i];
              }
            }
            if (Aq.needs_grad()) {
              // dAq += L_d C, C = 2 (L_d^T Aq) diag(g_d).
              double* C = keep ? kept.colptr(d * n) : buf.memptr();
              if (!keep) {
                std::copy(Aq.val().begin(), Aq.val().end(), C);
                trmm_lower(Ld, m, C, n, true);
              }
              for (arma::uword j = 0; j < n; ++j) {
                const double w = 2.0 * g[j];
                double* c = C + j * m;
                for (arma::uword i = 0; i < m; ++i) c[i] *= w;
              }
              trmm_lower(Ld, m, C, n, false);
              const double* c = C;
              double* dst = dAq.memptr();
              for (arma::uword k = 0; k < m * n; ++k) dst[k] += c[k];
            }
          }
          if (Aq.needs_grad()) Aq.node()->adj_ref() += dAq;
        };
      });
}

Var gaussian_expected_loglik(const Var& mean, const Var& var, const arma::vec& y,
                             const Var& noise_var) {
  if (mean.val().n_elem != y.n_elem || var.val().n_elem != y.n_elem ||
      noise_var.val().n_elem != 1) {
    throw Error(
        fmt::format("layers::gaussian_expected_loglik: mean {}x{}, var {}x{}, {} targets, "
                    "noise {}x{}",
                    mean.n_rows(), mean.n_cols(), var.n_rows(), var.n_cols(), y.n_elem,
                    noise_var.n_rows(), noise_var.n_cols()));
  }
  ad::Tape& tape = mean.tape();
  const Var yc = tape.constant(arma::mat(y));
  const Var t = ad::mean(ad::add(ad::square(ad::sub(mean, yc)), var));
  const Var r =
      ad::add(ad::scale(ad::log(noise_var), -0.5), ad::scale(ad::div(t, noise_var), -0.5));
  return ad::add_scalar(r, -0.5 * std::log(2.0 * arma::datum::pi));
}

// ---- kernel of plain values
// -----------------------------------------------------------------------

arma::mat se_kernel(const arma::mat& X, const arma::mat& Z, const arma::rowvec& ell,
                    double variance) {
  arma::rowvec inv = 1.0 / ell;
  if (inv.n_elem == 1 && X.n_cols != 1) inv = arma::rowvec(X.n_cols, arma::fill::value(inv[0]));
  const arma::mat Xs = X.each_row() % inv;
  const arma::mat Zs = Z.each_row() % inv;
  arma::mat D = -2.0 * Xs * Zs.t();
  D.each_col() += arma::sum(arma::square(Xs), 1);
  D.each_row() += arma::sum(arma::square(Zs), 1).t();
  D.clamp(0.0, arma::datum::inf);
  return variance * arma::exp(-0.5 * D);
}

// ---- the layer
// ------------------------------------------------------------------------------------

SvgpLayer::SvgpLayer(std::string prefix, const arma::mat& Z, SvgpConfig config, MeanFunction mean,
                     arma::mat W)
    : prefix_(std::move(prefix)), Z0_(Z), cfg_(config), mean_(mean), W_(std::move(W)) {
  if (Z0_.n_rows == 0 || Z0_.n_cols == 0) {
    throw ConfigError(fmt::format("SVGP layer '{}': empty inducing inputs ({}x{})", prefix_,
                                  Z0_.n_rows, Z0_.n_cols));
  }
  if (cfg_.num_outputs == 0) {
    throw ConfigError(fmt::format("SVGP layer '{}': no outputs", prefix_));
  }
  if (mean_ == MeanFunction::kIdentity && cfg_.num_outputs != Z0_.n_cols) {
    throw ConfigError(
        fmt::format("SVGP layer '{}': identity mean function needs D_in = D_out "
                    "(got {} and {})",
                    prefix_, Z0_.n_cols, cfg_.num_outputs));
  }
  if (mean_ == MeanFunction::kLinear &&
      (W_.n_rows != Z0_.n_cols || W_.n_cols != cfg_.num_outputs)) {
    throw ConfigError(fmt::format("SVGP layer '{}': mean weights {}x{}, expected {}x{}", prefix_,
                                  W_.n_rows, W_.n_cols, Z0_.n_cols, cfg_.num_outputs));
  }
  if (!(cfg_.q_sqrt_scale > 0.0) || !(cfg_.jitter >= 0.0) || !(cfg_.white_variance >= 0.0)) {
    throw ConfigError(
        fmt::format("SVGP layer '{}': q_sqrt scale {}, jitter {} and White "
                    "variance {} must be positive / non-negative",
                    prefix_, cfg_.q_sqrt_scale, cfg_.jitter, cfg_.white_variance));
  }
}

void SvgpLayer::add_initial_parameters(autodiff::ParamMap& params) const {
  const arma::uword M = Z0_.n_rows, Din = Z0_.n_cols, D = cfg_.num_outputs;
  params[name("Z")] = Z0_;
  const arma::uword nell = cfg_.ard ? Din : 1;
  params[name("kern.lengthscales")] =
      arma::mat(1, nell, arma::fill::value(positive_inverse(cfg_.lengthscale)));
  params[name("kern.variance")] =
      arma::mat(1, 1, arma::fill::value(positive_inverse(cfg_.variance)));
  if (cfg_.white_variance > 0.0 && cfg_.learn_white) {
    params[name("kern.white")] =
        arma::mat(1, 1, arma::fill::value(positive_inverse(cfg_.white_variance)));
  }
  params[name("q_mu")] = arma::mat(M, D, arma::fill::zeros);
  arma::mat L0;
  if (cfg_.whiten) {
    L0 = arma::eye(M, M);
  } else {
    // 2018 code: q_sqrt = chol(K_uu + jitter I) for every output (the prior).
    arma::mat K =
        se_kernel(Z0_, Z0_, arma::rowvec(nell, arma::fill::value(cfg_.lengthscale)), cfg_.variance);
    K.diag() += cfg_.white_variance + cfg_.jitter;
    L0 = linalg::chol(K, "SVGP initial q_sqrt (prior K_uu)");
  }
  L0 *= cfg_.q_sqrt_scale;
  params[name("q_sqrt")] = pack_lower(arma::repmat(L0, 1, D), cfg_.q_diag);
}

SvgpLayer::State SvgpLayer::prepare(const autodiff::VarMap& params) const {
  State s;
  s.Z = autodiff::get(params, name("Z"));
  const Var ell = positive(autodiff::get(params, name("kern.lengthscales")));
  s.log_ell = ad::log(ell);
  s.kvar = positive(autodiff::get(params, name("kern.variance")));
  ad::Tape& tape = s.Z.tape();
  Var white;
  if (cfg_.white_variance > 0.0) {
    white = cfg_.learn_white ? positive(autodiff::get(params, name("kern.white")))
                             : tape.constant(cfg_.white_variance);
  }
  s.Zs = kernels::scale_columns(s.Z, s.log_ell);
  const arma::uword M = Z0_.n_rows;
  Var Kuu = ad::mul(s.kvar, kernels::se_unit_sym(s.Zs));
  if (white.valid()) {
    Kuu = ad::add(Kuu, ad::mul(white, tape.constant(arma::eye(M, M))));
    s.kdiag = ad::add(s.kvar, white);
  } else {
    s.kdiag = s.kvar;
  }
  if (cfg_.jitter > 0.0) Kuu = ad::add(Kuu, tape.constant(cfg_.jitter * arma::eye(M, M)));
  const std::string where = prefix_ + " K_uu";
  s.LK = ad::cholesky(Kuu, where.c_str());
  s.q_mu = autodiff::get(params, name("q_mu"));
  s.factors = unpack_lower(autodiff::get(params, name("q_sqrt")), M, cfg_.q_diag);
  return s;
}

Marginals SvgpLayer::marginals(const State& s, const Var& X) const {
  if (X.n_cols() != Z0_.n_cols) {
    throw Error(fmt::format("SVGP layer '{}': inputs have {} columns, the layer takes {}", prefix_,
                            X.n_cols(), Z0_.n_cols));
  }
  const Var Xs = kernels::scale_columns(X, s.log_ell);
  const Var Kuf = kernels::se_scaled(s.kvar, s.Zs, Xs);  // M x n
  const Var A = ad::solve_lower(s.LK, Kuf);
  const Var Aq = cfg_.whiten ? A : ad::solve_lower(s.LK, A, true);
  Var mean = ad::matmul(Aq, s.q_mu, true, false);  // n x D
  switch (mean_) {
    case MeanFunction::kZero:
      break;
    case MeanFunction::kIdentity:
      mean = ad::add(mean, X);
      break;
    case MeanFunction::kLinear:
      mean = ad::add(mean, ad::matmul(X, X.tape().constant(W_)));
      break;
  }
  const Var var = ad::add(marginal_var_delta(A, Aq, s.factors), s.kdiag);
  return {mean, var};
}

Var SvgpLayer::kl(const State& s) const {
  const double M = double(Z0_.n_rows), D = double(cfg_.num_outputs);
  Var quad;
  if (cfg_.whiten) {
    quad = ad::add(ad::sum(ad::square(s.factors)), ad::sum(ad::square(s.q_mu)));
  } else {
    quad = ad::add(ad::sum(ad::square(ad::solve_lower(s.LK, s.factors))),
                   ad::sum(ad::square(ad::solve_lower(s.LK, s.q_mu))));
    quad = ad::add(quad, ad::scale(ad::logdet_chol(s.LK), D));
  }
  // 1/2 [quad - M D] - sum_d 1/2 log|S_d|, with 1/2 log|S_d| = sum_i log L_d(i, i).
  return ad::sub(ad::add_scalar(ad::scale(quad, 0.5), -0.5 * M * D),
                 sum_log_diag_blocks(s.factors));
}

}  // namespace dkp::layers
