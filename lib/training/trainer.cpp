#include "training/trainer.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "autodiff/ops.hpp"
#include "training/adam.hpp"
#include "training/checkpoint.hpp"
#include "training/mc.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::training {

std::atomic<bool>& stop_requested() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {
extern "C" void on_signal(int) {
  stop_requested().store(true);
}
}  // namespace

void install_signal_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

TrainReport train(const models::Model& model, const arma::mat& X, const arma::vec& y,
                  const TrainOptions& opt, const random::Stream& run, const ProgressFn& progress) {
  if (X.n_rows != y.n_elem || X.n_rows == 0) {
    throw Error(fmt::format("train: {} inputs and {} targets", X.n_rows, y.n_elem));
  }
  if (opt.samples == 0) throw ConfigError("train: --samples must be positive");
  const size_t N = X.n_rows;
  const size_t B = (opt.batch == 0 || opt.batch >= N) ? N : opt.batch;
  const size_t batches_per_epoch = (N + B - 1) / B;

  TrainReport report;
  Checkpoint ck;
  ck.params = model.initial_parameters();
  if (!opt.checkpoint_path.empty() && std::filesystem::exists(opt.checkpoint_path)) {
    const std::string where = opt.checkpoint_path.string();
    ck = load_checkpoint(opt.checkpoint_path, model.initial_parameters());
    auto differs = [](const std::string& a, const std::string& b) {
      return !a.empty() && !b.empty() && a != b;
    };
    if (differs(ck.identity.config_hash, opt.identity.config_hash)) {
      throw DataError(fmt::format("{}: a checkpoint of configuration {}, not of this run's {}",
                                  where, ck.identity.config_hash, opt.identity.config_hash));
    }
    if (differs(ck.identity.data_sha256, opt.identity.data_sha256)) {
      throw DataError(fmt::format("{}: a checkpoint trained on other data (data {}, this run's {})",
                                  where, ck.identity.data_sha256, opt.identity.data_sha256));
    }
    if (ck.step > opt.steps) {
      throw DataError(fmt::format("{}: the checkpoint is at step {}, beyond this run's {} steps",
                                  where, ck.step, opt.steps));
    }
    report.resumed_from = ck.step;
    spdlog::info("resuming from checkpoint {} at step {}", where, ck.step);
  }
  // Every checkpoint this run writes carries its identity (a legacy one is upgraded by the next).
  ck.identity = opt.identity;
  Adam adam;
  if (ck.step > 0) adam.set_state(ck.adam);
  const auto held_parameters = model.held_parameters();
  for (const auto& [name, from] : held_parameters) {
    if (!ck.params.count(name))
      throw Error(fmt::format("train: the model holds '{}', which it does not have", name));
  }

  const bool tracing = opt.trace_every > 0 && !opt.trace_path.empty();
  std::vector<TraceRow> trace;
  if (tracing) {
    const bool have = std::filesystem::exists(opt.trace_path);
    if (ck.step > 0 && have) {
      trace = parse_trace_csv(util::read_file(opt.trace_path), opt.trace_path.string());
      std::erase_if(trace, [&](const TraceRow& r) { return r.step > ck.step; });
    } else if (ck.step > 0) {
      spdlog::warn("{} is missing: the trace lacks the steps before {}", opt.trace_path.string(),
                   ck.step);
    } else if (have) {
      std::filesystem::remove(opt.trace_path);  // another run's; this one starts afresh
    }
  }
  auto write_trace = [&] {
    if (tracing) util::write_file_atomic(opt.trace_path, trace_csv(trace));
  };

  auto save = [&](size_t step) {
    write_trace();  // first: its rows never lag the checkpoint it goes with
    if (opt.checkpoint_path.empty()) return;
    ck.step = step;
    ck.adam = adam.state();
    save_checkpoint(opt.checkpoint_path, ck);
  };

  const auto t0 = std::chrono::steady_clock::now();
  StepInfo info;
  info.first_step = ck.step;
  bool have_avg = false;
  arma::uvec order;
  size_t order_epoch = size_t(-1);
  for (size_t step = ck.step; step < opt.steps; ++step) {
    // Minibatch: epoch e is a fresh permutation; full batch uses the data as is.
    arma::mat Xb;
    arma::vec yb;
    if (B == N) {
      Xb = X;
      yb = y;
    } else {
      const size_t epoch = step / batches_per_epoch, k = step % batches_per_epoch;
      if (epoch != order_epoch) {
        random::Stream s = run.child("minibatch-order", epoch);
        order = random::permutation(s, N);
        order_epoch = epoch;
      }
      const arma::uvec idx = order.subvec(k * B, std::min(N, (k + 1) * B) - 1);
      Xb = X.rows(idx);
      yb = y.elem(idx);
    }
    random::Stream noise = run.child("mc-noise", step);
    const double klw = opt.kl.weight(step);
    ElboGradient e;
    try {
      e = elbo_gradient(model, ck.params, Xb, yb, double(N), opt.samples, klw, noise, opt.threads,
                        /*with_grad=*/true);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      // After an Adam step, a model that cannot be evaluated any more (a kernel variance that
      // underflowed to 0, a Cholesky factor of non-finite numbers) has left the region where it
      // is defined: a diverged step, the same failure as a non-finite ELBO, told the same way.
      if (step == 0) throw;
      save(step);
      throw Error(
          fmt::format("the ELBO could not be evaluated at step {} ({}); the parameters have "
                      "diverged, most likely because the learning rate is too large (lr {:g} "
                      "before this step). The last checkpoint holds the parameters before this "
                      "step. Try a lower learning rate (--lr, --lr-schedule) or check the data.",
                      step, err.what(), opt.lr.at(step - 1)));
    }
    const double elbo = e.elbo;
    report.chol.merge(e.chol);
    if (!std::isfinite(elbo)) {
      save(step);
      throw Error(
          fmt::format("non-finite ELBO at step {} (expected log-lik {}, KL {}); the last "
                      "checkpoint holds the parameters before this step. Try a lower "
                      "learning rate or check the data.",
                      step, e.expected_loglik, e.kl));
    }
    autodiff::ParamMap grads;
    for (const auto& [name, g0] : e.grad) {
      arma::mat g = -g0;  // minimise the negative ELBO
      if (!g.is_finite()) {
        save(step);
        throw Error(fmt::format(
            "non-finite gradient of parameter '{}' at step {}; the last checkpoint holds the "
            "parameters before this step. Try a lower learning rate or check the data.",
            name, step));
      }
      grads.emplace(name, std::move(g));
    }
    const double lr = opt.lr.at(step);
    std::set<std::string> held;
    for (const auto& [name, from] : held_parameters)
      if (step < from) held.insert(name);
    adam.step(ck.params, grads, lr, held);

    info.step = step + 1;
    info.elbo = elbo;
    info.elbo_avg = have_avg ? 0.99 * info.elbo_avg + 0.01 * elbo : elbo;
    have_avg = true;
    info.expected_loglik = e.expected_loglik;
    info.kl = e.kl;
    info.kl_weight = klw;
    info.lr = lr;
    info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (tracing && (info.step % opt.trace_every == 0 || info.step == opt.steps))
      trace.push_back({info.step, elbo, e.expected_loglik, e.kl, klw, lr});
    if (progress) progress(info, opt);
    if (opt.checkpoint_every > 0 && info.step % opt.checkpoint_every == 0 && info.step < opt.steps)
      save(info.step);
    if (stop_requested().load()) {
      save(info.step);
      throw Interrupted(fmt::format(
          "interrupted at step {}; checkpoint written to {}", info.step,
          opt.checkpoint_path.empty() ? std::string("(none)") : opt.checkpoint_path.string()));
    }
  }
  // The final parameters, so that a finished run can be evaluated again without training.
  if (ck.step < opt.steps)
    save(opt.steps);
  else
    write_trace();
  report.params = ck.params;
  report.steps = opt.steps;
  report.last = info;
  report.train_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t done = opt.steps - report.resumed_from;
  report.seconds_per_step = done > 0 ? report.train_seconds / double(done) : 0.0;
  return report;
}

}  // namespace dkp::training

