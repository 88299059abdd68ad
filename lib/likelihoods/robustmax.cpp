#include "likelihoods/robustmax.hpp"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::likelihoods {

namespace {

// GPflow's squeeze of every normal CDF factor into [1e-4, 1 - 1e-4].
constexpr double kSqueezeA = 1.0 - 2e-4;
constexpr double kSqueezeB = 1e-4;

// P(argmax = y) for one point with means m[0..C) and variances v[0..C); with dm and dv not null,
// adds dP/dm_c and dP/dv_c into them (scaled by `scale`).
double point_prob(const std::vector<double>& m, const std::vector<double>& v, arma::uword y,
                  const GaussHermite& gh, double scale, double* dm, double* dv) {
  const size_t C = m.size();
  const double sy = std::sqrt(2.0 * v[y]);
  std::vector<double> sd(C), z(C), phi(C);
  for (size_t c = 0; c < C; ++c) sd[c] = std::sqrt(v[c]);
  double P = 0.0;
  for (arma::uword k = 0; k < gh.x.n_elem; ++k) {
    const double wk = gh.w[k] / std::sqrt(M_PI);
    const double base = m[y] + sy * gh.x[k];
    double prod = 1.0;
    for (size_t c = 0; c < C; ++c) {
      if (c == y) continue;
      z[c] = (base - m[c]) / sd[c];
      phi[c] = kSqueezeA * normal_cdf(z[c]) + kSqueezeB;
      prod *= phi[c];
    }
    P += wk * prod;
    if (!dm) continue;
    for (size_t c = 0; c < C; ++c) {
      if (c == y) continue;
      // dP/dz_c for this node; phi[c] >= 1e-4, so the division is safe.
      const double g = scale * wk * kSqueezeA * normal_pdf(z[c]) * prod / phi[c];
      dm[c] -= g / sd[c];
      dm[y] += g / sd[c];
      dv[c] -= g * z[c] / (2.0 * v[c]);
      dv[y] += g * gh.x[k] / (sy * sd[c]);
    }
  }
  return P;
}

void check_shapes(const arma::mat& m, const arma::mat& v, const char* what) {
  if (m.n_rows != v.n_rows || m.n_cols != v.n_cols) {
    throw Error(fmt::format("{}: means {}x{} and variances {}x{}", what, m.n_rows, m.n_cols,
                            v.n_rows, v.n_cols));
  }
  if (m.n_cols < 2) throw Error(fmt::format("{}: {} classes (at least 2)", what, m.n_cols));
  if (!v.is_finite() || (v.n_elem > 0 && v.min() <= 0.0) || !m.is_finite()) {
    throw Error(fmt::format("{}: means and variances must be finite, variances positive", what));
  }
}

void row(const arma::mat& a, arma::uword n, std::vector<double>& out) {
  out.resize(a.n_cols);
  for (arma::uword c = 0; c < a.n_cols; ++c) out[c] = a(n, c);
}

}  // namespace

void validate(const RobustMax& rm) {
  if (rm.classes < 2) throw ConfigError(fmt::format("robust-max: {} classes", rm.classes));
  if (!(rm.eps > 0.0 && rm.eps < 1.0)) {
    throw ConfigError(fmt::format("robust-max: eps must be in (0, 1), got {}", rm.eps));
  }
  if (rm.gh_points == 0) throw ConfigError("robust-max: needs at least 1 quadrature point");
}

arma::uvec class_labels(const arma::vec& y, size_t classes) {
  arma::uvec out(y.n_elem);
  for (arma::uword n = 0; n < y.n_elem; ++n) {
    const double r = std::round(y[n]);
    if (!std::isfinite(y[n]) || r != y[n] || r < 0.0 || r >= double(classes)) {
      throw Error(
          fmt::format("label {} of point {} is not a class index in 0..{}", y[n], n, classes - 1));
    }
    out[n] = arma::uword(r);
  }
  return out;
}

arma::vec prob_largest(const arma::mat& m, const arma::mat& v, const arma::uvec& y,
                       const GaussHermite& gh) {
  check_shapes(m, v, "robust-max");
  if (y.n_elem != m.n_rows) {
    throw Error(fmt::format("robust-max: {} labels for {} points", y.n_elem, m.n_rows));
  }
  arma::vec P(m.n_rows);
  std::vector<double> mr, vr;
  for (arma::uword n = 0; n < m.n_rows; ++n) {
    if (y[n] >= m.n_cols) throw Error(fmt::format("robust-max: label {} of point {}", y[n], n));
    row(m, n, mr);
    row(v, n, vr);
    P[n] = point_prob(mr, vr, y[n], gh, 0.0, nullptr, nullptr);
  }
  return P;
}

