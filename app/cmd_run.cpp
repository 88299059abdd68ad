// dkp run: train and evaluate one configuration (dataset, split, model) and write
// manifest.json, checkpoint.bin, trace.csv, result.json (and optionally a predictions CSV) into
// --out.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include "cli.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/standardise.hpp"
#include "eval/metrics.hpp"
#include "experiments/grid.hpp"
#include "experiments/store.hpp"
#include "likelihoods/robustmax.hpp"
#include "linalg/chol.hpp"
#include "models/factory.hpp"
#include "platform/blas_threads.hpp"
#include "platform/cpu.hpp"
#include "platform/dir_lock.hpp"
#include "platform/process.hpp"
#include "run_setup.hpp"
#include "training/mc.hpp"
#include "training/param_summary.hpp"
#include "training/trace.hpp"
#include "training/trainer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
#include "util/parse.hpp"
#include "util/version.hpp"

namespace dkp::cli {

namespace {

namespace fs = std::filesystem;

po::options_description run_options() {
  po::options_description d("Run options (defaults: the deep Wishart process papers' protocol)");
  // clang-format off
  d.add_options()
    ("config", po::value<std::string>(), "YAML file with any of these options as keys "
                                         "(command-line values take precedence)")
    ("dataset", po::value<std::string>(), "UCI dataset: boston concrete energy kin8nm naval "
                                          "power protein wine yacht (regression); mnist "
                                          "(10 classes; robust-max: sgp, dgp dsvi | aep; softmax: "
                                          "nngp, diwp, dgp global-inducing --kernel relu); "
                                          "rectangles (Rectangle-Images, 2 classes: probit for "
                                          "sgp, dgp dsvi | aep; data-scripts/fetch_rectangles.sh); "
                                          "cifar10 (10 classes, as mnist; "
                                          "data-scripts/fetch_cifar10.sh)")
    ("split", po::value<int>()->default_value(0), "split index (0-19; protein 0-4)")
    ("model", po::value<std::string>(), "sgp | dgp | nngp | diwp | dwp")
    ("inference", po::value<std::string>()->default_value(""), "dgp: dsvi | global-inducing | aep (approximate EP)")
    ("posterior", po::value<std::string>()->default_value(""), "dwp: gw | agw | abgw")
    ("depth", po::value<int>()->default_value(2), "number of layers including the output layer (sgp: 1)")
    ("kernel", po::value<std::string>()->default_value("se"), "se | relu")
    ("width", po::value<std::string>()->default_value("input"),
     "hidden width: input (number of features) | min(input,30) (the DSVI papers') | an integer")
    ("pixel-scale", po::value<double>()->default_value(1.0),
     "mnist, rectangles, cifar10: multiply the pixels (after --pixels) by this factor; the Gram models' output prior "
     "variance grows with its square (README, MNIST classification)")
    ("init-lengthscale", po::value<double>()->default_value(0.0, "the model's: 1"),
     "sgp, dgp dsvi: initial lengthscale of every SE kernel (the DSVI report's MNIST code: 2)")
    ("init-variance", po::value<double>()->default_value(0.0, "the model's: 1"),
     "sgp, dgp dsvi: initial variance of every SE kernel (the DSVI report's MNIST code: 2)")
    ("delta-init", po::value<double>()->default_value(models::kDiwpDeltaInit, "e^4 = 54.598"),
     "diwp: initial delta of every inverse Wishart layer (1 collapses the SE DIWP; README)")
    ("diwp-dof", po::value<std::string>()->default_value("point"),
     "diwp: dof of each train/test point's conditional: point (delta + P + 2, appendix I) | "
     "batch (delta + P + B + 1, B the batch size, as bayesfunc)")
    ("stl", po::value<std::string>()->default_value("on"),
     "dwp: sticking the landing in log Q: on (the Bartlett parameters alpha, beta, mu, sigma, "
     "as the GW paper's appendix F) | off | mixing (agw|abgw: A' and B as well)")
    ("a-prime-scale", po::value<double>()->default_value(1.0),
     "dwp agw|abgw: A' = c Phi with Phi the optimised parameter (init I / c), so Adam's steps on "
     "A' are c times the learning rate")
    ("mu-param", po::value<std::string>()->default_value("direct"),
     "dwp: the Bartlett means' parameter: direct (mu itself) | bayesfunc (mu = mu_raw / sqrt(m), "
     "m = min(P, nu), as bayesfunc's WishartLayer, so Adam's steps on mu are lr / sqrt(m))")
    ("pixels", po::value<std::string>()->default_value("unit"),
     "mnist, rectangles, cifar10: unit (pixels in [0, 1], as the DSVI reference code) | standard (minus the training "
     "images' mean pixel, over their standard deviation, as PyTorch's usual normalisation and "
     "the DKP paper's reference code; cifar10: per colour plane)")
    ("hidden-ard", po::bool_switch(),
     "dgp global-inducing: ARD lengthscales in every layer, not only the first (changes the "
     "prior; the DWP papers' DGP has one lengthscale per hidden layer)")
    ("gi-precision", po::value<std::string>()->default_value("shared"),
     "dgp global-inducing: the pseudo-likelihood precision of a layer's q(U): shared by its "
     "output columns (bayesfunc) | per-output (one per column)")
    ("steps", po::value<long>()->default_value(20000), "Adam steps")
    ("lr-schedule", po::value<std::string>()->default_value("0:0.01,10000:0.001"),
     "learning rates as step:lr pairs")
    ("lr", po::value<double>(), "constant learning rate (instead of --lr-schedule)")
    ("kl-anneal", po::value<long>()->default_value(1000), "KL weight rises 0 -> 1 over this many steps")
    ("samples", po::value<long>()->default_value(10), "Monte Carlo samples per training step")
    ("test-samples", po::value<long>()->default_value(100), "posterior samples for prediction")
    ("inducing", po::value<long>()->default_value(100), "inducing points")
    ("batch", po::value<long>()->default_value(10000), "minibatch size (clamped to the data size)")
    ("seed", po::value<uint64_t>()->default_value(0), "master seed")
    ("threads", po::value<int>()->default_value(1),
     "threads sharing the Monte Carlo samples of every step, the final ELBO and the predictions "
     "(1: the numbers of a single-threaded run; T > 1: reproducible for that T)")
    ("elbo-repeats", po::value<int>()->default_value(10),
     "independent estimates of the final ELBO (each with --samples samples) whose mean and "
     "standard error go into the result as elbo_mean and elbo_se; `elbo` stays the first "
     "estimate, the protocol's (default: 10, or 1 for a deterministic ELBO: sgp, dgp aep)")
    ("out", po::value<std::string>(), "run directory (default results/runs/adhoc/<dataset>/split<k>/<hash>)")
    ("predictions", po::value<std::string>(), "also write per-test-point predictions to this CSV")
    ("log-every", po::value<long>()->default_value(500), "progress line every N steps (0: never)")
    ("checkpoint-every", po::value<long>()->default_value(1000),
     "checkpoint every N steps (0: only on SIGINT/SIGTERM)")
    ("trace-every", po::value<std::string>()->default_value("auto"),
     "trace.csv in --out: that step's ELBO estimate, E[log p], KL, KL weight and learning rate "
     "every N steps and at the last (0: none; auto: 10, or the multiple of 10 that keeps the "
     "trace within 1000 rows, so that a cell of the committed result store stays small)")
    ("force", "rerun from the start even when a result with the same configuration hash exists "
              "(discards a checkpoint in --out; replaces a result or checkpoint of another "
              "configuration, of other data, or a damaged one, which are refused without it)");
  // clang-format on
  return d;
}

// Adds the keys of a YAML config file as if they had been given on the command line (after the
// real command line, so command-line values win). Unknown keys are errors naming file and line.
void store_config_file(const std::string& path, const po::options_description& desc,
                       po::variables_map& vm) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
  if (!root.IsMap()) throw ConfigError(fmt::format("{}: expected a mapping of options", path));
  std::vector<std::string> args;
  for (const auto& kv : root) {
    const auto key = kv.first.as<std::string>();
    if (key == "config" || !desc.find_nothrow(key, false)) {
      throw ConfigError(
          fmt::format("{}:{}: unknown key '{}'", path, kv.first.Mark().line + 1, key));
    }
    if (!kv.second.IsScalar()) {
      throw ConfigError(fmt::format("{}:{}: key '{}' needs a scalar value", path,
                                    kv.second.Mark().line + 1, key));
    }
    args.push_back("--" + key);
    if (key != "force") args.push_back(kv.second.as<std::string>());
  }
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
  } catch (const po::error& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
}

std::string fmt_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long t = std::lround(s);
  if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
  if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

// A JSON file of --out read strictly: DataError naming the file (and, for a parse error, the line
// and column) and the remedy when it is damaged, or when its config_hash or data_sha256 is not a
// string.
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

// An output file given on the command line (written after training): a usage error now when it
// names a directory, or a place where it cannot be written (the nearest existing directory above
// it must be writable: util::write_file_atomic creates the missing ones).
void check_output_file(const fs::path& path, const char* option) {
  if (path.empty()) throw UsageError(fmt::format("{} is empty: give a file name", option));
  if (fs::is_directory(path)) {
    throw UsageError(fmt::format("{} {} is a directory: give a file name, e.g. {}", option,
                                 path.string(), (path / "predictions.csv").string()));
  }
  fs::path dir = path.parent_path();
  if (dir.empty()) dir = ".";
  while (!fs::exists(dir) && dir.has_parent_path() && dir.parent_path() != dir)
    dir = dir.parent_path();
  if (!fs::exists(dir)) dir = ".";
  if (!fs::is_directory(dir)) {
    throw UsageError(
        fmt::format("{} {}: {} is not a directory", option, path.string(), dir.string()));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw UsageError(fmt::format("{} {}: cannot write into {} ({})", option, path.string(),
                                 dir.string(), std::strerror(errno)));
  }
}

// --trace-every: "auto" (training::auto_trace_every) or a period N >= 0 (0: no trace).
size_t trace_period(const std::string& text, long steps) {
  if (text == "auto") return training::auto_trace_every(steps > 0 ? uint64_t(steps) : 0);
  const auto v = util::parse_integer(text);
  if (!v || *v < 0) {
    throw UsageError(
        fmt::format("--trace-every must be 'auto' or an integer >= 0, got '{}'", text));
  }
  return size_t(*v);
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add(run_options());
  po::variables_map vm;
  const std::string usage =
      "dkp run --dataset NAME --split K --model MODEL [--inference I] [--posterior P] [options]\n"
      "\nexit codes: 0 done (or an existing result reused), 1 error, 2 usage error (or --out holds "
      "another\nconfiguration's result or checkpoint), 75 another process is running --out (its "
      "run.lock), 130 interrupted";
  if (!parse_or_help(args, desc, {}, vm, usage)) return kExitOk;
  if (vm.count("config")) {
    store_config_file(vm["config"].as<std::string>(), desc, vm);
    po::notify(vm);
  }
  if (!vm.count("dataset")) throw UsageError("--dataset is required");
  if (!vm.count("model")) throw UsageError("--model is required");
  if (vm.count("lr") && !vm["lr-schedule"].defaulted()) {
    throw UsageError("give either --lr or --lr-schedule, not both");
  }
  auto positive = [&](const char* name) {
    const long v = vm[name].as<long>();
    if (v <= 0) throw UsageError(fmt::format("--{} must be positive, got {}", name, v));
    return v;
  };
  auto period = [&](const char* name) {  // every N steps, 0: never
    const long v = vm[name].as<long>();
    if (v < 0) throw UsageError(fmt::format("--{} must be >= 0, got {}", name, v));
    return size_t(v);
  };
  const size_t log_every = period("log-every"), checkpoint_every = period("checkpoint-every");
  const size_t trace_every =
      trace_period(vm["trace-every"].as<std::string>(), vm["steps"].as<long>());

  // The run's configuration, in the grid runner's terms (same hash as the grid cell).
  experiments::RunSpec spec;
  spec.grid = "adhoc";
  spec.dataset = vm["dataset"].as<std::string>();
  spec.split = vm["split"].as<int>();
  spec.model = vm["model"].as<std::string>();
  spec.inference = vm["inference"].as<std::string>();
  spec.posterior = vm["posterior"].as<std::string>();
  spec.depth = vm["depth"].as<int>();
  if (spec.model == "sgp" && vm["depth"].defaulted()) spec.depth = 1;
  spec.kernel = vm["kernel"].as<std::string>();
  spec.delta_init = vm["delta-init"].as<double>();
  spec.diwp_dof = vm["diwp-dof"].as<std::string>();
  spec.stl = vm["stl"].as<std::string>();  // checked with the rest of the spec
  spec.a_prime_scale = vm["a-prime-scale"].as<double>();
  spec.mu_param = vm["mu-param"].as<std::string>();  // checked with the rest of the spec
  spec.hidden_ard = vm["hidden-ard"].as<bool>();
  spec.gi_precision = vm["gi-precision"].as<std::string>();
  auto& p = spec.protocol;
  p.steps = positive("steps");
  p.lr_schedule = vm.count("lr")
                      ? experiments::parse_lr_schedule(fmt::format("0:{}", vm["lr"].as<double>()))
                      : experiments::parse_lr_schedule(vm["lr-schedule"].as<std::string>());
  if (!vm.count("lr") && vm["lr-schedule"].defaulted()) {
    // The default (papers') schedule drops at step 10000; shorter runs keep the first rate.
    std::erase_if(p.lr_schedule,
                  [&](const experiments::LrPoint& q) { return q.step > 0 && q.step >= p.steps; });
  }
  p.kl_anneal = vm["kl-anneal"].as<long>();
  if (p.kl_anneal < 0) throw UsageError("--kl-anneal must be >= 0");
  if (vm["kl-anneal"].defaulted()) p.kl_anneal = std::min(p.kl_anneal, p.steps);
  p.train_samples = positive("samples");
  p.test_samples = positive("test-samples");
  p.inducing = positive("inducing");
  p.batch = positive("batch");
  p.width = vm["width"].as<std::string>();
  p.pixels = vm["pixels"].as<std::string>();
  p.pixel_scale = vm["pixel-scale"].as<double>();
  p.init_lengthscale = vm["init-lengthscale"].as<double>();
  p.init_variance = vm["init-variance"].as<double>();
  p.seed = vm["seed"].as<uint64_t>();
  if (spec.split < 0) throw UsageError("--split must be >= 0");
  const int threads = vm["threads"].as<int>();
  if (threads < 1) throw UsageError("--threads must be at least 1");
  const int elbo_repeats = vm["elbo-repeats"].as<int>();
  if (elbo_repeats < 1) throw UsageError("--elbo-repeats must be at least 1");
  experiments::validate_run_spec(spec);
  const std::string hash = spec.hash();

  // --out and --predictions: usage errors before anything is read, written or trained.
  if (vm.count("out") && vm["out"].as<std::string>().empty()) {
    throw UsageError(
        "--out is empty: give a run directory (without --out: "
        "results/runs/adhoc/<dataset>/split<k>/<hash>)");
  }
  const fs::path out = vm.count("out") ? fs::path(vm["out"].as<std::string>())
                                       : spec.run_dir(fs::path("results") / "runs");
  if (fs::exists(out) && !fs::is_directory(out)) {
    throw UsageError(fmt::format("--out {} is a file, not a run directory", out.string()));
  }
  if (vm.count("predictions"))
    check_output_file(vm["predictions"].as<std::string>(), "--predictions");

  // One process at a time in a run directory: the lock is taken before anything in it is read
  // and held to the end (released by the kernel on any exit).
  const bool out_existed = fs::exists(out);
  std::optional<platform::DirLock> lock = platform::DirLock::try_acquire(out);
  if (!lock) {
    const platform::LockProbe probe = platform::probe_lock(out);
    std::cerr << fmt::format("dkp run: {} is being run by {} ({}); not starting a second run\n",
                             out.string(), probe.held ? probe.holder : "another process",
                             platform::lock_file(out).filename().string());
    return kExitBusy;
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

  // What --out holds: a result, a checkpoint and the manifest of the run that wrote them. Their
  // configurations are checked before the data are read, so a mistaken --out fails at once.
  const bool force = vm.count("force") > 0;
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
  const fs::path root = data::resolve_data_root(vm["data"].as<std::string>());
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
    if (used.empty()) {
      spdlog::warn(
          "{}: result with configuration hash {} exists but records no data fingerprint "
          "(neither result.json nor manifest.json has data_sha256); skipping without checking "
          "its data (--force reruns)",
          out.string(), hash);
      return kExitOk;
    }
    if (used != data_sha) {
      throw DataError(fmt::format(
          "{}: the result with configuration hash {} was computed from other data: {} records "
          "data_sha256 {}, {}; --force recomputes it",
          out.string(), hash, source, used, data_words));
    }
    spdlog::info("{}: result with configuration hash {} exists; skipping (--force reruns)",
                 out.string(), hash);
    return kExitOk;
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

  // Data.
  const RunData run_data = load_run_data(root, spec.dataset, spec.split, p.pixels, p.pixel_scale);
  if (run_data.sha256 != data_sha) {
    throw DataError(fmt::format("the data files of {} split {} changed while the run started",
                                spec.dataset, spec.split));
  }
  const data::RegressionSplit& split = run_data.split;
  const size_t classes = data::dataset_classes(spec.dataset);
  const size_t width = experiments::resolve_width(p.width, split.X_train.n_cols);
  if (spec.model == "dgp" && spec.inference == "dsvi" && width > 30 && p.width == "input") {
    spdlog::warn(
        "DSVI hidden width {} (--width input, the number of features): the DSVI papers use "
        "--width 'min(input,30)'; a step costs about {:.0f}x as much",
        width, double(width) / 30.0);
  }
  if (spec.model == "dgp" && spec.inference == "aep" && width != 2 && spec.depth > 1) {
    spdlog::warn(
        "AEP hidden width {}: the DSVI report's AEP-2 uses --width 2 (and --steps 4000 --batch "
        "50 --lr-schedule 0:0.01 --samples 1; experiments/dsvi-tables.yaml)",
        width);
  }

  // The model (it warns when it has fewer inducing points than asked for).
  const random::Stream run(p.seed);
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
  const long kl_anneal_requested = vm["kl-anneal"].as<long>();
  if (p.kl_anneal != kl_anneal_requested) {
    spdlog::warn(
        "--kl-anneal {} (the default) is longer than the run (--steps {}): the KL weight rises "
        "from 0 to 1 over {} steps",
        kl_anneal_requested, p.steps, p.kl_anneal);
  }

  // Manifest before training: a run directory always says what it is.
  util::Json config = util::Json::object();
  for (const auto& [k, v] : vm) {
    if (k == "help" || k == "quiet" || k == "force") continue;
    const auto& val = v.value();
    if (auto* s = boost::any_cast<std::string>(&val))
      config.set(k, *s);
    else if (auto* i = boost::any_cast<int>(&val))
      config.set(k, *i);
    else if (auto* l = boost::any_cast<long>(&val))
      config.set(k, *l);
    else if (auto* u = boost::any_cast<uint64_t>(&val))
      config.set(k, (unsigned long long)*u);
    else if (auto* d = boost::any_cast<double>(&val))
      config.set(k, *d);
  }
  util::Json manifest = util::Json::object();
  manifest.set("config_hash", hash)
      .set("canonical_config", spec.canonical())
      .set("config", config)
      .set("dkp_version", version_string())
      .set("git_sha", git_sha())
      .set("armadillo", arma::arma_version::as_string())
      .set("blas", platform::blas_config())
      .set("blas_core", platform::blas_core())
      .set("cpu", platform::cpu_description())
      .set("threads", threads)
      .set("threads_effective", threads_effective)
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

  // Training.
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
  topt.log_every = log_every;
  topt.checkpoint_every = checkpoint_every;
  topt.checkpoint_path = checkpoint_path;
  topt.identity = {hash, run_data.sha256};
  topt.trace_every = trace_every;
  topt.trace_path = out / "trace.csv";
  training::install_signal_handlers();
  auto progress = [](const training::StepInfo& s, const training::TrainOptions& o) {
    if (o.log_every == 0 || (s.step % o.log_every != 0 && s.step != o.steps)) return;
    const double rate = s.steps_per_second();
    spdlog::info(
        "step {}/{}  elbo {:.4f} (avg {:.4f})  E[log p] {:.4f}  KL {:.4f} (w {:.2f})  "
        "lr {:.0e}  {:.1f} steps/s  ETA {}",
        s.step, o.steps, s.elbo, s.elbo_avg, s.expected_loglik, s.kl, s.kl_weight, s.lr, rate,
        fmt_duration(rate > 0 ? double(o.steps - s.step) / rate : -1));
  };
  training::TrainReport tr;
  try {
    tr = training::train(*model, split.X_train, split.y_train, topt, run, progress);
  } catch (const training::Interrupted& e) {
    std::cerr << "dkp run: " << e.what() << "\n";
    return 130;
  }
  // A signal during the evaluation (minutes on MNIST) stops the run there too: the checkpoint
  // holds the trained parameters, so the same command evaluates them again without training, and
  // no result file is written.
  auto interrupted = [&](std::string_view during) {
    std::cerr << fmt::format(
        "dkp run: interrupted {} after training; {} holds the trained parameters (rerun the same "
        "command to evaluate them)\n",
        during, checkpoint_path.string());
    return 130;
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
  const int repeats =
      model->deterministic_elbo() && vm["elbo-repeats"].defaulted() ? 1 : elbo_repeats;
  try {
    er = training::estimate_elbo_repeated(*model, tr.params, split.X_train, split.y_train,
                                          size_t(p.train_samples), size_t(repeats), run,
                                          "final-elbo", size_t(threads));
  } catch (const training::Interrupted&) {
    return interrupted("during the final ELBO estimate");
  }
  const double elbo = er.first;

  if (vm.count("predictions")) {  // checked before training (check_output_file)
    const arma::vec y = split.y_to_original(split.y_test);
    util::write_file_atomic(
        vm["predictions"].as<std::string>(),
        classes > 0 ? class_predictions_csv(cm, split.y_test) : predictions_csv(split, m, y));
  }
  // Cholesky factorisations and their jitter events (DESIGN.md section 4), by phase.
  util::Json chol = util::Json::object();
  auto chol_json = [](const linalg::CholStats& c) {
    util::Json j = util::Json::object();
    j.set("factorisations", (unsigned long long)c.factorisations)
        .set("jittered", (unsigned long long)c.jittered)
        .set("retries", (unsigned long long)c.retries)
        .set("max_jitter_rel", c.max_jitter_rel);
    return j;
  };
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
      .set("elbo", elbo)
      .set("elbo_mean", er.mean)
      .set("elbo_se", er.se)
      .set("elbo_repeats", (unsigned long)er.repeats);
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
      .set("git_sha", git_sha())
      .set("finished", platform::now_iso8601())
      .set("cholesky", std::move(chol))
      .set("scalar_parameters", std::move(scalars));
  util::write_file_atomic(result_path, result.dump());
  if (classes > 0) {
    spdlog::info(
        "{} {}: elbo {:.4f} (mean of {}: {:.4f} +- {:.4f})  test_ll {:.4f}  test_acc {:.2f}%  ({} "
        "train, {} predict)",
        spec.dataset, spec.model, elbo, er.repeats, er.mean, er.se, cm.test_ll, 100.0 * cm.test_acc,
        fmt_duration(tr.train_seconds), fmt_duration(predict_s));
    std::cout << result.dump(0) << "\n";
    return kExitOk;
  }
  spdlog::info(
      "{} split {} {}: elbo {:.4f} (mean of {}: {:.4f} +- {:.4f})  test_ll {:.4f}  test_rmse "
      "{:.4f}  95% coverage {:.3f}  ({} train, {} predict)",
      spec.dataset, spec.split, spec.model, elbo, er.repeats, er.mean, er.se, m.test_ll,
      m.test_rmse, eval::central_coverage(m.point_pit, 0.95), fmt_duration(tr.train_seconds),
      fmt_duration(predict_s));
  std::cout << result.dump(0) << "\n";
  return kExitOk;
}

}  // namespace dkp::cli
