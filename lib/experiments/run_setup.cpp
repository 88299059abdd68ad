// The pieces of a run (run_setup.hpp).
#include "experiments/run_setup.hpp"

#include "data/checksums.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "data/checksums.hpp"
#include "data/datasets.hpp"
#include "data/mnist.hpp"
#include "data/root.hpp"
#include "data/toy.hpp"
#include "data/user_dataset.hpp"
#include "models/factory.hpp"
#include "models/options.hpp"
#include "util/error.hpp"
#include "util/json.hpp"
#include "util/sha256.hpp"

namespace dkp::experiments {

namespace {

std::string uci_dir_sha256(const std::filesystem::path& dir, int split) {
  util::Sha256 h;
  for (const char* f : {"data.txt", "index_features.txt", "index_target.txt"})
    h.update(util::sha256_file(dir / f));
  h.update(util::sha256_file(dir / fmt::format("index_train_{}.txt", split)));
  h.update(util::sha256_file(dir / fmt::format("index_test_{}.txt", split)));
  return h.hex_digest();
}

}  // namespace

std::string split_data_sha256(const data::UciDataset& ds, int split) {
  return uci_dir_sha256(ds.dir, split);
}

namespace {
// A user dataset's declaration under `root` (data/user_dataset.hpp); ConfigError naming the place
// when there is none.
data::UserDatasetSpec user_spec(const std::filesystem::path& root, const std::string& dataset) {
  const data::DatasetInfo info = data::dataset_info(dataset, root);
  return data::read_user_dataset_spec(info.declaration);
}
}  // namespace

std::string run_data_sha256(const std::filesystem::path& root, const std::string& dataset,
                            int split) {
  if (data::dataset_classes(dataset) > 0) return data::images_sha256(root, dataset);
  if (data::is_toy_dataset(dataset)) return data::toy_sha256();
  if (const auto d = data::find_dataset(dataset, root); d && d->kind == data::DatasetKind::User) {
    return data::user_split_sha256(user_spec(root, dataset), split);
  }
  const auto dir = root / "uci" / data::uci_info(dataset).folder / "data";
  if (!std::filesystem::is_directory(dir)) data::load_uci(root, dataset);  // its "not found" error
  return uci_dir_sha256(dir, split);
}

std::string builtin_data_damage(const std::filesystem::path& root, const std::string& dataset) {
  std::string prefix;
  if (data::dataset_classes(dataset) > 0) {
    prefix = dataset + "/";
  } else if (data::is_toy_dataset(dataset)) {
    return "";
  } else if (const auto d = data::find_dataset(dataset, root);
             !d || d->kind == data::DatasetKind::User) {
    return "";
  } else {
    prefix = "uci/" + data::uci_info(dataset).folder + "/";
  }
  const auto entries = data::parse_checksums(data::embedded_sha256sums());
  const data::VerifyReport r = data::verify_checksums(root, entries, prefix);
  if (r.passed()) return "";
  std::string what;
  auto list = [&](const std::vector<std::string>& files, const char* label) {
    if (files.empty()) return;
    if (!what.empty()) what += "; ";
    what += fmt::format("{} {}: {}", files.size(), label, files.front());
    if (files.size() > 1) what += fmt::format(" and {} more", files.size() - 1);
  };
  list(r.mismatched, "differ from data-scripts/SHA256SUMS");
  list(r.missing, "missing");
  return what;
}

RunData load_run_data(const std::filesystem::path& root, const std::string& dataset, int split,
                      const std::string& pixels, double pixel_scale, data::Scaling scaling) {
  RunData d;
  if (data::dataset_classes(dataset) > 0) {
    d.split =
        data::image_split(data::load_images(root, dataset), pixels == "standard", pixel_scale);
    d.split.dataset = dataset;
    d.split.classes = data::dataset_classes(dataset);
    d.sha256 = data::images_sha256(root, dataset);
  } else if (data::is_toy_dataset(dataset)) {
    d.split = data::toy_split(size_t(split));
    d.sha256 = data::toy_sha256();
  } else if (const auto info = data::find_dataset(dataset, root);
             info && info->kind == data::DatasetKind::User) {
    const data::UserDatasetSpec spec = user_spec(root, dataset);
    d.split = data::user_split(data::load_user_dataset(spec), split, scaling);
    d.sha256 = data::user_split_sha256(spec, split);
  } else {
    const data::UciDataset ds = data::load_uci(root, dataset);
    d.split = data::make_regression_split(ds, size_t(split), scaling);
    d.sha256 = split_data_sha256(ds, split);
  }
  return d;
}

RunData load_run_data(const std::filesystem::path& root, const RunSpec& spec) {
  const data::Scaling scaling = spec.options.choice(models::opt::kStandardise) == "test-sd"
                                    ? data::Scaling::test_sd
                                    : data::Scaling::train;
  return load_run_data(root, spec.dataset, spec.split, spec.protocol.pixels,
                       spec.protocol.pixel_scale, scaling);
}

random::Stream run_stream(const RunSpec& spec) {
  const random::Stream root(spec.protocol.seed);
  if (data::is_toy_dataset(spec.dataset))
    return root.child(spec.posterior_name(), uint64_t(spec.split));
  return root;
}

std::unique_ptr<models::Model> make_run_model(const RunSpec& spec, size_t width,
                                              const data::RegressionSplit& split,
                                              const random::Stream& run) {
  random::Stream init = run.child("init", 0);
  const models::ModelSpec mspec = model_spec(spec, width, split.classes);
  return models::make_model(mspec, split.X_train, split.y_train, init);
}

TrainedRun load_trained_run(const std::filesystem::path& dir, const std::string& data_root_option) {
  const auto manifest_path = dir / "manifest.json", checkpoint_path = dir / "checkpoint.bin";
  if (!std::filesystem::exists(manifest_path)) {
    throw ConfigError(fmt::format("{} is not a run directory: no manifest.json", dir.string()));
  }
  if (!std::filesystem::exists(checkpoint_path)) {
    throw ConfigError(fmt::format(
        "{} has no checkpoint.bin: the run has saved no trained parameters", dir.string()));
  }
  // The run's configuration: its canonical form must give back its hash.
  const util::JsonValue manifest = util::read_json_object(manifest_path);
  const std::string source = manifest_path.string();
  const std::string canonical = util::json_string(manifest, "canonical_config", source);
  const std::string manifest_hash = util::json_string(manifest, "config_hash", source);
  if (canonical.empty() || manifest_hash.empty()) {
    throw DataError(fmt::format("{}: no canonical_config or config_hash", source));
  }
  TrainedRun tr;
  tr.spec = RunSpec::parse_canonical(canonical);
  const std::string hash = tr.spec.hash();
  if (hash != manifest_hash) {
    throw DataError(fmt::format("{}: canonical_config hashes to {}, not to its config_hash {}",
                                manifest_path.string(), hash, manifest_hash));
  }
  const auto& p = tr.spec.protocol;
  const int64_t threads = util::json_integer(manifest, "threads", source, 1);
  if (threads < 1 || threads > std::numeric_limits<int>::max()) {
    throw DataError(fmt::format("{}: threads is {}, not a positive int", source, threads));
  }
  tr.threads = int(threads);

  // Data (for the standardisation and the model's shapes) and the trained parameters.
  const auto root = data::resolve_data_root(data_root_option);
  RunData data = load_run_data(root, tr.spec);
  const std::string& data_sha = data.sha256;
  std::string trained_sha = util::json_string(manifest, "data_sha256", source);
  if (trained_sha.empty()) trained_sha = data_sha;
  if (trained_sha != data_sha) {
    throw DataError(fmt::format(
        "{}: the run was trained on other data files ({} split {} now hashes to {}, the "
        "manifest says {})",
        dir.string(), tr.spec.dataset, tr.spec.split, data_sha, trained_sha));
  }
  tr.split = std::move(data.split);
  tr.model = make_run_model(tr.spec, resolve_width(p.width, tr.split.X_train.n_cols), tr.split,
                            run_stream(tr.spec));
  tr.checkpoint = training::load_checkpoint(checkpoint_path, tr.model->initial_parameters());
  // A checkpoint that records its configuration and data must be the manifest's run's.
  const auto& id = tr.checkpoint.identity;
  if ((!id.config_hash.empty() && id.config_hash != manifest_hash) ||
      (!id.data_sha256.empty() && id.data_sha256 != trained_sha)) {
    throw DataError(fmt::format(
        "{}: a checkpoint of another run (configuration {}, data {}) than {}'s ({}, {})",
        checkpoint_path.string(), id.config_hash, id.data_sha256, manifest_path.string(),
        manifest_hash, trained_sha));
  }
  if (tr.checkpoint.step < uint64_t(p.steps)) {
    spdlog::warn("{}: the checkpoint is at step {} of {} (the run has not finished)", dir.string(),
                 tr.checkpoint.step, p.steps);
  }
  return tr;
}

namespace {

std::string write_predictions(const data::RegressionSplit& split, const eval::MixtureMoments& mm,
                              const eval::RegressionMetrics* m, const arma::vec* y) {
  std::string csv = m ? "index,y,mean,variance,log_density,pit\n" : "index,mean,variance\n";
  const arma::vec mean = split.y_to_original(mm.mean);
  const arma::vec var = mm.var * split.y_std * split.y_std;
  for (arma::uword i = 0; i < mean.n_elem; ++i) {
    if (m) {
      csv += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}\n", i, (*y)[i], mean[i],
                         var[i], m->point_ll[i], m->point_pit[i]);
    } else {
      csv += fmt::format("{},{:.17g},{:.17g}\n", i, mean[i], var[i]);
    }
  }
  return csv;
}

}  // namespace

