#include "models/aep_dgp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "kernels/psi.hpp"
#include "kernels/se.hpp"
#include "likelihoods/probit.hpp"
#include "likelihoods/robustmax.hpp"
#include "models/dsvi_dgp.hpp"
#include "models/kmeans.hpp"
#include "models/options.hpp"
#include "models/svgp_output.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

namespace {

constexpr const char* kNoise = "likelihood.log_variance";

// The robust-max quadrature needs variances above 0; moment matching gives them but for
// round-off (gp_moments clamps at 0).
Var positive_var(const Var& v) {
  return ad::clamp(v, 1e-12, std::numeric_limits<double>::infinity());
}

std::string gp_key(size_t l, size_t d, const char* what) {
  return fmt::format("layer{}.gp{}.{}", l, d, what);
}

// geepee's lengthscale start for the first layer: half the median of the pairwise distances of
// (at most `rows` random) training inputs, over i <= j (triu_indices, the zeros included).
double median_distance(const arma::mat& X, size_t rows, random::Stream& init) {
  arma::mat Xs = X;
  if (X.n_rows > rows) {
    const arma::uvec perm = random::permutation(init, X.n_rows);
    Xs = X.rows(perm.head(rows));
  }
  const arma::uword n = Xs.n_rows;
  std::vector<double> d;
  d.reserve(n * (n + 1) / 2);
  for (arma::uword j = 0; j < n; ++j) {
    for (arma::uword i = 0; i <= j; ++i) d.push_back(arma::norm(Xs.row(i) - Xs.row(j)));
  }
  // numpy's median: the mean of the two middle values for an even count.
  const size_t k = d.size() / 2;
  std::nth_element(d.begin(), d.begin() + long(k), d.end());
  const double hi = d[k];
  if (d.size() % 2 == 1) return hi;
  const double lo = *std::max_element(d.begin(), d.begin() + long(k));
  return 0.5 * (lo + hi);
}

}  // namespace

