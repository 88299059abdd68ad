// One run end to end (run.hpp).
#include "experiments/run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "data/datasets.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "eval/metrics.hpp"
#include "experiments/memory_guard.hpp"
#include "experiments/run_setup.hpp"
#include "experiments/store_index.hpp"
#include "likelihoods/robustmax.hpp"
#include "linalg/chol.hpp"
#include "models/factory.hpp"
#include "platform/blas_threads.hpp"
#include "platform/cpu.hpp"
#include "platform/dir_lock.hpp"
#include "platform/memory.hpp"
#include "platform/process.hpp"
#include "training/mc.hpp"
#include "training/param_summary.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/version.hpp"

namespace dkp::experiments {

namespace {

namespace fs = std::filesystem;

// A JSON file of the run directory read strictly: DataError naming the file (and, for a parse
// error, the line and column) and the remedy when it is damaged, or when its config_hash or
// data_sha256 is not a string.
util::JsonValue read_json(const fs::path& path, std::string_view remedy) {
  try {
    util::JsonValue n = util::read_json_object(path);
    for (const char* key : {"config_hash", "data_sha256"}) util::json_string(n, key, path.string());
    return n;
  } catch (const DataError& e) {
    throw DataError(fmt::format("{}; {}", e.what(), remedy));
  }
}

// The same, leniently: an empty value when the file is missing or unreadable.
util::JsonValue read_json_lenient(const fs::path& path) {
  try {
    if (fs::exists(path)) return util::read_json_object(path);
  } catch (const Error&) {
  }
  return {};
}

// A string value of a JSON object ("" when absent or not a string).
std::string json_string(const util::JsonValue& n, const char* key) {
  const auto it = n.find(key);
  return it != n.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Cholesky factorisations and their jitter events of one phase, as result.json records them.
util::Json chol_json(const linalg::CholStats& c) {
  util::Json j = util::Json::object();
  j.set("factorisations", (unsigned long long)c.factorisations)
      .set("jittered", (unsigned long long)c.jittered)
      .set("retries", (unsigned long long)c.retries)
      .set("max_jitter_rel", c.max_jitter_rel);
  return j;
}

// What the binary that runs now records of itself in manifest.json and result.json besides its
// git_sha: whether its work tree was modified (null when unknown) and, when it was, the SHA-256 of
// the changes (util/version.hpp).
void set_tree(util::Json& j) {
  const TreeState t = tree_state();
  j.set("tree_modified",
        t == TreeState::unknown ? util::Json(nullptr) : util::Json(t == TreeState::modified));
  if (t == TreeState::modified) j.set("tree_diff_sha256", tree_diff_sha256());
}

// The binaries of the processes that trained a run before this one resumed it from a checkpoint at
// `step`, for manifest.json's "trained_before_by" (the manifest is rewritten by every process, so
// without it the earlier ones would be forgotten): those the earlier manifest lists, then the
// earlier manifest's own binary, each {git_sha, tree_modified, tree_diff_sha256 when known,
// to_step}; consecutive entries of one binary are one. Nothing when every entry is this binary.
std::optional<util::Json> trained_before_by(const util::JsonValue& old_manifest, uint64_t step) {
  util::JsonValue entries = util::JsonValue::array();
  if (const auto it = old_manifest.find("trained_before_by");
      it != old_manifest.end() && it->is_array()) {
    for (const auto& e : *it)
      if (e.is_object()) entries.push_back(e);
  }
  util::JsonValue self = util::JsonValue::object();
  const std::string sha = json_string(old_manifest, "git_sha");
  self["git_sha"] = sha.empty() ? "unknown" : sha;
  for (const char* key : {"tree_modified", "tree_diff_sha256"}) {
    if (const auto it = old_manifest.find(key); it != old_manifest.end()) self[key] = *it;
  }
  self["to_step"] = step;
  auto same = [](const util::JsonValue& a, const util::JsonValue& b) {
    return json_string(a, "git_sha") == json_string(b, "git_sha") &&
           json_string(a, "tree_diff_sha256") == json_string(b, "tree_diff_sha256");
  };
  if (!entries.empty() && same(entries.back(), self)) entries.erase(entries.size() - 1);
  entries.push_back(std::move(self));
  util::JsonValue now = util::JsonValue::object();
  now["git_sha"] = git_sha();
  now["tree_diff_sha256"] = tree_diff_sha256();
  bool all_this = true;
  for (const auto& e : entries) all_this = all_this && same(e, now);
  if (all_this) return std::nullopt;
  return util::Json(std::move(entries));
}

RunOutcome interrupted_outcome(std::string message) {
  RunOutcome o;
  o.status = RunStatus::interrupted;
  o.message = std::move(message);
  return o;
}

}  // namespace

RunOutcome run_cell(const RunSpec& spec, const RunOptions& options) {
  // User datasets are declared under the data root (data/datasets.hpp); a root that does not
  // exist is reported where the data are read.
  std::filesystem::path user_root;
  try {
    user_root = data::resolve_data_root(options.data_root);
  } catch (const DataError&) {
  }
  validate_run_spec(spec, user_root);
  if (!user_root.empty()) {
    if (const auto info = data::find_dataset(spec.dataset, user_root);
        info && info->fingerprint != spec.data_fingerprint) {
      throw DataError(fmt::format(
          "dataset {}: its files or declaration ({}) have fingerprint {}, the run's configuration "
          "{}: the configuration was made for other data (rerun `dkp grid plan` or `dkp run`)",
          spec.dataset, info->declaration.string(), info->fingerprint,
          spec.data_fingerprint.empty() ? "none" : spec.data_fingerprint));
    }
  }
  if (options.threads < 1) throw ConfigError("run: threads must be at least 1");
  if (options.blas_threads < 1) throw ConfigError("run: blas_threads must be at least 1");
  if (options.elbo_repeats && *options.elbo_repeats < 1) {
    throw ConfigError("run: elbo_repeats must be at least 1");
  }
  if (options.out.empty()) throw ConfigError("run: no run directory");
  const auto& p = spec.protocol;
  const std::string hash = spec.hash();
  const int threads = options.threads;
  // The whole run with the BLAS threads asked for, one again after it; the count that runs is
  // the one recorded.
  const platform::ScopedBlasThreads blas_scope(options.blas_threads);
  const int blas_threads = platform::blas_threads();
  if (blas_threads != options.blas_threads) {
    spdlog::warn("--blas-threads {}: this OpenBLAS runs {} thread{} (its build or its limit)",
                 options.blas_threads, blas_threads, blas_threads == 1 ? "" : "s");
  }
  const fs::path& out = options.out;
  const size_t trace_every = options.trace_every
                                 ? *options.trace_every
                                 : training::auto_trace_every(p.steps > 0 ? uint64_t(p.steps) : 0);
  const long kl_anneal_requested = options.kl_anneal_requested.value_or(p.kl_anneal);

  // One process at a time in a run directory: the lock is taken before anything in it is read
  // and held to the end (released by the kernel on any exit).
  const bool out_existed = fs::exists(out);
  std::optional<platform::DirLock> lock = platform::DirLock::try_acquire(out);
  if (!lock) {
    const platform::LockProbe probe = platform::probe_lock(out);
    RunOutcome o;
    o.status = RunStatus::busy;
    o.message = fmt::format("{} is being run by {} ({}); not starting a second run", out.string(),
                            probe.held ? probe.holder : "another process",
                            platform::lock_file(out).filename().string());
    return o;
  }
  // Holding the lock, clear what a writer killed mid-write left behind (its temporary files).
  if (const size_t n = platform::remove_dead_writers_temp_files(out); n > 0) {
    spdlog::info("removed {} temporary file{} of a run killed while writing in {}", n,
                 n == 1 ? "" : "s", out.string());
  }
  // A run that fails before its manifest is written leaves no directory it made behind (nothing
  // but the lock file is in it then). Destroyed before `lock`: removes the file while holding it.
  struct FreshDir {
    fs::path dir;
    bool keep;
    ~FreshDir() {
      if (keep) return;
      std::error_code ec;
      fs::remove(platform::lock_file(dir), ec);
      fs::remove(dir, ec);  // only when empty
    }
  } fresh{out, out_existed};

  // What the directory holds: a result, a checkpoint and the manifest of the run that wrote them.
  // Their configurations are checked before the data are read, so a mistaken --out fails at once.
  const bool force = options.force;
  const fs::path result_path = out / "result.json", manifest_path = out / "manifest.json",
                 checkpoint_path = out / "checkpoint.bin";
  const util::JsonValue old_manifest = read_json_lenient(manifest_path);
  const std::string manifest_hash = json_string(old_manifest, "config_hash");
  const bool have_result = !force && fs::exists(result_path);
  const util::JsonValue old_result =
      have_result ? read_json(result_path, "--force recomputes the run") : util::JsonValue();
  const std::string result_hash = json_string(old_result, "config_hash");
  const bool have_checkpoint = fs::exists(checkpoint_path);
  const bool reuse = have_result && result_hash == hash;
  if (have_result && !reuse && !have_checkpoint) {
    throw ConfigError(fmt::format(
        "{} holds the result of another configuration (hash {}; this run's is {}): use another "
        "--out, or --force to replace it",
        out.string(), result_hash.empty() ? "unknown: no config_hash in result.json" : result_hash,
        hash));
  }
  // A checkpoint is resumed only when it is this configuration's (its own record, or for a
  // legacy checkpoint without one, its directory's manifest), intact, and not beyond --steps.
  std::optional<training::CheckpointHeader> ck;
  if (!force && !reuse && have_checkpoint) {
    try {
      ck = training::read_checkpoint_header(checkpoint_path);
    } catch (const DataError& e) {
      throw DataError(fmt::format("{}; --force discards it and starts afresh", e.what()));
    }
    if (!ck->checksum_ok) {
      throw DataError(fmt::format(
          "{}: checksum mismatch: the checkpoint was changed or damaged after it was written "
          "({}); --force discards it and starts afresh",
          checkpoint_path.string(),
          ck->checksum_stored.empty()
              ? "it has no sha256 line: truncated?"
              : fmt::format("its sha256 line says {}, its contents hash to {}", ck->checksum_stored,
                            ck->checksum_actual)));
    }
    if (ck->legacy() && !options.resume_legacy) {
      throw DataError(fmt::format(
          "{}: a legacy checkpoint (format 1: it records no configuration, data or checksum, so "
          "a damaged or edited file cannot be told from a good one); --resume-legacy resumes it "
          "under its directory's manifest, --force discards it and starts afresh",
          checkpoint_path.string()));
    }
    const std::string ck_hash = ck->legacy() ? manifest_hash : ck->identity.config_hash;
    if (ck_hash != hash) {
      throw ConfigError(fmt::format(
          "{} holds a checkpoint of another configuration (hash {}; this run's is {}): use "
          "another --out, or --force to discard it",
          out.string(),
          !ck_hash.empty() ? ck_hash
          : ck->legacy()   ? "unknown: a legacy checkpoint and no readable manifest"
                           : "unknown: the checkpoint records none",
          hash));
    }
    if (ck->step > uint64_t(p.steps)) {
      throw ConfigError(fmt::format(
          "{} is at step {}, beyond this run's --steps {} (a longer run's parameters): use "
          "another --out, or --force to discard it and start afresh",
          checkpoint_path.string(), ck->step, p.steps));
    }
  }

  // The data now present, by their fingerprint (the files' SHA-256, before they are parsed).
  const fs::path root = data::resolve_data_root(options.data_root);
  const std::string data_sha = run_data_sha256(root, spec.dataset, spec.split);
  const std::string data_words = fmt::format("the data now present ({} split {}) hash to {}",
                                             spec.dataset, spec.split, data_sha);
  if (reuse) {
    // A result is reused only when it was computed from these data.
    std::string used = json_string(old_result, "data_sha256"), source = "result.json";
    if (used.empty() && manifest_hash == hash) {
      used = json_string(old_manifest, "data_sha256");
      source = "manifest.json";
    }
    RunOutcome reused;
    reused.status = RunStatus::reused;
    if (used.empty()) {
      spdlog::warn(
          "{}: result with configuration hash {} exists but records no data fingerprint "
          "(neither result.json nor manifest.json has data_sha256); skipping without checking "
          "its data (--force reruns)",
          out.string(), hash);
      return reused;
    }
    if (used != data_sha) {
      throw DataError(fmt::format(
          "{}: the result with configuration hash {} was computed from other data: {} records "
          "data_sha256 {}, {}; --force recomputes it",
          out.string(), hash, source, used, data_words));
    }
    spdlog::info("{}: result with configuration hash {} exists; skipping (--force reruns)",
                 out.string(), hash);
    return reused;
  }
  // A fresh run on a built-in dataset whose files are not the pinned ones: a warning, or with
  // --strict-data a refusal (a resumed run was checked against its checkpoint's data instead).
  if (!ck) {
    if (const std::string damage = builtin_data_damage(root, spec.dataset); !damage.empty()) {
      const std::string msg = fmt::format(
          "the files of dataset {} under {} are not the pinned ones ({}); `dkp data verify` lists "
          "them and data-scripts/README.md says how to fetch them again",
          spec.dataset, root.string(), damage);
      if (options.strict_data) throw DataError(msg + " (--strict-data)");
      spdlog::warn("{}; the run goes on (--strict-data refuses)", msg);
    }
  }
  if (ck) {
    const std::string ck_data =
        ck->legacy() ? json_string(old_manifest, "data_sha256") : ck->identity.data_sha256;
    if (ck_data != data_sha) {
      throw DataError(fmt::format(
          "{} holds a checkpoint trained on other data ({} records data_sha256 {}; {}): "
          "--force discards it and starts afresh",
          checkpoint_path.string(), ck->legacy() ? "its manifest.json" : "it",
          ck_data.empty() ? "none" : ck_data, data_words));
    }
    if (ck->legacy()) {
      spdlog::info(
          "{}: a legacy checkpoint (it records no configuration or data of its own): resuming it, "
          "as {} has this run's configuration hash and data fingerprint",
          checkpoint_path.string(), manifest_path.string());
    }
  }
  if (force && have_checkpoint) {
    fs::remove(checkpoint_path);
    spdlog::info("--force: discarding the checkpoint in {}", out.string());
  }
  // A verification (dkp grid verify --record) is of the result there now, not of the one this
  // run will write.
  fs::remove(out / "verified.json");

  // Data.
  const RunData run_data = load_run_data(root, spec);
  if (run_data.sha256 != data_sha) {
    throw DataError(fmt::format("the data files of {} split {} changed while the run started",
                                spec.dataset, spec.split));
  }
  const data::RegressionSplit& split = run_data.split;
  const size_t classes = split.classes;
  const size_t width = resolve_width(p.width, split.X_train.n_cols);
  if (spec.model == "dgp" && spec.posterior_name() == "dsvi" && width > 30 && p.width == "input") {
    spdlog::warn(
        "DSVI hidden width {} (--width input, the number of features): the DSVI papers use "
        "--width 'min(input,30)'; a step costs about {:.0f}x as much",
        width, double(width) / 30.0);
  }
  if (spec.model == "dgp" && spec.posterior_name() == "aep" && width != 2 && spec.depth > 1) {
    spdlog::warn(
        "AEP hidden width {}: the DSVI report's AEP-2 uses --width 2 (and --steps 4000 --batch "
        "50 --lr-schedule 0:0.01 --samples 1; experiments/dsvi-tables.yaml)",
        width);
  }

  // The memory guard: refuse before allocating what the step cannot hold.
  check_memory(spec, split.X_train.n_rows,
               options.max_memory ? options.max_memory : platform::available_memory_bytes(),
               options.max_memory ? "given by --max-memory"
                                  : "this process may take now (MemAvailable, within cgroup and "
                                    "address-space limits)");

  // The model (it warns when it has fewer inducing points than asked for).
  const random::Stream run = run_stream(spec);
  const auto model = make_run_model(spec, width, split, run);
  spdlog::info("{} split {}: {} train / {} test points; {}", spec.dataset, spec.split,
               split.X_train.n_rows, split.X_test.n_rows, model->describe());

  // The values used, beside the requested ones (result.json and the manifest record both). The
  // configuration hash keeps the requested values: the committed result store is keyed by them,
  // and each value used is a function of the requested one and the data, so the same cell always
  // uses the same one. (kl_anneal in the hash is, as it always was, the default 1000 already cut
  // to --steps, or the value given, which validate_run_spec keeps within --steps.)
  const long inducing_effective = long(models::inducing_points(*model));
  const long threads_effective = std::min<long>(threads, p.train_samples);
  if (threads_effective < threads) {
    spdlog::warn(
        "--threads {} is more than the {} Monte Carlo samples of a training step (--samples): "
        "training and the final ELBO use {} of the {} threads, prediction ({} test samples) {}",
        threads, p.train_samples, threads_effective, threads, p.test_samples,
        std::min<long>(threads, p.test_samples));
  }
  if (p.kl_anneal != kl_anneal_requested) {
    spdlog::warn(
        "--kl-anneal {} (the default) is longer than the run (--steps {}): the KL weight rises "
        "from 0 to 1 over {} steps",
        kl_anneal_requested, p.steps, p.kl_anneal);
  }

  // Manifest before training: a run directory always says what it is.
  util::Json manifest = util::Json::object();
  manifest.set("config_hash", hash)
      .set("canonical_config", spec.canonical())
      .set("config", options.config)
      .set("dkp_version", version_string())
      .set("git_sha", git_sha());
  set_tree(manifest);
  if (ck) {
    if (auto before = trained_before_by(old_manifest, ck->step)) {
      manifest.set("trained_before_by", std::move(*before));
    }
  }
  manifest.set("armadillo", arma::arma_version::as_string())
      .set("blas", platform::blas_config())
      .set("blas_core", platform::blas_core())
      .set("cpu", platform::cpu_description())
      .set("threads", threads)
      .set("threads_effective", threads_effective)
      .set("blas_threads", blas_threads)
      .set("inducing", (long)p.inducing)
      .set("inducing_effective", inducing_effective)
      .set("kl_anneal", kl_anneal_requested)
      .set("kl_anneal_effective", (long)p.kl_anneal)
      .set("trace_every", (unsigned long long)trace_every)
      .set("seed", (unsigned long long)p.seed)
      .set("data_root", fs::absolute(root).string())
      .set("data_sha256", run_data.sha256)
      .set("host", platform::hostname())
      .set("started", platform::now_iso8601());
  util::write_file_atomic(manifest_path, manifest.dump());
  fresh.keep = true;

  training::TrainOptions topt;
  topt.steps = size_t(p.steps);
  std::vector<std::pair<uint64_t, double>> drops;
  for (size_t i = 1; i < p.lr_schedule.size(); ++i)
    drops.emplace_back(uint64_t(p.lr_schedule[i].step), p.lr_schedule[i].lr);
  topt.lr = training::LrSchedule::steps(p.lr_schedule.front().lr, drops);
  topt.kl = training::KlAnnealing(uint64_t(p.kl_anneal));
  topt.samples = size_t(p.train_samples);
  topt.batch = size_t(p.batch);
  topt.threads = size_t(threads);
  topt.log_every = options.log_every;
  topt.checkpoint_every = options.checkpoint_every;
  topt.checkpoint_path = checkpoint_path;
  topt.identity = {hash, run_data.sha256};
  topt.trace_every = trace_every;
  topt.trace_path = out / "trace.csv";
  if (options.install_signal_handlers) training::install_signal_handlers();
  auto progress = [&options](const training::StepInfo& s, const training::TrainOptions& o) {
    if (o.log_every != 0 && (s.step % o.log_every == 0 || s.step == o.steps)) {
      const double rate = s.steps_per_second();
      spdlog::info(
          "step {}/{}  elbo {:.4f} (avg {:.4f})  E[log p] {:.4f}  KL {:.4f} (w {:.2f})  "
          "lr {:.0e}  {:.1f} steps/s  ETA {}",
          s.step, o.steps, s.elbo, s.elbo_avg, s.expected_loglik, s.kl, s.kl_weight, s.lr, rate,
          platform::format_duration(rate > 0 ? double(o.steps - s.step) / rate : -1, ""));
    }
    if (options.progress) options.progress(s, o);
  };
  training::TrainReport tr;
  try {
    tr = training::train(*model, split.X_train, split.y_train, topt, run, progress);
  } catch (const training::Interrupted& e) {
    return interrupted_outcome(e.what());
  }
  // A stop request during the evaluation (minutes on MNIST) stops the run there too: the
  // checkpoint holds the trained parameters, so the same call evaluates them again without
  // training, and no result file is written.
  auto interrupted = [&](std::string_view during) {
    return interrupted_outcome(fmt::format(
        "interrupted {} after training; {} holds the trained parameters (rerun the same command "
        "to evaluate them)",
        during, checkpoint_path.string()));
  };
  if (training::stop_requested().load()) return interrupted("before the evaluation");

  // Evaluation in the papers' conventions.
  const auto t_pred = std::chrono::steady_clock::now();
  random::Stream pred_rng = run.child("predict", 0);
  const models::Predictive pred = training::predict(
      *model, tr.params, split.X_test, size_t(p.test_samples), pred_rng, size_t(threads));
  eval::RegressionMetrics m;
  eval::ClassificationMetrics cm;
  if (classes > 0) {
    cm = eval::classification_metrics(pred.mean, pred.var, classes,
                                      likelihoods::class_labels(split.y_test, classes),
                                      size_t(threads), pred.class_likelihood);
  } else {
    m = eval::regression_metrics(pred.mean, pred.var, split.y_test, split.y_std);
  }
  const double predict_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_pred).count();
  if (training::stop_requested().load()) return interrupted("during the prediction");
  // Estimate 0 draws from run.child("final-elbo", 0), as the single final estimate always did.
  training::ElboRepeats er;
  // A deterministic ELBO gives the same number every time: one estimate, unless asked for more.
  const int repeats = options.elbo_repeats          ? *options.elbo_repeats
                      : model->deterministic_elbo() ? 1
                                                    : 10;
  try {
    er = training::estimate_elbo_repeated(*model, tr.params, split.X_train, split.y_train,
                                          size_t(p.train_samples), size_t(repeats), run,
                                          "final-elbo", size_t(threads));
  } catch (const training::Interrupted&) {
    return interrupted("during the final ELBO estimate");
  }
  const double elbo = er.first;
  random::Stream summary_rng = run.child("posterior-summaries", 0);
  const auto summaries = model->posterior_summaries(tr.params, summary_rng);

