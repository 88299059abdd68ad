#include "models/cdgp.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/ops_linalg.hpp"
#include "autodiff/ops_shape.hpp"
#include "autodiff/ops_special.hpp"
#include "models/options.hpp"
#include "util/error.hpp"

namespace dkp::models {

namespace ad = dkp::autodiff;
using autodiff::Var;

namespace {

constexpr double kLog2Pi = 1.8378770664093454836;

struct Kernel {
  Var alpha, gamma, omega;  // omega valid only for the periodic kernel
};

// a 1^T - 1 b^T for column vectors a (n) and b (m): n x m.
Var differences(const Var& a, const Var& b) {
  return ad::add_each_row(ad::repmat(a, 1, b.n_rows()), ad::neg(ad::transpose(b)));
}

Var kmat(const Kernel& k, const Var& a, const Var& b) {
  const Var d = differences(a, b);
  const Var e = k.omega.valid()
                    ? ad::mul(ad::scale(k.gamma, -2.0), ad::square(ad::sin(ad::mul(k.omega, d))))
                    : ad::mul(ad::scale(k.gamma, -0.5), ad::square(d));
  return ad::mul(k.alpha, ad::exp(e));
}

// Layer l's kernel parameters (positive: exp of the stored logs).
Kernel layer_kernel(const VarMap& p, size_t l, bool periodic) {
  return {ad::exp(get(p, layer_key(l, "log_alpha"))), ad::exp(get(p, layer_key(l, "log_gamma"))),
          periodic ? ad::exp(get(p, layer_key(l, "log_omega"))) : Var()};
}

Var eye(ad::Tape& tape, arma::uword n, double c) {
  return tape.constant(c * arma::eye(n, n));
}

// KL(N(m, S S^T) || N(mu, L L^T)) for lower-triangular S (diagonal of any sign) and the prior's
// Cholesky factor L.
Var gaussian_kl(const Var& m, const Var& S, const Var& mu, const Var& L) {
  const Var B = ad::solve_lower(L, S);
  const Var r = ad::solve_lower(L, m - mu);
  const Var logdet_s = ad::sum(ad::log(ad::square(ad::diag(S))));
  const Var twice = ad::sum(ad::square(B)) + ad::sum(ad::square(r)) + ad::logdet_chol(L) - logdet_s;
  return ad::add_scalar(ad::scale(twice, 0.5), -0.5 * double(m.n_rows()));
}

// KL(q(u_l) || N(mu, Lp Lp^T)) of a per-layer posterior ("layer{l}.m", "layer{l}.S").
Var layer_kl(const VarMap& p, size_t l, const Var& mu, const Var& Lp) {
  return gaussian_kl(get(p, layer_key(l, "m")), ad::tril(get(p, layer_key(l, "S"))), mu, Lp);
}

// One draw of a layer's outputs at the points F (N x 1), jointly over the points, given the
// inducing inputs Zl (M x 1) and either sampled inducing outputs u (S_sqrt invalid) or
// q(u) = N(u, S_sqrt S_sqrt^T) integrated out. identity_mean: mu(a) = a, else 0.
Var conditional_draw(const Kernel& k, bool identity_mean, const Var& F, const Var& Zl, const Var& u,
                     const Var& S_sqrt, double jitter, random::Stream& rng) {
  ad::Tape& tape = F.tape();
  const arma::uword M = Zl.n_rows(), N = F.n_rows();
  const Var L = ad::cholesky(kmat(k, Zl, Zl) + eye(tape, M, jitter), "cdgp K_zz");
  const Var A = ad::solve_lower(L, kmat(k, Zl, F));  // M x N
  const Var resid = identity_mean ? u - Zl : u;
  Var mean = ad::matmul(A, ad::solve_lower(L, resid), true, false);
  if (identity_mean) mean = mean + F;
  Var cov = kmat(k, F, F) - ad::matmul(A, A, true, false);
  if (S_sqrt.valid()) {
    const Var C = ad::matmul(A, ad::solve_lower(L, S_sqrt), true, false);  // N x M
    cov = cov + ad::matmul(C, C, false, true);
  }
  const Var Lc = ad::cholesky(cov + eye(tape, N, jitter), "cdgp conditional covariance");
  return mean + ad::matmul(Lc, tape.constant(random::normal_matrix(rng, N, 1)));
}

}  // namespace

bool is_cdgp_posterior(const std::string& name) {
  const auto& names = cdgp_posteriors();
  return std::find(names.begin(), names.end(), name) != names.end();
}

const std::vector<std::string>& cdgp_posteriors() {
  static const std::vector<std::string> names = {"dsvi", "jointly-gaussian", "inducing-locations"};
  return names;
}

CompositionalDgp::CompositionalDgp(const CdgpConfig& cfg, random::Stream& init) : cfg_(cfg) {
  if (!is_cdgp_posterior(cfg.posterior)) {
    throw ConfigError(fmt::format(
        "compositional DGP: unknown posterior '{}' (dsvi, jointly-gaussian or inducing-locations)",
        cfg.posterior));
  }
  if (cfg.depth < 1 || cfg.inducing < 1 || !(cfg.noise_std > 0.0) || !(cfg.jitter >= 0.0) ||
      !(cfg.beta > 0.0)) {
    throw ConfigError(fmt::format(
        "compositional DGP: depth {}, {} inducing points, noise sd {}, jitter {}, beta {} (need "
        "depth, M >= 1 and positive noise sd and beta)",
        cfg.depth, cfg.inducing, cfg.noise_std, cfg.jitter, cfg.beta));
  }
  const size_t L = cfg.depth, M = cfg.inducing;
  const arma::vec grid = M == 1 ? arma::vec{0.0} : arma::vec(arma::linspace(-1.0, 1.0, M));
  for (size_t l = 1; l <= L; ++l) {
    initial_[layer_key(l, "log_alpha")] = arma::zeros(1, 1);
    initial_[layer_key(l, "log_gamma")] = arma::zeros(1, 1);
    if (l == L && cfg.last_periodic) initial_[layer_key(l, "log_omega")] = arma::zeros(1, 1);
  }
  // mu_l at the grid: the grid itself for the inner layers, zero for the last.
  auto mean_at = [&](size_t l) -> arma::vec {
    return l < L ? grid : arma::vec(M, arma::fill::zeros);
  };
  if (cfg.posterior == "dsvi") {
    for (size_t l = 1; l <= L; ++l) {
      initial_[layer_key(l, "Z")] = grid;
      initial_[layer_key(l, "m")] = mean_at(l);
      initial_[layer_key(l, "S")] = 1e-2 * arma::eye(M, M);
    }
  } else if (cfg.posterior == "jointly-gaussian") {
    arma::vec m(L * M);
    for (size_t l = 1; l <= L; ++l) {
      initial_[layer_key(l, "Z")] = grid;
      m.subvec((l - 1) * M, l * M - 1) = mean_at(l);
    }
    initial_["q.m"] = m;
    initial_["q.S"] = 1e-2 * arma::eye(L * M, L * M);
    if (cfg.mf_until > 0) initial_["q.S_cross"] = arma::zeros(L * M, L * M);
  } else {
    initial_["Z0"] = grid;
    for (size_t l = 1; l <= L; ++l) {
      initial_[layer_key(l, "m")] = mean_at(l) + 1e-2 * random::normal_matrix(init, M, 1);
      initial_[layer_key(l, "S")] = 1e-3 * arma::eye(M, M);
    }
  }
}

std::string CompositionalDgp::describe() const {
  static const char* what[] = {"mean-field q(u_l) per layer (DSVI)",
                               "jointly Gaussian inducing outputs across layers",
                               "inducing points as inducing locations"};
  size_t i = 0;
  while (cdgp_posteriors()[i] != cfg_.posterior) ++i;
  return fmt::format(
      "compositional-uncertainty DGP: {} one-dimensional layers, {}{}, {} inducing points, last "
      "kernel {}, fixed noise sd {}",
      cfg_.depth, what[i],
      cfg_.posterior == "jointly-gaussian" && cfg_.analytic ? " (integrated out analytically)" : "",
      cfg_.inducing, cfg_.last_periodic ? "periodic" : "SE", cfg_.noise_std);
}

CompositionalDgp::SampleOut CompositionalDgp::sample(const VarMap& p, const Var& X,
                                                     random::Stream& rng, bool own,
                                                     bool with_kl) const {
  if (cfg_.posterior == "jointly-gaussian" && cfg_.analytic) {
    return sample_analytic(p, X, rng, own);
  }
  const size_t L = cfg_.depth, M = cfg_.inducing;
  ad::Tape& tape = X.tape();
  SampleOut out;
  // The inducing outputs of this sample ("jointly-gaussian": all layers at once;
  // "inducing-locations": per layer).
  std::vector<Var> u(L + 1);
  if (cfg_.posterior == "jointly-gaussian") {
    const Var S = joint_factor(p);
    const Var all =
        get(p, "q.m") + ad::matmul(S, tape.constant(random::normal_matrix(rng, L * M, 1)));
    for (size_t l = 1; l <= L; ++l) u[l] = ad::rows(all, (l - 1) * M, l * M - 1);
  } else if (cfg_.posterior == "inducing-locations") {
    u[0] = get(p, "Z0");
    for (size_t l = 1; l <= L; ++l) {
      const Var S = ad::tril(get(p, layer_key(l, "S")));
      u[l] = get(p, layer_key(l, "m")) +
             ad::matmul(S, tape.constant(random::normal_matrix(rng, M, 1)));
    }
    // Only the ELBO needs this sample's KL (prediction draws the same numbers without it).
    if (with_kl) {
      Var kl = tape.constant(0.0);
      for (size_t l = 1; l <= L; ++l) {
        const Kernel k = layer_kernel(p, l, l == L && cfg_.last_periodic);
        const Var Lp =
            ad::cholesky(kmat(k, u[l - 1], u[l - 1]) + eye(tape, M, 1.0 / cfg_.beta + cfg_.jitter),
                         "cdgp prior p(f_l^z | f_(l-1)^z)");
        const Var mu = l < L ? u[l - 1] : tape.constant(arma::zeros(M, 1));
        kl = kl + layer_kl(p, l, mu, Lp);
      }
      out.kl = kl;
    }
  }
  Var F = X;
  for (size_t l = 1; l <= L; ++l) {
    const Kernel k = layer_kernel(p, l, l == L && cfg_.last_periodic);
    const bool identity = l < L;
    Var Zl, ul, S;
    if (cfg_.posterior == "dsvi") {
      Zl = get(p, layer_key(l, "Z"));
      ul = get(p, layer_key(l, "m"));
      S = ad::tril(get(p, layer_key(l, "S")));
    } else if (cfg_.posterior == "jointly-gaussian") {
      Zl = get(p, layer_key(l, "Z"));
      ul = u[l];
    } else {
      Zl = u[l - 1];
      ul = u[l];
    }
    F = conditional_draw(k, identity, F, Zl, ul, S, cfg_.jitter, rng);
    out.f.push_back(F);
    if (own) out.own.push_back(conditional_draw(k, identity, X, Zl, ul, S, cfg_.jitter, rng));
  }
  return out;
}

// The paper's eqs. 15-17 with the full cross-layer covariance. With u = m + S e (S the joint
// factor, r = L M columns), the layers drawn so far leave u ~ N(m + S w, S P S^T): w = 0 and P =
// I before layer 1. Layer l's f_l is then Gaussian given f_(l-1), with u_l's block S_l = S's rows
// of layer l integrated out:
//   mean  mu_l(f_(l-1)) + alpha^T (m_l + S_l w - mu_l(z_l)),
//   cov   k(f, f) - alpha^T K_zz alpha + E P E^T,   E = alpha^T S_l   (alpha = K_zz^-1 k(z, f)),
// drawn as f_l = mean + Lc eps with Lc Lc^T = cov. Conditioning u on that draw (a linear-Gaussian
// observation of u, innovation covariance cov): with V = Lc^-1 E,
//   w <- w + P V^T eps,   P <- P - P V^T V P.
// Two layers give the paper's eqs. 31-34: E[u_2 | f_1] = m_2 + S_21 D^T eps and Cov[u_2 | f_1] =
// S_21 (I - D^T D) S_21^T + S_22 S_22^T with D = Lc^-1 alpha^T S_11.
CompositionalDgp::SampleOut CompositionalDgp::sample_analytic(const VarMap& p, const Var& X,
                                                              random::Stream& rng, bool own) const {
  const size_t L = cfg_.depth, M = cfg_.inducing;
  ad::Tape& tape = X.tape();
  const Var S = joint_factor(p), m = get(p, "q.m");
  Var w, P;  // invalid before layer 1: w = 0, P = I
  SampleOut out;
  Var F = X;
  for (size_t l = 1; l <= L; ++l) {
    const Kernel k = layer_kernel(p, l, l == L && cfg_.last_periodic);
    const bool identity = l < L;
    const Var Zl = get(p, layer_key(l, "Z"));
    const Var Sl = ad::rows(S, (l - 1) * M, l * M - 1);  // M x r
    Var mu_u = ad::rows(m, (l - 1) * M, l * M - 1);
    if (w.valid()) mu_u = mu_u + ad::matmul(Sl, w);
    const Var resid = identity ? mu_u - Zl : mu_u;
    const Var Lz = ad::cholesky(kmat(k, Zl, Zl) + eye(tape, M, cfg_.jitter), "cdgp K_zz");
    const Var Lz_resid = ad::solve_lower(Lz, resid), Lz_S = ad::solve_lower(Lz, Sl);
    // The layer's Gaussian at the points G (its input): the mean, and the covariance's factor.
    auto moments = [&](const Var& G, Var& mean, Var& E) {
      const Var A = ad::solve_lower(Lz, kmat(k, Zl, G));  // M x N
      mean = ad::matmul(A, Lz_resid, true, false);
      if (identity) mean = mean + G;
      E = ad::matmul(A, Lz_S, true, false);  // alpha^T S_l, N x r
      const Var EP = P.valid() ? ad::matmul(E, P) : E;
      const Var cov =
          kmat(k, G, G) - ad::matmul(A, A, true, false) + ad::matmul(EP, E, false, true);
      return ad::cholesky(cov + eye(tape, G.n_rows(), cfg_.jitter), "cdgp conditional covariance");
    };
    Var mean, E;
    const Var Lc = moments(F, mean, E);
    const Var eps = tape.constant(random::normal_matrix(rng, F.n_rows(), 1));
    const Var f = mean + ad::matmul(Lc, eps);
    if (own) {
      Var own_mean, own_E;
      const Var own_Lc = moments(X, own_mean, own_E);
      out.own.push_back(
          own_mean + ad::matmul(own_Lc, tape.constant(random::normal_matrix(rng, X.n_rows(), 1))));
    }
    if (l < L) {                             // condition u on this layer's draw
      const Var V = ad::solve_lower(Lc, E);  // N x r
      const Var PVt = P.valid() ? ad::matmul(P, V, false, true) : ad::transpose(V);  // r x N
      const Var dw = ad::matmul(PVt, eps);
      w = w.valid() ? w + dw : dw;
      const Var shrink = ad::matmul(PVt, PVt, false, true);  // P V^T V P
      P = P.valid() ? P - shrink : eye(tape, S.n_cols(), 1.0) - shrink;
    }
    out.f.push_back(f);
    F = f;
  }
  return out;
}

Var CompositionalDgp::kl_shared(const VarMap& p) const {
  const size_t L = cfg_.depth, M = cfg_.inducing;
  ad::Tape& tape = get(p, layer_key(1, "log_alpha")).tape();
  auto prior = [&](size_t l, Var& Lp, Var& mu) {
    const Kernel k = layer_kernel(p, l, l == L && cfg_.last_periodic);
    const Var Z = get(p, layer_key(l, "Z"));
    Lp = ad::cholesky(kmat(k, Z, Z) + eye(tape, M, cfg_.jitter), "cdgp prior K_zz");
    mu = l < L ? Z : tape.constant(arma::zeros(M, 1));
  };
  if (cfg_.posterior == "dsvi") {
    Var kl = tape.constant(0.0);
    for (size_t l = 1; l <= L; ++l) {
      Var Lp, mu;
      prior(l, Lp, mu);
      kl = kl + layer_kl(p, l, mu, Lp);
    }
    return kl;
  }
  // "jointly-gaussian": KL(N(m, S S^T) || block-diag prior), the blocks' terms summed:
  // tr(P^-1 S S^T) = sum_l ||L_l^-1 S_(rows l)||^2, and so on.
  const Var S = joint_factor(p), m = get(p, "q.m");
  Var twice = ad::neg(ad::sum(ad::log(ad::square(ad::diag(S)))));
  for (size_t l = 1; l <= L; ++l) {
    Var Lp, mu;
    prior(l, Lp, mu);
    const Var Sl = ad::rows(S, (l - 1) * M, l * M - 1), ml = ad::rows(m, (l - 1) * M, l * M - 1);
    twice = twice + ad::sum(ad::square(ad::solve_lower(Lp, Sl))) +
            ad::sum(ad::square(ad::solve_lower(Lp, ml - mu))) + ad::logdet_chol(Lp);
  }
  return ad::add_scalar(ad::scale(twice, 0.5), -0.5 * double(L * M));
}

Var CompositionalDgp::joint_factor(const VarMap& p) const {
  if (cfg_.mf_until == 0) return ad::tril(get(p, "q.S"));
  const size_t L = cfg_.depth, M = cfg_.inducing;
  arma::mat own(L * M, L * M, arma::fill::zeros);
  for (size_t l = 0; l < L; ++l) own.submat(l * M, l * M, (l + 1) * M - 1, (l + 1) * M - 1).ones();
  ad::Tape& tape = get(p, "q.S").tape();
  return ad::tril(ad::mul(get(p, "q.S"), tape.constant(own)) +
                  ad::mul(get(p, "q.S_cross"), tape.constant(1.0 - own)));
}

std::vector<std::pair<std::string, size_t>> CompositionalDgp::held_parameters() const {
  if (cfg_.posterior != "jointly-gaussian" || cfg_.mf_until == 0) return {};
  return {{"q.S_cross", cfg_.mf_until}};
}

ElboEstimate CompositionalDgp::elbo(const VarMap& p, const arma::mat& X, const arma::vec& y,
                                    double n_train, size_t samples, double kl_weight,
                                    random::Stream& rng) const {
  if (X.n_cols != 1 || X.n_rows != y.n_elem) {
    throw Error(fmt::format("compositional DGP: inputs {}x{} and {} targets (need N x 1 and N)",
                            X.n_rows, X.n_cols, y.n_elem));
  }
  ad::Tape& tape = get(p, layer_key(1, "log_alpha")).tape();
  const Var Xv = tape.constant(X), yv = tape.constant(y);
  const double s2 = cfg_.noise_std * cfg_.noise_std, B = double(X.n_rows);
  const double log_norm = -0.5 * B * (kLog2Pi + std::log(s2));
  Var ell_total = tape.constant(0.0), logpq_total = tape.constant(0.0);
  const Var shared_kl = cfg_.posterior == "inducing-locations" ? Var() : kl_shared(p);
  for (size_t s = 0; s < samples; ++s) {
    const SampleOut o = sample(p, Xv, rng, false, true);
    ell_total =
        ell_total +
        ad::add_scalar(ad::scale(ad::sum(ad::square(yv - o.f.back())), -0.5 / s2), log_norm);
    logpq_total = logpq_total - (o.kl.valid() ? o.kl : shared_kl);
  }
  return assemble_elbo(ell_total, logpq_total, double(samples), B, n_train, kl_weight);
}

Predictive CompositionalDgp::predict(const ParamMap& params, const arma::mat& X, size_t samples,
                                     random::Stream& rng, bool keep_hidden) const {
  if (X.n_cols != 1) {
    throw Error(fmt::format("compositional DGP: inputs {}x{} (need N x 1)", X.n_rows, X.n_cols));
  }
  Predictive pred;
  pred.mean.set_size(X.n_rows, samples);
  pred.var.set_size(X.n_rows, samples);
  pred.var.fill(cfg_.noise_std * cfg_.noise_std);
  if (keep_hidden) {
    pred.hidden.assign(samples, {});
    pred.hidden_kind = cfg_.depth > 1 ? HiddenKind::Features : HiddenKind::None;
  }
  for (size_t s = 0; s < samples; ++s) {
    ad::Tape tape;
    const VarMap p = to_vars(tape, params, false);
    const SampleOut o = sample(p, tape.constant(X), rng, false, false);
    pred.mean.col(s) = o.f.back().val();
    if (keep_hidden)
      for (size_t l = 0; l + 1 < o.f.size(); ++l) pred.hidden[s].push_back(o.f[l].val());
    pred.chol.merge(tape.chol_stats());
  }
  return pred;
}

std::vector<arma::mat> CompositionalDgp::layer_functions(const ParamMap& params, const arma::mat& X,
                                                         size_t samples,
                                                         random::Stream& rng) const {
  if (X.n_cols != 1) {
    throw Error(fmt::format("compositional DGP: inputs {}x{} (need N x 1)", X.n_rows, X.n_cols));
  }
  std::vector<arma::mat> out(cfg_.depth, arma::mat(X.n_rows, samples));
  for (size_t s = 0; s < samples; ++s) {
    ad::Tape tape;
    const VarMap p = to_vars(tape, params, false);
    const SampleOut o = sample(p, tape.constant(X), rng, true, false);
    for (size_t l = 0; l < cfg_.depth; ++l) out[l].col(s) = o.own[l].val();
  }
  return out;
}

std::vector<std::pair<std::string, double>> CompositionalDgp::posterior_summaries(
    const ParamMap& params, random::Stream& rng) const {
  const arma::mat x0(1, 1, arma::fill::zeros);
  std::vector<std::pair<std::string, double>> out;
  const auto f = layer_functions(params, x0, kSummarySamples, rng);
  for (size_t l = 0; l < f.size(); ++l)
    out.emplace_back(fmt::format("var_f{}_at_0", l + 1), arma::var(arma::vectorise(f[l])));
  return out;
}

std::vector<RegistryEntry> cdgp_entries() {
  std::vector<RegistryEntry> entries;
  for (const auto& post : cdgp_posteriors()) {
    RegistryEntry e = make_entry(
        post,
        "compositional deep GP, one-dimensional layers (Ustyuzhaninov et al. 2020), " +
            std::string(post == "dsvi"               ? "mean-field posterior"
                        : post == "jointly-gaussian" ? "jointly Gaussian inducing outputs"
                                                     : "inducing points as inducing locations"));
    e.default_posterior = post == "dsvi";
    if (post == "dsvi") e.aliases = {"mean-field"};
    e.kernels = {"periodic", "se"};
    if (post == "jointly-gaussian")
      e.options = {{opt::kMfUntil, {}, {}}, {opt::kMarginalise, {}, {}}};
    e.build = [post](const ModelSpec& spec, const arma::mat& X_train, const arma::vec&,
                     random::Stream& init) -> std::unique_ptr<Model> {
      if (X_train.n_cols != 1) {
        throw ConfigError(fmt::format("cdgp: one input feature only (got {})", X_train.n_cols));
      }
      CdgpConfig cfg;
      cfg.posterior = post;
      cfg.depth = spec.depth;
      cfg.inducing = spec.inducing;
      cfg.last_periodic = spec.kernel == "periodic";
      if (post == "jointly-gaussian") {
        cfg.mf_until = spec.options.steps(opt::kMfUntil);
        cfg.analytic = spec.options.choice(opt::kMarginalise) == "analytic";
      }
      return std::make_unique<CompositionalDgp>(cfg, init);
    };
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace dkp::models