namespace aep_detail {

// One GP's cavity (c = beta) or posterior (c = 1) quantities.
GpState gp_state(const VarMap& p, size_t l, size_t d, double jitter, double c, double n_train,
                 Var* energy) {
  GpState g;
  g.Z = get(p, gp_key(l, d, "Z"));
  g.log_ell = get(p, gp_key(l, d, "log_ell"));
  g.log_var = get(p, gp_key(l, d, "log_var"));
  ad::Tape& tape = g.Z.tape();
  const arma::uword M = g.Z.n_rows();
  g.a_sq = ad::exp(ad::scale(g.log_ell, 2.0));
  g.h = ad::exp(g.log_var);
  const Var K = ad::add(kernels::se_ard_sym(g.Z, g.log_ell, g.log_var),
                        tape.constant(jitter * arma::eye(M, M)));
  const Var LK = ad::cholesky(K, "aep K_uu");
  const Var L = ad::tril(get(p, gp_key(l, d, "site_L")));
  const Var t = get(p, gp_key(l, d, "site_t"));
  const Var C = ad::matmul(LK, L, true, false);  // L_K^T L
  const Var s = ad::matmul(LK, t, true, false);  // L_K^T t
  const Var r = ad::matmul(C, s, true, false);   // C^T s = L^T K t
  const Var CtC = ad::matmul(C, C, true, false);
  const Var I = tape.constant(arma::eye(M, M));
  const Var ss = ad::sum(ad::square(s));
  // phi_c without 1/2 log|K|; Lm and g for the state's own count.
  auto phi = [&](double cc, Var* Lm_out, Var* g_out) {
    const Var Lm = ad::cholesky(ad::add(I, ad::scale(CtC, cc)), "aep I + c C^T C");
    const Var gv = ad::solve_lower(Lm, r);
    if (Lm_out) *Lm_out = Lm;
    if (g_out) *g_out = gv;
    return ad::sub(ad::scale(ad::sub(ss, ad::scale(ad::sum(ad::square(gv)), cc)), 0.5 * cc * cc),
                   ad::scale(ad::logdet_chol(Lm), 0.5));
  };
  Var Lm, gv;
  const Var phi_c = phi(c, &Lm, &gv);
  if (energy) {
    const double beta = (n_train - 1.0) / n_train;
    const Var phi_other = phi(c == 1.0 ? beta : 1.0, nullptr, nullptr);
    const Var phi_beta = c == 1.0 ? phi_other : phi_c, phi_one = c == 1.0 ? phi_c : phi_other;
    *energy = ad::sub(ad::scale(phi_beta, n_train), ad::scale(phi_one, n_train - 1.0));
  }
  // a = c (t - c L M_c^-1 C^T s), G = -c (Lm^-1 L^T)^T (Lm^-1 L^T).
  g.a = ad::scale(ad::sub(t, ad::scale(ad::matmul(L, ad::solve_lower(Lm, gv, true)), c)), c);
  const Var Ht = ad::solve_lower(Lm, ad::transpose(L));
  g.G = ad::scale(ad::matmul(Ht, Ht, true, false), -c);
  return g;
}

std::pair<Var, Var> gp_moments(const GpState& g, const Var& mu, const Var& v_in,
                               const arma::vec& w) {
  ad::Tape& tape = g.Z.tape();
  const bool lin = !w.is_empty();
  if (!v_in.valid()) {
    const Var Kx = kernels::se_ard(mu, g.Z, g.log_ell, g.log_var);
    Var m = ad::matmul(Kx, g.a);
    if (lin) m = ad::add(m, tape.constant(mu.val() * w));
    const Var v = ad::add_each_row(ad::row_sums(ad::mul(ad::matmul(Kx, g.G), Kx)), g.h);
    return {m, ad::clamp(v, 0.0, std::numeric_limits<double>::infinity())};
  }
  const Var P1 = kernels::psi1(mu, v_in, g.Z, g.a_sq, g.h);
  const Var G_sto = ad::add(g.G, ad::matmul(g.a, g.a, false, true));
  const Var e2 = kernels::psi2_contract(mu, v_in, g.Z, g.a_sq, g.h, G_sto);
  Var m = ad::matmul(P1, g.a);
  Var v = ad::add_each_row(e2, g.h);
  if (lin) {
    const Var wv = tape.constant(w);
    const Var mlin = ad::matmul(mu, wv);
    // W^T (diag(v_in) + mu mu^T) W
    const Var psi3 = ad::add(ad::matmul(v_in, tape.constant(arma::square(w))), ad::square(mlin));
    // Psi4 a with Psi4_nm = Psi1_nm [sum_q w_q z_mq r_nq + sum_q w_q mu_nq (1 - r_nq)],
    // r = v_in / (v_in + l^2).
    const Var r = ad::div(v_in, ad::add_each_row(v_in, g.a_sq));
    const Var T1 =
        ad::matmul(ad::mul_each_row(r, tape.constant(arma::rowvec(w.t()))), g.Z, false, true);
    const Var onem = ad::add_scalar(ad::neg(r), 1.0);
    const Var T = ad::add_each_col(T1, ad::matmul(ad::mul(mu, onem), wv));
    const Var psi4a = ad::matmul(ad::mul(P1, T), g.a);
    m = ad::add(m, mlin);
    v = ad::add(ad::add(v, psi3), ad::scale(psi4a, 2.0));
  }
  v = ad::sub(v, ad::square(m));
  return {m, ad::clamp(v, 0.0, std::numeric_limits<double>::infinity())};
}

}  // namespace aep_detail

using aep_detail::gp_moments;
using aep_detail::gp_state;
using aep_detail::GpState;

