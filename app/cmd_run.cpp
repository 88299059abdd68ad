// dkp run: train and evaluate one configuration (dataset, split, model) and write
// manifest.json, checkpoint.bin, trace.csv, result.json (and optionally a predictions CSV) into
// --out: options -> RunSpec and RunOptions -> experiments::run_cell (experiments/run.hpp) -> the
// result on standard output, the outcome as the exit code.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include "cli.hpp"
#include "data/datasets.hpp"
#include "data/root.hpp"
#include "experiments/lr_schedule.hpp"
#include "experiments/names.hpp"
#include "experiments/provenance.hpp"
#include "experiments/run.hpp"
#include "experiments/run_spec.hpp"
#include "models/registry.hpp"
#include "platform/memory.hpp"
#include "training/trace.hpp"
#include "util/error.hpp"
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
    ("spec", po::value<std::string>(),
     "the whole configuration as a run's manifest.json holds it (canonical_config: "
     "dkp-run-v1 lines), inline or in a file, instead of --dataset, --split, --model, the "
     "protocol and model options (the grid runner starts its cells so)")
    ("dataset", po::value<std::string>(), "dataset name: the papers' (below) or your own "
                                          "(docs/cli.md, \"Your own data\")")
    ("split", po::value<int>()->default_value(0), "split index (0-19; protein 0-4; toy: the "
                                                  "trial, 0-9)")
    ("model", po::value<std::string>(), "sgp | dgp | nngp | diwp | dwp")
    ("posterior", po::value<std::string>()->default_value(""),
     "the model's approximate posterior (dgp: dsvi | global-inducing | aep; dwp: gw | agw | abgw; "
     "the models below)")
    ("inference", po::value<std::string>()->default_value(""), "another name of --posterior")
    ("depth", po::value<int>()->default_value(2), "number of layers including the output layer (sgp: 1)")
    ("kernel", po::value<std::string>()->default_value("se"), "se | relu")
    ("width", po::value<std::string>()->default_value("input"),
     "hidden width: input (number of features) | min(input,30) (the DSVI papers') | an integer")
    ("pixel-scale", po::value<double>()->default_value(1.0),
     "mnist, rectangles, cifar10: multiply the pixels (after --pixels) by this factor; the Gram models' output prior "
     "variance grows with its square (README, MNIST classification)")
    ("pixels", po::value<std::string>()->default_value("unit"),
     "mnist, rectangles, cifar10: unit (pixels in [0, 1], as the DSVI reference code) | standard (minus the training "
     "images' mean pixel, over their standard deviation, as PyTorch's usual normalisation and "
     "the DKP paper's reference code; cifar10: per colour plane)")
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
    ("blas-threads", po::value<int>()->default_value(1),
     "OpenBLAS threads inside each BLAS and LAPACK call: for a model whose step is a few large "
     "matrix products (the CIFAR-10 DIWP), where --threads has no samples to share; results may "
     "differ from one thread's at round-off")
    ("max-memory", po::value<std::string>(),
     "memory the run may take, e.g. 8G or 512M (default: what this process may take now); a "
     "run whose training step needs more (a lower bound from --samples, --inducing, --batch, "
     "--depth and the data) is refused before the model is built")
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
    ("strict-data", "refuse a fresh run on one of the papers' datasets whose files differ from "
                    "data-scripts/SHA256SUMS (default: a warning)")
    ("resume-legacy", "resume a legacy checkpoint (format 1, written by old binaries: no "
                      "configuration, data or checksum recorded, so it cannot be checked) under "
                      "its directory's manifest; refused without it")
    ("force", "rerun from the start even when a result with the same configuration hash exists "
              "(discards a checkpoint in --out; replaces a result or checkpoint of another "
              "configuration, of other data, or a damaged one, which are refused without it)")
    ("allow-dirty", "write into the committed store (--out in a git work tree's results/runs, "
                    "as the default --out from a checkout) although this dkp was built from a "
                    "modified work tree, which is refused without it (manifest.json records "
                    "tree_modified)");
  // clang-format on
  add_model_options(d);
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
    // Keys are the options' long names, with dashes or, as in grid files, underscores.
    const auto given = kv.first.as<std::string>();
    auto key = given;
    std::replace(key.begin(), key.end(), '_', '-');
    if (key == "config" || !desc.find_nothrow(key, false)) {
      // A hint: the option of the closest name (keys are the options' long names, dashed), or
      // the grid command for a grid file.
      std::string hint;
      size_t best = 3;
      std::string dashed = key;
      std::replace(dashed.begin(), dashed.end(), '_', '-');
      for (const auto& o : desc.options()) {
        const std::string& name = o->long_name();
        if (name == "config") continue;
        const size_t d = name == dashed ? 0 : experiments::edit_distance(dashed, name);
        if (d < best) {
          best = d;
          hint = fmt::format(" (did you mean '{}'?)", name);
        }
      }
      for (const char* grid_key : {"name", "family", "axes", "protocol", "profiles"}) {
        if (key == grid_key) {
          hint =
              " (a grid file? it is run with 'dkp grid run FILE'; --config takes dkp run's "
              "options)";
        }
      }
      throw ConfigError(
          fmt::format("{}:{}: unknown key '{}'{}", path, kv.first.Mark().line + 1, given, hint));
    }
    if (!kv.second.IsScalar()) {
      throw ConfigError(fmt::format("{}:{}: key '{}' needs a scalar value", path,
                                    kv.second.Mark().line + 1, key));
    }
    // A switch (--force, --hidden-ard) is given by true or on, left out by false or off.
    const std::string value = kv.second.as<std::string>();
    if (desc.find(key, false).semantic()->max_tokens() == 0) {
      if (value == "true" || value == "on") {
        args.push_back("--" + key);
      } else if (value != "false" && value != "off") {
        throw ConfigError(fmt::format("{}:{}: key '{}' is a switch: true or false, not '{}'", path,
                                      kv.second.Mark().line + 1, key, value));
      }
      continue;
    }
    args.push_back("--" + key);
    args.push_back(value);
  }
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
  } catch (const po::error& e) {
    throw ConfigError(fmt::format("{}: {}", path, e.what()));
  }
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

