// The memory guard (experiments/memory_guard.hpp): the lower bound by hand for each family of
// models, the refusal's message, and no cell of the grids in experiments/ refused on a machine
// with 8 GiB to spare.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "committed_grids.hpp"
#include "experiments/estimate.hpp"
#include "experiments/grid.hpp"
#include "experiments/memory_guard.hpp"
#include "util/error.hpp"

using namespace dkp::experiments;
namespace fs = std::filesystem;

namespace {

RunSpec spec(const std::string& model, const std::string& posterior, int depth, long samples,
             long inducing, long batch) {
  RunSpec s;
  s.dataset = "yacht";
  s.model = model;
  s.set_posterior(posterior);
  s.depth = depth;
  s.protocol.train_samples = samples;
  s.protocol.inducing = inducing;
  s.protocol.batch = batch;
  return s;
}

}  // namespace

TEST_CASE("memory guard: the lower bound of each family, by hand") {
  // Global-inducing DGP, yacht's 277 training points, M = 100, full batch: per layer 2 M^2, and
  // M^2 + B x M per layer and sample.
  const auto gi = step_memory_lower_bound(spec("dgp", "global-inducing", 2, 10, 100, 10000), 277);
  CHECK(gi.bytes == doctest::Approx(8.0 * (2 * 2 * 1e4 + 10 * 2 * (1e4 + 277.0 * 100))));
  CHECK(gi.terms.find("(B = 277)") != std::string::npos);
  // The DWP and DIWP the same; the NNGP as one sample.
  CHECK(step_memory_lower_bound(spec("dwp", "gw", 2, 10, 100, 10000), 277).bytes ==
        doctest::Approx(gi.bytes));
  CHECK(step_memory_lower_bound(spec("nngp", "", 3, 10, 100, 10000), 277).bytes ==
        doctest::Approx(8.0 * (2 * 3 * 1e4 + 3 * (1e4 + 277.0 * 100))));
  // The batch and the inducing points are cut to the training set.
  CHECK(step_memory_lower_bound(spec("diwp", "", 3, 1, 1000, 100), 277).bytes ==
        doctest::Approx(8.0 * (2 * 3 * 277.0 * 277 + 3 * (277.0 * 277 + 100.0 * 277))));
  // DSVI: B x M per layer and sample; AEP one sample; the SGP one layer and B x M.
  CHECK(step_memory_lower_bound(spec("dgp", "dsvi", 5, 10, 100, 10000), 277).bytes ==
        doctest::Approx(8.0 * (2 * 5 * 1e4 + 10 * 5 * 277.0 * 100)));
  CHECK(step_memory_lower_bound(spec("dgp", "aep", 2, 10, 100, 50), 277).bytes ==
        doctest::Approx(8.0 * (2 * 2 * 1e4 + 1 * 2 * 50.0 * 100)));
  CHECK(step_memory_lower_bound(spec("sgp", "", 1, 1, 500, 10000), 277).bytes ==
        doctest::Approx(8.0 * (2 * 277.0 * 277 + 277.0 * 277)));
}

TEST_CASE("memory guard: a run above the limit is refused with the bound and the options") {
  const RunSpec big = spec("dgp", "global-inducing", 2, 100000, 100, 10000);
  try {
    check_memory(big, 277, uint64_t(24) << 30, "this process may take now");
    FAIL("not refused");
  } catch (const dkp::ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("at least 56 GiB") != std::string::npos);
    CHECK(m.find("24 GiB this process may take now") != std::string::npos);
    CHECK(m.find("--samples") != std::string::npos);
    CHECK(m.find("--max-memory") != std::string::npos);
  }
  CHECK_NOTHROW(check_memory(big, 277, uint64_t(200) << 30, "given by --max-memory"));
  CHECK_NOTHROW(check_memory(big, 277, std::nullopt, "unknown"));  // no limit known
  // The protein SGP with 50,000 inducing points (cut to the 41,157 training points).
  CHECK_THROWS_AS(check_memory(spec("sgp", "", 1, 1, 50000, 10000), 41157, uint64_t(24) << 30, "x"),
                  dkp::ConfigError);
}

TEST_CASE("memory guard: no cell of the grids in experiments/ needs 8 GiB by the bound") {
  size_t cells = 0;
  for (const auto& [file, g] : dkp::test::committed_grids()) {
    for (const RunSpec& c : g.cells) {
      const auto shape = dataset_shape(c.dataset);
      REQUIRE(shape);
      INFO(file, " ", g.profile, " ", c.label());
      CHECK_NOTHROW(check_memory(c, shape->n_train, uint64_t(8) << 30, "8 GiB"));
      ++cells;
    }
  }
  CHECK(cells > 4000);
}