AepDgp::AepDgp(const AepConfig& config, const arma::mat& X_train, random::Stream& init)
    : cfg_(config) {
  if (cfg_.depth == 0) throw ConfigError("AEP DGP: depth must be at least 1");
  if (cfg_.num_inducing == 0) throw ConfigError("AEP DGP: needs at least one pseudo-point");
  if (cfg_.hidden_width == 0 && cfg_.depth > 1) {
    throw ConfigError("AEP DGP: the hidden width must be at least 1");
  }
  if (X_train.n_rows < 2 || X_train.n_cols == 0) {
    throw ConfigError(fmt::format("AEP DGP: {} training points with {} features", X_train.n_rows,
                                  X_train.n_cols));
  }
  widths_.push_back(X_train.n_cols);
  for (size_t l = 0; l + 1 < cfg_.depth; ++l) widths_.push_back(cfg_.hidden_width);
  if (cfg_.num_classes == 1) throw ConfigError("AEP DGP: classification needs at least 2 classes");
  widths_.push_back(SvgpOutput(cfg_.num_classes).width());  // probit: 1, robust-max: C
  const size_t L = cfg_.depth;

  random::Stream zs = init.child("aep-kmeans");
  const arma::mat Z0 =
      kmeans_inducing(X_train, cfg_.num_inducing, zs, cfg_.kmeans_iterations, "AEP DGP");
  const arma::uword M = Z0.n_rows;
  random::Stream ms = init.child("aep-median");
  const double ell0 = median_distance(X_train, cfg_.median_rows, ms) / 2.0 + 1e-16;
  const arma::vec lin = arma::linspace(-1.0, 1.0, M);

  // Linear mean functions (report eq. 3.12), as the DSVI DGP's.
  arma::mat X_running = X_train;
  W_.assign(L, arma::mat());
  for (size_t l = 0; cfg_.linear_mean && l + 1 < L; ++l) {
    W_[l] = linear_mean_map(X_running, widths_[l + 1], "AEP DGP", l);
    X_running = X_running * W_[l];
  }

  for (size_t l = 0; l < L; ++l) {
    const arma::uword din = widths_[l];
    for (arma::uword d = 0; d < widths_[l + 1]; ++d) {
      random::Stream gs = init.child("aep-gp", l * 1000 + d);
      if (l == 0) {
        initial_[gp_key(l, d, "Z")] = Z0;
        initial_[gp_key(l, d, "log_ell")] = arma::mat(1, din, arma::fill::value(std::log(ell0)));
        initial_[gp_key(l, d, "log_var")] =
            arma::mat(1, 1, arma::fill::value(std::log(cfg_.first_variance)));
      } else {
        initial_[gp_key(l, d, "Z")] = arma::repmat(lin, 1, din);
        initial_[gp_key(l, d, "log_ell")] =
            arma::log(1.0 + 0.1 * random::uniform_matrix(gs, 1, din));
        initial_[gp_key(l, d, "log_var")] =
            arma::mat(1, 1, arma::fill::value(std::log(cfg_.hidden_variance)));
      }
      const arma::vec alpha = 0.5 * arma::vec(random::uniform_matrix(gs, M, 1));
      initial_[gp_key(l, d, "site_L")] = arma::diagmat(1.0 / arma::sqrt(alpha));
      initial_[gp_key(l, d, "site_t")] = lin / alpha;
    }
  }
  if (cfg_.num_classes == 0) {
    initial_[kNoise] = arma::mat(1, 1, arma::fill::value(std::log(cfg_.noise_variance)));
  }
}

std::string AepDgp::describe() const {
  const std::string w = widths_text(widths_);
  return fmt::format(
      "AEP DGP: depth {}, widths {}, M={} pseudo-points per GP, independent ARD SE kernels and "
      "pseudo-inputs per output, {} mean functions, moment-matching propagation, {}",
      cfg_.depth, w, initial_.at(gp_key(0, 0, "Z")).n_rows, cfg_.linear_mean ? "linear" : "zero",
      SvgpOutput(cfg_.num_classes).words());
}

AepDgp::Moments AepDgp::propagate(const VarMap& params, const arma::mat& X, double n_train,
                                  Var* energy_terms) const {
  if (energy_terms && !(n_train > 1.0)) {
    throw Error(fmt::format("AEP DGP: the energy needs N > 1 training points (got {})", n_train));
  }
  const double c = n_train > 0.0 ? (n_train - 1.0) / n_train : 1.0;
  ad::Tape& tape = get(params, gp_key(0, 0, "Z")).tape();
  Var mu = tape.constant(X), v;
  Var energy;
  for (size_t l = 0; l < cfg_.depth; ++l) {
    std::vector<Var> ms, vs;
    for (arma::uword d = 0; d < widths_[l + 1]; ++d) {
      Var e;
      const GpState g =
          gp_state(params, l, d, cfg_.jitter, c, n_train, energy_terms ? &e : nullptr);
      if (energy_terms) energy = energy.valid() ? ad::add(energy, e) : e;
      const arma::vec w = W_[l].is_empty() ? arma::vec() : arma::vec(W_[l].col(d));
      const auto [m, var] = gp_moments(g, mu, v, w);
      ms.push_back(m);
      vs.push_back(var);
    }
    mu = ms.size() == 1 ? ms[0] : ad::join_horiz(ms);
    v = vs.size() == 1 ? vs[0] : ad::join_horiz(vs);
  }
  if (energy_terms) *energy_terms = energy;
  return {mu, v};
}