namespace dkp::training {

double estimate_elbo(const models::Model& model, const autodiff::ParamMap& params,
                     const arma::mat& X, const arma::vec& y, size_t samples, random::Stream& rng,
                     size_t threads, size_t chunk, linalg::CholStats* chol) {
  const size_t N = X.n_rows;
  double ell = 0.0, kl = 0.0;
  size_t chunks = 0;
  for (size_t start = 0; start < N; start += chunk, ++chunks) {
    if (stop_requested().load()) {
      throw Interrupted("interrupted while estimating the ELBO (a signal arrived)");
    }
    const size_t end = std::min(N, start + chunk) - 1;
    // One thread draws the chunks one after another from rng; more threads split each chunk's
    // samples from that chunk's own child stream (mc.hpp).
    random::Stream chunk_rng = rng.child("elbo-chunk", chunks);
    random::Stream& s = threads > 1 ? chunk_rng : rng;
    const ElboGradient e = elbo_gradient(model, params, X.rows(start, end), y.subvec(start, end),
                                         double(N), samples, 1.0, s, threads, /*with_grad=*/false);
    ell += e.expected_loglik * double(end - start + 1) / double(N);
    kl += e.kl;
    if (chol) chol->merge(e.chol);
  }
  return ell - kl / double(chunks);
}

ElboRepeats estimate_elbo_repeated(const models::Model& model, const autodiff::ParamMap& params,
                                   const arma::mat& X, const arma::vec& y, size_t samples,
                                   size_t repeats, const random::Stream& parent,
                                   std::string_view purpose, size_t threads) {
  if (repeats == 0) throw ConfigError("estimate_elbo_repeated: needs at least one repeat");
  arma::vec e(repeats);
  ElboRepeats out;
  for (size_t r = 0; r < repeats; ++r) {
    random::Stream rng = parent.child(purpose, r);
    e[r] = estimate_elbo(model, params, X, y, samples, rng, threads, kElboChunk, &out.chol);
  }
  out.first = e[0];
  out.mean = arma::mean(e);
  out.se = repeats > 1 ? arma::stddev(e) / std::sqrt(double(repeats)) : 0.0;
  out.repeats = repeats;
  return out;
}

}  // namespace dkp::training