std::string predictions_csv(const data::RegressionSplit& split, const eval::MixtureMoments& mm) {
  return write_predictions(split, mm, nullptr, nullptr);
}

std::string predictions_csv(const data::RegressionSplit& split, const eval::RegressionMetrics& m,
                            const arma::vec& y_original) {
  if (y_original.n_elem != m.pred_mean.n_elem) {
    throw Error(fmt::format("predictions_csv: {} targets for {} points", y_original.n_elem,
                            m.pred_mean.n_elem));
  }
  return write_predictions(split, {m.pred_mean, m.pred_var}, &m, &y_original);
}

namespace {

// Rows `index,<lead(i)>,p_0..p_{C-1}` under the header `index,<lead_header>,p_0..`.
template <class Lead>
std::string class_rows(const arma::mat& p, const char* lead_header, Lead lead) {
  std::string csv = fmt::format("index,{}", lead_header);
  for (arma::uword c = 0; c < p.n_cols; ++c) csv += fmt::format(",p_{}", c);
  csv += '\n';
  for (arma::uword i = 0; i < p.n_rows; ++i) {
    csv += fmt::format("{},{}", i, lead(i));
    for (arma::uword c = 0; c < p.n_cols; ++c) csv += fmt::format(",{:.17g}", p(i, c));
    csv += '\n';
  }
  return csv;
}

}  // namespace