ElboEstimate AepDgp::elbo(const VarMap& params, const arma::mat& X, const arma::vec& y,
                          double n_train, size_t /*samples*/, double kl_weight,
                          random::Stream& /*rng*/) const {
  if (X.n_rows != y.n_elem || X.n_rows == 0) {
    throw Error(fmt::format("AEP elbo: {} inputs and {} targets", X.n_rows, y.n_elem));
  }
  Var energy;
  const Moments f = propagate(params, X, n_train, &energy);
  ad::Tape& tape = f.mean.tape();
  const double B = double(y.n_elem);
  const Var kl = ad::scale(energy, -1.0 / n_train);
  if (cfg_.num_classes > 0) {
    const arma::uvec labels = likelihoods::class_labels(y, cfg_.num_classes);
    Var log_z;
    if (SvgpOutput(cfg_.num_classes).kind() == likelihoods::ClassLikelihood::Probit) {
      log_z =
          likelihoods::probit_log_z_sum(f.mean, positive_var(f.var), labels, likelihoods::Probit{});
    } else {
      likelihoods::RobustMax rm;
      rm.classes = cfg_.num_classes;
      log_z = likelihoods::robustmax_log_z_sum(f.mean, positive_var(f.var), labels, rm);
    }
    const Var ell = ad::scale(log_z, 1.0 / B);
    return elbo_estimate(ell, kl, kl_weight);
  }
  const Var s2 = ad::exp(get(params, kNoise));
  const Var tot = ad::add_each_row(f.var, s2);  // v_n + s2
  const Var resid = ad::sub(tape.constant(y), f.mean);
  // mean_n log N(y_n; m_n, v_n + s2)
  const Var logz =
      ad::scale(ad::add(ad::sum(ad::log(tot)), ad::sum(ad::div(ad::square(resid), tot))), -0.5);
  const Var ell = ad::add_scalar(ad::scale(logz, 1.0 / B), -0.5 * std::log(2.0 * M_PI));
  return elbo_estimate(ell, kl, kl_weight);
}

Predictive AepDgp::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                           random::Stream& /*rng*/, bool keep_hidden) const {
  const size_t S = std::max<size_t>(samples, 1);
  const arma::uword outs = widths_.back();
  Predictive p;
  p.classes = cfg_.num_classes;
  p.class_likelihood = SvgpOutput(cfg_.num_classes).kind();
  if (keep_hidden) p.hidden.assign(S, {});  // moments, not samples: no hidden draws to report
  p.mean.set_size(X.n_rows, S * outs);
  p.var.set_size(X.n_rows, S * outs);
  const arma::uword chunk = std::max<size_t>(cfg_.predict_chunk, 1);
  for (arma::uword r0 = 0; r0 < X.n_rows; r0 += chunk) {
    const arma::uword r1 = std::min<arma::uword>(X.n_rows, r0 + chunk) - 1;
    ad::Tape tape;
    const VarMap vars = to_vars(tape, params, false);
    const Moments f = propagate(vars, X.rows(r0, r1), 0.0, nullptr);
    // Classification: the latent Gaussians, no noise (eval turns them into probabilities).
    const arma::mat var = cfg_.num_classes > 0 ? positive_var(f.var).val()
                                               : f.var.val() + std::exp(get(vars, kNoise).scalar());
    p.mean.rows(r0, r1) = arma::repmat(f.mean.val(), 1, S);
    p.var.rows(r0, r1) = arma::repmat(var, 1, S);
    p.chol.merge(tape.chol_stats());
  }
  return p;
}

std::vector<RegistryEntry> aep_dgp_entries() {
  RegistryEntry e =
      svgp_output_entry("aep", "deep GP, approximate expectation propagation (Bui et al. 2016)");
  e.options = {{opt::kMeanFunction, {}, {}}};
  e.build = [](const ModelSpec& spec, const arma::mat& X_train, const arma::vec&,
               random::Stream& init) -> std::unique_ptr<Model> {
    AepConfig cfg;
    cfg.depth = spec.depth;
    cfg.num_inducing = spec.inducing;
    if (spec.width > 0) cfg.hidden_width = spec.width;  // else the report's 2
    cfg.num_classes = spec.classes;
    cfg.linear_mean = spec.options.choice(opt::kMeanFunction) == "linear";
    return std::make_unique<AepDgp>(cfg, X_train, init);
  };
  return {e};
}

}  // namespace dkp::models
