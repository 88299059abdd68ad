#include "training/mc.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::training {

std::vector<size_t> sample_groups(size_t samples, size_t threads) {
  if (samples == 0) throw ConfigError("Monte Carlo evaluation needs at least one sample");
  if (threads == 0) throw ConfigError("--threads must be at least 1");
  const size_t n = std::min(samples, threads);
  std::vector<size_t> sizes(n, samples / n);
  for (size_t g = 0; g < samples % n; ++g) ++sizes[g];
  return sizes;
}

namespace {

// One group's estimate on its own tape; group_seconds is its wall time, the tape's release
// included.
ElboGradient one_group(const models::Model& model, const autodiff::ParamMap& params,
                       const arma::mat& X, const arma::vec& y, double n_train, size_t samples,
                       double kl_weight, random::Stream& noise, bool with_grad) {
  const auto t0 = std::chrono::steady_clock::now();
  ElboGradient out;
  {
    autodiff::Tape tape;
    const autodiff::VarMap vars = autodiff::to_vars(tape, params, with_grad);
    const models::ElboEstimate e = model.elbo(vars, X, y, n_train, samples, kl_weight, noise);
    out.elbo = e.elbo.scalar();
    out.expected_loglik = e.expected_loglik;
    out.kl = e.kl;
    if (with_grad && std::isfinite(out.elbo)) {
      tape.backward(e.elbo);
      for (const auto& [name, v] : vars) out.grad.emplace(name, v.grad());
    }
    out.chol = tape.chol_stats();
  }
  out.group_seconds = {
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  return out;
}

}  // namespace

ElboGradient elbo_gradient(const models::Model& model, const autodiff::ParamMap& params,
                           const arma::mat& X, const arma::vec& y, double n_train, size_t samples,
                           double kl_weight, random::Stream& noise, size_t threads,
                           bool with_grad) {
  const std::vector<size_t> sizes = sample_groups(samples, threads);
  // A deterministic ELBO (the SGP's, the AEP DGP's) would be computed whole by every group.
  if (sizes.size() == 1 || model.deterministic_elbo())
    return one_group(model, params, X, y, n_train, samples, kl_weight, noise, with_grad);
  std::vector<ElboGradient> parts(sizes.size());
  parallel_for(sizes.size(), [&](size_t g) {
    random::Stream s = noise.child("sample-group", g);
    parts[g] = one_group(model, params, X, y, n_train, sizes[g], kl_weight, s, with_grad);
  });
  ElboGradient out;
  for (size_t g = 0; g < parts.size(); ++g) {
    const double w = double(sizes[g]) / double(samples);
    out.elbo += w * parts[g].elbo;
    out.expected_loglik += w * parts[g].expected_loglik;
    out.kl += w * parts[g].kl;
    out.chol.merge(parts[g].chol);
    out.group_seconds.push_back(parts[g].group_seconds.at(0));
    if (parts[g].grad.empty()) continue;  // non-finite ELBO: the caller stops on it
    for (auto& [name, gr] : parts[g].grad) {
      auto it = out.grad.find(name);
      if (it == out.grad.end())
        out.grad.emplace(name, w * gr);
      else
        it->second += w * gr;
    }
  }
  if (!std::isfinite(out.elbo)) out.grad.clear();
  // Each group's gradients go back on the thread that made them (the pool runs group g on the
  // same thread every call). Freed on this thread instead, they would pile up in its allocation
  // cache (platform/arma_alloc.hpp) step after step while the workers take fresh memory for theirs:
  // boston's depth-5 GI-DGP with two threads grew from 149 to 289 MB between 50 and 400 steps.
  parallel_for(parts.size(), [&](size_t g) { parts[g] = ElboGradient(); });
  return out;
}

models::Predictive predict(const models::Model& model, const autodiff::ParamMap& params,
                           const arma::mat& X, size_t samples, random::Stream& rng, size_t threads,
                           bool keep_hidden) {
  const std::vector<size_t> sizes = sample_groups(samples, threads);
  if (sizes.size() == 1) return model.predict(params, X, samples, rng, keep_hidden);
  std::vector<models::Predictive> parts(sizes.size());
  parallel_for(sizes.size(), [&](size_t g) {
    random::Stream s = rng.child("sample-group", g);
    parts[g] = model.predict(params, X, sizes[g], s, keep_hidden);
  });
  models::Predictive out;
  out.classes = parts[0].classes;
  out.class_likelihood = parts[0].class_likelihood;
  const size_t outs =  // columns per sample
      std::max<size_t>(likelihoods::latent_columns(out.classes, out.class_likelihood), 1);
  out.mean.set_size(X.n_rows, samples * outs);
  out.var.set_size(X.n_rows, samples * outs);
  size_t col = 0;
  for (size_t g = 0; g < parts.size(); ++g) {
    const size_t cols = sizes[g] * outs;
    if (parts[g].mean.n_rows != X.n_rows || parts[g].mean.n_cols != cols ||
        parts[g].var.n_rows != X.n_rows || parts[g].var.n_cols != cols ||
        parts[g].classes != out.classes) {
      throw Error(fmt::format(
          "predict: group {} returned {}x{} means ({} classes) for {} points x {} samples", g,
          parts[g].mean.n_rows, parts[g].mean.n_cols, parts[g].classes, X.n_rows, sizes[g]));
    }
    out.mean.cols(col, col + cols - 1) = parts[g].mean;
    out.var.cols(col, col + cols - 1) = parts[g].var;
    out.chol.merge(parts[g].chol);
    for (auto& h : parts[g].hidden) out.hidden.push_back(std::move(h));
    out.hidden_kind = parts[g].hidden_kind;
    col += cols;
  }
  return out;
}

}  // namespace dkp::training