namespace {

// An op in m and v with the given value whose adjoint is the output's adjoint times
// sum_n w_n dP_n / d(m_n, v_n), P_n = P(argmax = y_n): both sums below are functions of the P_n.
autodiff::Var prob_op(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                      std::shared_ptr<GaussHermite> gh, double value, arma::vec w) {
  return m.tape().record(
      arma::mat(1, 1, arma::fill::value(value)), {m, v}, [m, v, y, gh, w](autodiff::Node* out) {
        return [m, v, y, gh, w, out] {
          const arma::uword N = m.n_rows(), C = m.n_cols();
          arma::mat dm(N, C, arma::fill::zeros), dv(N, C, arma::fill::zeros);
          std::vector<double> mr, vr, gm(C), gv(C);
          for (arma::uword n = 0; n < N; ++n) {
            row(m.val(), n, mr);
            row(v.val(), n, vr);
            std::fill(gm.begin(), gm.end(), 0.0);
            std::fill(gv.begin(), gv.end(), 0.0);
            point_prob(mr, vr, y[n], *gh, out->adj(0, 0) * w[n], gm.data(), gv.data());
            for (arma::uword c = 0; c < C; ++c) {
              dm(n, c) = gm[c];
              dv(n, c) = gv[c];
            }
          }
          if (m.needs_grad()) autodiff::accumulate(m, std::move(dm));
          if (v.needs_grad()) autodiff::accumulate(v, std::move(dv));
        };
      });
}

void check_classes(const autodiff::Var& m, const RobustMax& rm) {
  validate(rm);
  if (m.n_cols() != rm.classes) {
    throw Error(
        fmt::format("robust-max: {} latent columns for {} classes", m.n_cols(), rm.classes));
  }
}

}  // namespace

autodiff::Var robustmax_ell_sum(const autodiff::Var& m, const autodiff::Var& v, const arma::uvec& y,
                                const RobustMax& rm) {
  check_classes(m, rm);
  auto gh = std::make_shared<GaussHermite>(gauss_hermite(rm.gh_points));
  const arma::vec P = prob_largest(m.val(), v.val(), y, *gh);
  const double log_other = std::log(rm.eps / double(rm.classes - 1));
  const double delta = std::log1p(-rm.eps) - log_other;  // d value / d P_n
  const double value = double(P.n_elem) * log_other + delta * arma::accu(P);
  return prob_op(m, v, y, gh, value, arma::vec(P.n_elem, arma::fill::value(delta)));
}

autodiff::Var robustmax_log_z_sum(const autodiff::Var& m, const autodiff::Var& v,
                                  const arma::uvec& y, const RobustMax& rm) {
  check_classes(m, rm);
  auto gh = std::make_shared<GaussHermite>(gauss_hermite(rm.gh_points));
  const arma::vec P = prob_largest(m.val(), v.val(), y, *gh);
  const double other = rm.eps / double(rm.classes - 1), slope = 1.0 - rm.eps - other;
  const arma::vec Z = other + slope * P;  // (1 - eps) P + other (1 - P)
  return prob_op(m, v, y, gh, arma::accu(arma::log(Z)), slope / Z);
}

arma::mat robustmax_class_probs(const arma::mat& m, const arma::mat& v, const RobustMax& rm) {
  validate(rm);
  check_shapes(m, v, "robust-max");
  if (m.n_cols != rm.classes) {
    throw Error(fmt::format("robust-max: {} latent columns for {} classes", m.n_cols, rm.classes));
  }
  const GaussHermite gh = gauss_hermite(rm.gh_points);
  const double other = rm.eps / double(rm.classes - 1);
  arma::mat p(m.n_rows, m.n_cols);
  std::vector<double> mr, vr;
  for (arma::uword n = 0; n < m.n_rows; ++n) {
    row(m, n, mr);
    row(v, n, vr);
    for (arma::uword c = 0; c < m.n_cols; ++c) {
      const double P = point_prob(mr, vr, c, gh, 0.0, nullptr, nullptr);
      p(n, c) = P * (1.0 - rm.eps) + (1.0 - P) * other;
    }
  }
  return p;
}

}  // namespace dkp::likelihoods