// The run's configuration from the options, in the grid runner's terms (same hash as the grid
// cell): usage errors for values out of range, ConfigError (validate_run_spec) for the rest.
experiments::RunSpec run_spec_of(const po::variables_map& vm) {
  auto positive = [&](const char* name) {
    const long v = vm[name].as<long>();
    if (v <= 0) throw UsageError(fmt::format("--{} must be positive, got {}", name, v));
    return v;
  };
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
  spec.options = model_options_of(vm);  // checked with the rest of the spec
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
  p.seed = vm["seed"].as<uint64_t>();
  if (spec.split < 0) throw UsageError("--split must be >= 0");
  return spec;
}

// The options that make a run's configuration (its hash), which --spec gives whole: none of
// them may be given with it.
std::vector<std::string> configuration_options() {
  std::vector<std::string> names = {
      "config",    "dataset", "split",        "model",    "posterior", "inference",   "depth",
      "kernel",    "width",   "pixel-scale",  "pixels",   "steps",     "lr-schedule", "lr",
      "kl-anneal", "samples", "test-samples", "inducing", "batch",     "seed"};
  for (const auto& d : models::option_table()) names.push_back(d.flag().substr(2));
  return names;
}

// --spec: the canonical configuration, inline (it starts with its version line) or in a file.
experiments::RunSpec spec_of_option(const po::variables_map& vm) {
  for (const auto& name : configuration_options()) {
    if (vm.count(name) && !vm[name].defaulted()) {
      throw UsageError(
          fmt::format("--spec gives the whole configuration: --{} cannot be given with it", name));
    }
  }
  const std::string v = vm["spec"].as<std::string>();
  std::string text = v;
  if (v.rfind("dkp-run-v1", 0) != 0) {
    std::ifstream in(v, std::ios::binary);
    if (!in) {
      throw UsageError(fmt::format(
          "--spec: '{}' is neither a configuration (dkp-run-v1 lines) nor a readable file", v));
    }
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // One final newline, as canonical() ends (a file or $(...) may add or drop one).
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  text += '\n';
  experiments::RunSpec spec;
  try {
    spec = experiments::RunSpec::parse_canonical(text);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--spec: {}", e.what()));
  }
  spec.grid = "adhoc";
  return spec;
}

// Every option, given or default (but the switches --help, --quiet, --force, --allow-dirty,
// --resume-legacy and --strict-data, and those in `skip`), as the manifest's "config".
util::Json options_json(const po::variables_map& vm, const std::vector<std::string>& skip) {
  util::Json config = util::Json::object();
  for (const auto& [k, v] : vm) {
    if (k == "help" || k == "quiet" || k == "force" || k == "allow-dirty" || k == "resume-legacy" ||
        k == "strict-data" || std::find(skip.begin(), skip.end(), k) != skip.end())
      continue;
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
  return config;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description desc = common_options();
  desc.add(run_options());
  po::variables_map vm;
  const std::string usage =
      "dkp run --dataset NAME --split K --model MODEL [--posterior P] [options]\n"
      "dkp run --spec TEXT|FILE [options]   (a manifest's canonical_config)\n"
      "\nexit codes: 0 done (or an existing result reused), 1 error, 2 usage error (or --out holds "
      "another\nconfiguration's result or checkpoint), 75 another process is running --out (its "
      "run.lock), 130 interrupted\n\n" +
      models::registry_help() + data::datasets_help();
  if (!parse_or_help(args, desc, {}, vm, usage)) return kExitOk;
  if (vm.count("config")) {
    store_config_file(vm["config"].as<std::string>(), desc, vm);
    po::notify(vm);
  }
  const bool from_spec = vm.count("spec") > 0;
  if (!from_spec) {
    if (!vm.count("dataset")) throw UsageError("--dataset is required");
    if (!vm.count("model")) throw UsageError("--model is required");
    if (vm.count("lr") && !vm["lr-schedule"].defaulted()) {
      throw UsageError("give either --lr or --lr-schedule, not both");
    }
  }
  auto period = [&](const char* name) {  // every N steps, 0: never
    const long v = vm[name].as<long>();
    if (v < 0) throw UsageError(fmt::format("--{} must be >= 0, got {}", name, v));
    return size_t(v);
  };
  experiments::RunOptions opt;
  opt.log_every = period("log-every");
  opt.checkpoint_every = period("checkpoint-every");
  experiments::RunSpec spec = from_spec ? spec_of_option(vm) : run_spec_of(vm);
  // The canonical configuration's own fingerprint of a user dataset, checked below against the
  // files' (the flags' path takes the files').
  const std::string spec_fingerprint = spec.data_fingerprint;
  opt.trace_every = trace_period(vm["trace-every"].as<std::string>(), spec.protocol.steps);
  opt.threads = vm["threads"].as<int>();
  if (opt.threads < 1) throw UsageError("--threads must be at least 1");
  opt.blas_threads = blas_threads_option(vm);
  if (vm.count("max-memory")) {
    const std::string v = vm["max-memory"].as<std::string>();
    opt.max_memory = platform::parse_byte_size(v);
    if (!opt.max_memory) {
      throw UsageError(fmt::format(
          "--max-memory: '{}' is not a size (bytes, or a number with K, M, G or T)", v));
    }
  }
  const int elbo_repeats = vm["elbo-repeats"].as<int>();
  if (elbo_repeats < 1) throw UsageError("--elbo-repeats must be at least 1");
  if (!vm["elbo-repeats"].defaulted()) opt.elbo_repeats = elbo_repeats;
  opt.kl_anneal_requested = from_spec ? spec.protocol.kl_anneal : vm["kl-anneal"].as<long>();
  // The data root, where a user dataset is declared (data/datasets.hpp); a missing root is
  // reported where the data are read.
  std::filesystem::path data_root;
  try {
    data_root = data::resolve_data_root(vm["data"].as<std::string>());
  } catch (const DataError&) {
  }
  if (!data_root.empty()) {
    if (const auto info = data::find_dataset(spec.dataset, data_root))
      spec.data_fingerprint = info->fingerprint;
  }
  if (from_spec && spec.data_fingerprint != spec_fingerprint) {
    throw ConfigError(fmt::format(
        "--spec names dataset '{}' with data fingerprint '{}', but its files under the data root "
        "give '{}'",
        spec.dataset, spec_fingerprint, spec.data_fingerprint));
  }
  experiments::validate_run_spec(spec, data_root);
  spec.set_posterior(spec.posterior_name());  // --inference or --posterior: the model's own field

  // --out and --predictions: usage errors before anything is read, written or trained.
  if (vm.count("out") && vm["out"].as<std::string>().empty()) {
    throw UsageError(
        "--out is empty: give a run directory (without --out: "
        "results/runs/adhoc/<dataset>/split<k>/<hash>)");
  }
  opt.out = vm.count("out") ? fs::path(vm["out"].as<std::string>())
                            : spec.run_dir(fs::path("results") / "runs");
  if (fs::exists(opt.out) && !fs::is_directory(opt.out)) {
    throw UsageError(fmt::format("--out {} is a file, not a run directory", opt.out.string()));
  }
  if (vm.count("predictions")) {
    opt.predictions = vm["predictions"].as<std::string>();
    check_output_file(opt.predictions, "--predictions");
  }
  // A cell of a binary built from a modified tree stays out of the committed store unless asked.
  if (const std::string why = experiments::modified_tree_refusal(
          opt.out, tree_state(), vm.count("allow-dirty") > 0, "dkp run");
      !why.empty()) {
    throw Error(why);
  }
  opt.data_root = vm["data"].as<std::string>();
  opt.force = vm.count("force") > 0;
  opt.resume_legacy = vm.count("resume-legacy") > 0;
  opt.strict_data = vm.count("strict-data") > 0;
  // With --spec the configuration is the spec's (recorded as "spec"), not the flags' defaults.
  opt.config = options_json(vm, from_spec ? configuration_options() : std::vector<std::string>{});
  // Without --out the run directory is derived from the configuration: say where it is.
  if (!vm.count("out")) spdlog::info("run directory: {}", opt.out.string());

  const experiments::RunOutcome outcome = experiments::run_cell(spec, opt);
  switch (outcome.status) {
    case experiments::RunStatus::busy:
      std::cerr << "dkp run: " << outcome.message << "\n";
      return kExitBusy;
    case experiments::RunStatus::interrupted:
      std::cerr << "dkp run: " << outcome.message << "\n";
      return kExitInterrupted;
    case experiments::RunStatus::reused:
      return kExitOk;
    case experiments::RunStatus::done:
      std::cout << outcome.result.dump(0) << "\n";
      return kExitOk;
  }
  return kExitError;
}

}  // namespace dkp::cli