  if (!options.predictions.empty()) {
    const arma::vec y = split.y_to_original(split.y_test);
    util::write_file_atomic(options.predictions, classes > 0
                                                     ? class_predictions_csv(cm, split.y_test)
                                                     : predictions_csv(split, m, y));
  }
  // Cholesky factorisations and their jitter events (DESIGN.md section 4), by phase.
  util::Json chol = util::Json::object();
  chol.set("train", chol_json(tr.chol))
      .set("final_elbo", chol_json(er.chol))
      .set("predict", chol_json(pred.chol));
  linalg::CholStats all = tr.chol;
  all.merge(er.chol);
  all.merge(pred.chol);
  if (all.jittered > 0) {
    spdlog::warn(
        "{} of {} Cholesky factorisations needed jitter (training {}, final ELBO {}, prediction "
        "{}; largest relative jitter {:.1e}): see result.json 'cholesky'",
        all.jittered, all.factorisations, tr.chol.jittered, er.chol.jittered, pred.chol.jittered,
        all.max_jitter_rel);
  }
  // The learned scalar parameters (noise variance, kernel heights and lengthscales, the DIWP's
  // delta and gamma, ...) as stored and on their natural scale (training::scalar_parameters_json).
  util::Json scalars = training::scalar_parameters_json(tr.params);
  util::Json result = util::Json::object();
  result.set("config_hash", hash)
      .set("data_sha256", run_data.sha256)
      .set("dataset", spec.dataset)
      .set("split", spec.split)
      .set("model", spec.model)
      .set("inference", spec.inference)
      .set("posterior", spec.posterior)
      .set("depth", spec.depth)
      .set("kernel", spec.kernel)
      .set("width", (unsigned long)width)
      .set("inducing", (long)p.inducing)
      .set("inducing_effective", inducing_effective)
      .set("steps", (long)p.steps)
      .set("kl_anneal", kl_anneal_requested)
      .set("kl_anneal_effective", (long)p.kl_anneal)
      .set("seed", (unsigned long long)p.seed)
      .set("threads", threads)
      .set("threads_effective", threads_effective)
      .set("blas_threads", blas_threads)
      .set("elbo", elbo)
      .set("elbo_mean", er.mean)
      .set("elbo_se", er.se)
      .set("elbo_repeats", (unsigned long)er.repeats);
  for (const auto& [name, value] : summaries) result.set(name, value);
  if (classes > 0) {
    result.set("classes", (unsigned long)classes)
        .set("test_ll", cm.test_ll)
        .set("test_acc", cm.test_acc)
        .set("test_error", 1.0 - cm.test_acc);
    add_calibration(result, cm.reliability);
  } else {
    result.set("test_ll", m.test_ll).set("test_rmse", m.test_rmse);
    add_calibration(result, m);
  }
  result.set("train_s", tr.train_seconds)
      .set("step_s", tr.seconds_per_step)
      .set("n_train", (unsigned long)split.X_train.n_rows)
      .set("n_test", (unsigned long)split.X_test.n_rows)
      .set("batch", (long)p.batch)
      .set("epoch_s", tr.seconds_per_step *
                          std::ceil(double(split.X_train.n_rows) /
                                    double(std::min<long>(p.batch, long(split.X_train.n_rows)))))
      .set("predict_s", predict_s)
      .set("resumed_from_step", (unsigned long)tr.resumed_from)
      .set("git_sha", git_sha());
  set_tree(result);
  result.set("finished", platform::now_iso8601())
      .set("cholesky", std::move(chol))
      .set("scalar_parameters", std::move(scalars));
  util::write_file_atomic(result_path, result.dump());
  // A cell of a store: its files into the grid's index (experiments/store_index.hpp).
  record_in_store_index(out);
  const std::string train_time = platform::format_duration(tr.train_seconds, "");
  const std::string predict_time = platform::format_duration(predict_s, "");
  if (classes > 0) {
    spdlog::info(
        "{} {}: elbo {:.4f} (mean of {}: {:.4f} +- {:.4f})  test_ll {:.4f}  test_acc {:.2f}%  ({} "
        "train, {} predict)",
        spec.dataset, spec.model, elbo, er.repeats, er.mean, er.se, cm.test_ll, 100.0 * cm.test_acc,
        train_time, predict_time);
  } else {
    spdlog::info(
        "{} split {} {}: elbo {:.4f} (mean of {}: {:.4f} +- {:.4f})  test_ll {:.4f}  test_rmse "
        "{:.4f}  95% coverage {:.3f}  ({} train, {} predict)",
        spec.dataset, spec.split, spec.model, elbo, er.repeats, er.mean, er.se, m.test_ll,
        m.test_rmse, eval::central_coverage(m.point_pit, 0.95), train_time, predict_time);
  }
  RunOutcome done;
  done.result = std::move(result);
  return done;
}

}  // namespace dkp::experiments
