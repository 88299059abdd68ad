#include "training/mc.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

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

// Worker threads kept from one parallel_for to the next (a training step calls it once per step):
// their per-thread allocation caches (util/arma_alloc.hpp) then last across steps, and no
// thread is created per step. One call at a time uses the pool; a call made while it is busy (a
// parallel_for inside a group, or from another thread) runs on fresh threads instead.
class WorkerPool {
 public:
  static WorkerPool& instance() {
    static WorkerPool pool;
    return pool;
  }

  // Runs f(1), ..., f(n - 1) on the workers and f(0) on the caller and returns true when all are
  // done; returns false at once when the pool is busy. f must not throw.
  bool try_run(size_t n, const std::function<void(size_t)>& f) {
    std::unique_lock<std::mutex> serial(run_mutex_, std::try_to_lock);
    if (!serial.owns_lock()) return false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (threads_.size() + 1 < n) {
      const size_t index = threads_.size() + 1;
      threads_.emplace_back([this, index] { work(index); });
    }
    job_ = &f;
    jobs_ = n;
    pending_ = n - 1;
    ++generation_;
    lock.unlock();
    start_.notify_all();
    f(0);
    lock.lock();
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  WorkerPool() = default;

  void work(size_t index) {
    size_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (index >= jobs_) continue;
      const std::function<void(size_t)>* job = job_;
      lock.unlock();
      (*job)(index);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex run_mutex_, mutex_;
  std::condition_variable start_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t jobs_ = 0, pending_ = 0, generation_ = 0;
  bool stop_ = false;
};

}  // namespace

void parallel_for(size_t n, const std::function<void(size_t)>& f) {
  std::vector<std::exception_ptr> errors(n);
  auto run = [&](size_t g) {
    try {
      f(g);
    } catch (...) {
      errors[g] = std::current_exception();
    }
  };
  if (n <= 1 || !WorkerPool::instance().try_run(n, run)) {
    std::vector<std::thread> workers;
    workers.reserve(n > 0 ? n - 1 : 0);
    for (size_t g = 1; g < n; ++g) workers.emplace_back(run, g);
    if (n > 0) run(0);
    for (std::thread& t : workers) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

namespace {

ElboGradient one_group(const models::Model& model, const models::ParamMap& params,
                       const arma::mat& X, const arma::vec& y, double n_train, size_t samples,
                       double kl_weight, random::Stream& noise, bool with_grad) {
  autodiff::Tape tape;
  const models::VarMap vars = models::to_vars(tape, params, with_grad);
  const models::ElboEstimate e = model.elbo(vars, X, y, n_train, samples, kl_weight, noise);
  ElboGradient out;
  out.elbo = e.elbo.scalar();
  out.expected_loglik = e.expected_loglik;
  out.kl = e.kl;
  if (with_grad && std::isfinite(out.elbo)) {
    tape.backward(e.elbo);
    for (const auto& [name, v] : vars) out.grad.emplace(name, v.grad());
  }
  out.chol = tape.chol_stats();
  return out;
}

}  // namespace

ElboGradient elbo_gradient(const models::Model& model, const models::ParamMap& params,
                           const arma::mat& X, const arma::vec& y, double n_train, size_t samples,
                           double kl_weight, random::Stream& noise, size_t threads,
                           bool with_grad) {
  const std::vector<size_t> sizes = sample_groups(samples, threads);
  if (sizes.size() == 1)
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
  return out;
}

models::Predictive predict(const models::Model& model, const models::ParamMap& params,
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
  const size_t outs = std::max<size_t>(out.classes, 1);  // columns per sample
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
