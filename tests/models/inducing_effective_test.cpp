// The inducing points a model was built with (models::inducing_points) when more were asked for
// than the training set has: every model uses the N points (or their distinct rows) and says so
// with a warning, the global-inducing ones (DGP, DWP, NNGP, DIWP) as the SGP and DSVI/AEP DGPs.
#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "model_test_support.hpp"
#include "models/factory.hpp"
#include "models/model.hpp"

namespace {

// The warnings logged while it lives.
struct CaptureLog {
  std::ostringstream text;
  std::shared_ptr<spdlog::logger> old = spdlog::default_logger();
  CaptureLog() {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::warn);
    spdlog::set_default_logger(logger);
  }
  ~CaptureLog() { spdlog::set_default_logger(old); }
};

}  // namespace

TEST_CASE("inducing points above N: every model uses N and warns") {
  const auto data = dkp::test::tiny_data(24, 2, 41);
  struct Case {
    const char* model;
    const char* inference;
    const char* posterior;
    size_t depth;
    const char* kernel;
  };
  for (const Case& c : {Case{"sgp", "", "", 1, "se"}, Case{"dgp", "dsvi", "", 2, "se"},
                        Case{"dgp", "aep", "", 2, "se"},
                        Case{"dgp", "global-inducing", "", 2, "se"}, Case{"dwp", "", "gw", 2, "se"},
                        Case{"nngp", "", "", 2, "relu"}, Case{"diwp", "", "", 2, "relu"}}) {
    CAPTURE(c.model);
    CAPTURE(c.inference);
    dkp::models::ModelSpec spec{c.model, c.inference, c.posterior, c.depth, c.kernel, 2, 500};
    dkp::random::Stream init(42);
    CaptureLog log;
    const auto model = dkp::models::make_model(spec, data.X, data.y, init);
    CHECK(dkp::models::inducing_points(*model) == 24);
    const std::string warned = log.text.str();
    CAPTURE(warned);
    CHECK(warned.find("500 inducing points requested") != std::string::npos);
  }
  // Fewer than N: as asked, no warning.
  dkp::models::ModelSpec spec{"dgp", "global-inducing", "", 2, "se", 2, 10};
  dkp::random::Stream init(43);
  CaptureLog log;
  const auto model = dkp::models::make_model(spec, data.X, data.y, init);
  CHECK(dkp::models::inducing_points(*model) == 10);
  CHECK(log.text.str().empty());
}