std::string class_predictions_csv(const eval::ClassificationMetrics& m, const arma::vec& labels) {
  const arma::mat& p = m.class_prob;
  if (labels.n_elem != p.n_rows || m.predicted.n_elem != p.n_rows) {
    throw Error(
        fmt::format("class_predictions_csv: {} labels for {} points", labels.n_elem, p.n_rows));
  }
  return class_rows(p, "y,predicted,log_density", [&](arma::uword i) {
    return fmt::format("{:g},{},{:.17g}", labels[i], m.predicted[i], m.point_ll[i]);
  });
}

std::string class_predictions_csv(const arma::mat& p) {
  return class_rows(p, "predicted", [&](arma::uword i) { return p.row(i).index_max(); });
}

void add_calibration(util::Json& result, const eval::Reliability& r) {
  util::Json bins = util::Json::array();
  for (arma::uword b = 0; b < r.count.n_elem; ++b) {
    util::Json bin = util::Json::object();
    bin.set("count", (unsigned long)r.count[b])
        .set("confidence", r.confidence[b])
        .set("accuracy", r.accuracy[b]);
    bins.push(std::move(bin));
  }
  result.set("test_ece", r.ece).set("test_reliability", std::move(bins));
}

void add_calibration(util::Json& result, const eval::RegressionMetrics& m) {
  for (size_t k = 0; k < eval::kCoverageLevels.size(); ++k) {
    result.set(fmt::format("test_coverage_{:.0f}", 100.0 * eval::kCoverageLevels[k]),
               m.coverage[k]);
  }
  result.set("test_calibration_error", m.calibration_error);
}

}  // namespace dkp::experiments
