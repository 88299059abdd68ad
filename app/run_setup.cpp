// What `dkp run` and `dkp predict` share (run_setup.hpp).
#include "run_setup.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "models/factory.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace dkp::cli {

size_t resolve_width(const std::string& rule, size_t d0) {
  if (rule == "input") return d0;
  if (rule == "min(input,30)") return std::min<size_t>(d0, 30);
  try {
    size_t pos = 0;
    const long w = std::stol(rule, &pos);
    if (pos == rule.size() && w > 0) return size_t(w);
  } catch (const std::exception&) {
  }
  throw ConfigError(
      fmt::format("--width '{}': expected input, min(input,30) or a positive integer", rule));
}

std::string split_data_sha256(const data::UciDataset& ds, int split) {
  util::Sha256 h;
  for (const char* f : {"data.txt", "index_features.txt", "index_target.txt"})
    h.update(util::sha256_file(ds.dir / f));
  h.update(util::sha256_file(ds.dir / fmt::format("index_train_{}.txt", split)));
  h.update(util::sha256_file(ds.dir / fmt::format("index_test_{}.txt", split)));
  return h.hex_digest();
}

std::unique_ptr<models::Model> make_run_model(const experiments::RunSpec& spec, size_t width,
                                              const data::RegressionSplit& split,
                                              const random::Stream& run) {
  random::Stream init = run.child("init", 0);
  models::ModelSpec mspec{spec.model,
                          spec.inference,
                          spec.posterior,
                          size_t(spec.depth),
                          spec.kernel,
                          width,
                          size_t(spec.protocol.inducing)};
  mspec.delta_init = spec.delta_init;
  mspec.diwp_batch_dof = spec.diwp_dof == "batch";
  mspec.sticking_the_landing = spec.stl;
  mspec.a_prime_scale = spec.a_prime_scale;
  mspec.hidden_ard = spec.hidden_ard;
  mspec.per_output_precision = models::parse_gi_precision(spec.gi_precision);
  return models::make_model(mspec, split.X_train, split.y_train, init);
}

std::string predictions_csv(const data::RegressionSplit& split, const eval::MixtureMoments& mm,
                            const arma::vec* y, const arma::vec* log_density) {
  const bool with_y = y != nullptr && log_density != nullptr;
  std::string csv = with_y ? "index,y,mean,variance,log_density\n" : "index,mean,variance\n";
  const arma::vec mean = split.y_to_original(mm.mean);
  const arma::vec var = mm.var * split.y_std * split.y_std;
  for (arma::uword i = 0; i < mean.n_elem; ++i) {
    if (with_y) {
      csv += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g}\n", i, (*y)[i], mean[i], var[i],
                         (*log_density)[i]);
    } else {
      csv += fmt::format("{},{:.17g},{:.17g}\n", i, mean[i], var[i]);
    }
  }
  return csv;
}

}  // namespace dkp::cli
