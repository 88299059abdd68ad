// The model registry: every model and posterior listed, the generic option check, the help text,
// the posterior's two names and its aliases, and every entry's builder.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "model_test_support.hpp"
#include "models/cdgp.hpp"
#include "models/factory.hpp"
#include "models/registry.hpp"
#include "util/error.hpp"

namespace dm = dkp::models;
using dm::ModelSpec;
using dm::RegistryEntry;
using Names = std::vector<std::string>;

namespace {

// The ConfigError message of check_spec(spec), or "" when it passes.
std::string error_of(const ModelSpec& spec) {
  try {
    dm::check_spec(spec);
  } catch (const dkp::ConfigError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A spec of entry `e` with kernel `kernel` that every rule but the options' accepts.
ModelSpec spec_of(const RegistryEntry& e, const std::string& kernel) {
  ModelSpec s;
  s.model = e.model;
  s.posterior = e.posterior;
  s.kernel = kernel;
  s.depth = e.min_depth == e.max_depth ? e.min_depth : 2;
  s.inducing = 5;
  return s;
}

// Every model option of the table with each valid value that sets it (numbers: 2; switches: on;
// choices: every one but the default), so a new option is tested without editing this list.
const std::vector<std::pair<std::string, std::string>>& every_option() {
  static const std::vector<std::pair<std::string, std::string>> options = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& d : dm::option_table()) {
      if (d.type == dm::OptionType::Number) out.emplace_back(d.name, "2");
      if (d.type == dm::OptionType::Switch) out.emplace_back(d.name, "on");
      if (d.type == dm::OptionType::Choice) {
        for (const auto& c : d.choices)
          if (c != d.default_value) out.emplace_back(d.name, c);
      }
    }
    return out;
  }();
  return options;
}

// "--stl mixing" or "--a-prime-scale".
std::string flag_of(const std::string& name) {
  return dm::option_decl(name).flag();
}

}  // namespace

TEST_CASE("registry: every model and posterior, in order, with its posterior key") {
  Names entries;
  for (const auto& e : dm::registry()) {
    entries.push_back(e.posterior.empty() ? e.model : e.model + " " + e.posterior);
  }
  CHECK(entries == Names{"sgp", "dgp dsvi", "dgp global-inducing", "dgp aep", "nngp", "diwp",
                         "dwp gw", "dwp agw", "dwp abgw", "cdgp dsvi", "cdgp jointly-gaussian",
                         "cdgp inducing-locations"});
  CHECK(dm::model_names() == Names{"sgp", "dgp", "nngp", "diwp", "dwp", "cdgp"});
  CHECK(dm::kernel_names() == Names{"se", "relu", "periodic"});
  CHECK(dm::posterior_names("dgp") == Names{"dsvi", "global-inducing", "aep"});
  CHECK(dm::posterior_names("dwp") == Names{"gw", "agw", "abgw"});
  CHECK(dm::posterior_names("cdgp") == dm::cdgp_posteriors());
  CHECK(dm::posterior_names("sgp").empty());
  CHECK(dm::posterior_names("nonsense").empty());
  // The canonical text's word for the axis: dgp's hashes were made with "inference".
  CHECK(dm::posterior_key("dgp") == "inference");
  for (const char* m : {"sgp", "nngp", "diwp", "dwp", "cdgp"})
    CHECK(dm::posterior_key(m) == "posterior");
  // The depth rule: sgp is single-layer.
  CHECK_THROWS_WITH_AS(dm::check_depth(dm::entry("sgp", ""), 2),
                       doctest::Contains("depth must be 1 (got 2)"), dkp::ConfigError);
  CHECK_NOTHROW(dm::check_depth(dm::entry("dgp", "dsvi"), 5));
  CHECK_THROWS_AS(dm::check_depth(dm::entry("dgp", "dsvi"), 0), dkp::ConfigError);
  // What classifies() answers, per kernel.
  const std::vector<std::tuple<std::string, std::string, std::string, bool>> classify = {
      {"sgp", "", "se", true},
      {"dgp", "dsvi", "se", true},
      {"dgp", "aep", "se", true},
      {"dgp", "global-inducing", "relu", true},
      {"dgp", "global-inducing", "se", false},
      {"nngp", "", "relu", true},
      {"nngp", "", "se", true},
      {"diwp", "", "se", true},
      {"dwp", "gw", "se", false},
      {"cdgp", "dsvi", "periodic", false}};
  for (const auto& [model, posterior, kernel, classifies] : classify) {
    CAPTURE(model);
    CAPTURE(posterior);
    CAPTURE(kernel);
    ModelSpec s;
    s.model = model;
    s.posterior = posterior;
    s.kernel = kernel;
    CHECK(dm::classifies(s) == classifies);
  }
}

TEST_CASE("registry: unknown models and posteriors, and the default posterior") {
  CHECK_THROWS_WITH_AS(dm::entry("dgpp", ""), doctest::Contains("unknown model 'dgpp' (known: sgp"),
                       dkp::ConfigError);
  CHECK_THROWS_WITH_AS(dm::entry("dgp", ""),
                       doctest::Contains("model dgp needs inference dsvi, global-inducing or aep"),
                       dkp::ConfigError);
  CHECK_THROWS_WITH_AS(dm::entry("dwp", "iw"),
                       doctest::Contains("model dwp has no posterior 'iw' (gw, agw or abgw)"),
                       dkp::ConfigError);
  CHECK_THROWS_WITH_AS(dm::entry("sgp", "gw"), doctest::Contains("model sgp takes no posterior"),
                       dkp::ConfigError);
  // make_model's default posterior; run specs and grids name it.
  CHECK(dm::entry("dwp", "").posterior == "gw");
  CHECK(dm::entry("cdgp", "").posterior == "dsvi");
  CHECK_THROWS_WITH_AS(dm::entry("dwp", "", /*allow_default=*/false),
                       doctest::Contains("model dwp needs posterior gw, agw or abgw"),
                       dkp::ConfigError);
  CHECK(dm::entry("sgp", "", false).model == "sgp");
}

TEST_CASE("registry: the posterior's other name (inference) and the posteriors' aliases") {
  // A posterior alias names its entry.
  CHECK(dm::find_entry("cdgp", "mean-field") == dm::find_entry("cdgp", "dsvi"));
  CHECK(dm::find_entry("cdgp", "mean-field") != nullptr);
  CHECK(dm::find_entry("dgp", "mean-field") == nullptr);
  CHECK(dm::posterior_spellings("cdgp") ==
        Names{"dsvi", "mean-field", "jointly-gaussian", "inducing-locations"});
  // The DGP's posterior in either field of a spec.
  ModelSpec s;
  s.model = "dgp";
  s.inference = "aep";
  CHECK(dm::posterior_of(s) == "aep");
  CHECK(dm::check_spec(s).posterior == "aep");
  s.inference.clear();
  s.posterior = "aep";
  CHECK(dm::check_spec(s).posterior == "aep");
  s.inference = "aep";
  CHECK(dm::posterior_of(s) == "aep");
  s.inference = "dsvi";  // two different values for one axis
  CHECK_THROWS_WITH_AS(dm::posterior_of(s), doctest::Contains("differ"), dkp::ConfigError);
  // Other models read `posterior` only (dkp bench gives every model --inference global-inducing).
  ModelSpec d;
  d.model = "dwp";
  d.inference = "global-inducing";
  d.posterior = "agw";
  CHECK(dm::check_spec(d).posterior == "agw");
  d.model = "sgp";
  d.depth = 1;
  d.posterior.clear();
  CHECK(dm::check_spec(d).model == "sgp");
  // make_model builds from an alias.
  const dkp::test::Tiny data = dkp::test::tiny_data(12, 1, 3);
  ModelSpec c;
  c.model = "cdgp";
  c.posterior = "mean-field";
  c.kernel = "periodic";
  c.inducing = 4;
  dkp::random::Stream init(1);
  const auto model = dm::make_model(c, data.X, data.y, init);
  const auto* cdgp = dynamic_cast<const dm::CompositionalDgp*>(model.get());
  REQUIRE(cdgp != nullptr);
  CHECK(cdgp->config().posterior == "dsvi");
  CHECK(cdgp->config().last_periodic);
}

TEST_CASE("registry: the generic option check accepts an option where listed, else names it") {
  std::set<std::string> flags;
  for (const auto& d : dm::option_table()) {
    flags.insert(d.flag());
    CHECK(!d.summary.empty());
    CHECK(!d.help.empty());
    CHECK(dm::canonical_value(d, d.default_value, "") == d.default_value);
    // A switch's flag is its presence (dkp run --freeze-a-prime), so it must default to off;
    // an option on by default is a choice of on and off.
    if (d.type == dm::OptionType::Switch) CHECK(d.default_value == "off");
  }
  CHECK(flags.size() == dm::option_table().size());
  CHECK(every_option().size() == dm::option_table().size() + 1);  // stl: off and mixing
  size_t accepted = 0, rejected = 0;
  for (const auto& e : dm::registry()) {
    for (const auto& kernel : e.kernels) {
      const ModelSpec plain = spec_of(e, kernel);
      CAPTURE(dm::entry_label(e, kernel));
      CHECK(error_of(plain).empty());
      for (const auto& [option, value] : every_option()) {
        CAPTURE(option);
        CAPTURE(value);
        ModelSpec s = plain;
        CHECK(!s.options.is_set(option));
        s.options.set(option, value);
        CHECK(s.options.is_set(option));
        const std::string msg = error_of(s);
        if (dm::accepts(e, option, kernel, value)) {
          ++accepted;
          CHECK(msg.empty());
        } else {
          ++rejected;
          CHECK(has(msg, flag_of(option)));
          CHECK(has(msg, "is not an option of " + dm::entry_label(e, kernel) + ";"));
          CHECK(has(msg, "only "));
          CHECK_THROWS_AS(dm::check_model_options(s), dkp::ConfigError);
        }
      }
    }
  }
  CHECK(accepted == 42);  // sgp 3, dgp dsvi 5, gi 2 + 1, aep 1, nngp 1, diwp 4 x 2 + 1, dwp 2 + 7 +
                          // 7, cdgp jointly-gaussian 2 x 2 (its two kernels)
  CHECK(rejected > 100);
  // Who takes what, as the messages say it.
  const std::vector<
      std::tuple<std::string, std::string, std::string, std::string, std::string, std::string>>
      cases = {
          {"nngp", "", "se", "init_variance", "2", "only sgp and dgp --inference dsvi take it"},
          {"dgp", "global-inducing", "relu", "hidden_ard", "on",
           "only dgp --inference global-inducing --kernel se takes it"},
          {"dgp", "dsvi", "se", "gi_precision", "per-output",
           "only dgp --inference global-inducing --kernel se takes it"},
          {"dgp", "global-inducing", "se", "mu_param", "bayesfunc", "only dwp takes it"},
          {"sgp", "", "se", "stl", "off", "only dwp takes it"},
          {"dwp", "gw", "se", "stl", "mixing",
           "--stl mixing (sticking the landing in log Q) is not an option of dwp --posterior gw; "
           "only dwp --posterior agw or abgw takes it"},
          {"dwp", "gw", "se", "a_prime_scale", "2", "only dwp --posterior agw or abgw take"},
          {"nngp", "", "relu", "delta_init", "2", "only diwp takes it"},
          {"dwp", "abgw", "se", "diwp_dof", "batch", "only diwp takes it"},
      };
  for (const auto& [model, posterior, kernel, option, value, text] : cases) {
    CAPTURE(model);
    CAPTURE(option);
    ModelSpec s = spec_of(dm::entry(model, posterior), kernel);
    s.options.set(option, value);
    CHECK(has(error_of(s), text));
  }
  // Number options must be positive and finite, before anything else.
  ModelSpec bad = spec_of(dm::entry("dwp", "agw"), "se");
  bad.options.set_number("a_prime_scale", -1.0);
  CHECK(has(error_of(bad), "--a-prime-scale must be positive and finite (got -1)"));
  bad = spec_of(dm::entry("nngp", ""), "se");
  bad.options.set_number("delta_init", 0.0);
  CHECK(has(error_of(bad), "--delta-init must be positive and finite"));
}

TEST_CASE("options: values are read, checked and written in one canonical form") {
  dm::OptionValues v;
  CHECK(v.number(dm::opt::kDeltaInit) == dm::kDiwpDeltaInit);
  CHECK(v.text(dm::opt::kDeltaInit) == "54.598150033144236");
  CHECK(!v.is_set(dm::opt::kDeltaInit));
  v.set(dm::opt::kAPrimeScale, "0.10");
  CHECK(v.text(dm::opt::kAPrimeScale) == "0.1");
  CHECK(v.number(dm::opt::kAPrimeScale) == 0.1);
  v.set(dm::opt::kAPrimeScale, "1e0");  // the default: not set
  CHECK(!v.is_set(dm::opt::kAPrimeScale));
  CHECK(v.set_values().empty());
  v.set(dm::opt::kHiddenArd, "true");
  CHECK(v.on(dm::opt::kHiddenArd));
  CHECK(v.text(dm::opt::kHiddenArd) == "on");
  CHECK_THROWS_WITH_AS(v.set(dm::opt::kStl, "yes", "options.stl"),
                       "options.stl must be on, off or mixing (got 'yes')", dkp::ConfigError);
  CHECK_THROWS_WITH_AS(v.set(dm::opt::kAPrimeScale, "big"),
                       doctest::Contains("--a-prime-scale: 'big' is not a number"),
                       dkp::ConfigError);
  CHECK_THROWS_WITH_AS(v.set("stl_mix", "on", "x.yaml:3"),
                       doctest::Contains("x.yaml:3: no model option 'stl_mix'"), dkp::ConfigError);
  CHECK_THROWS_AS(v.number(dm::opt::kStl), std::logic_error);  // read as the wrong type
  CHECK_THROWS_AS(v.text("nope"), std::logic_error);
  // The hash baseline differs from the default for delta_init alone.
  for (const auto& d : dm::option_table()) {
    CAPTURE(d.name);
    CHECK((d.hash_baseline == d.default_value) == (d.name != dm::opt::kDeltaInit));
  }
}

TEST_CASE("registry: the help text lists every model, posterior, kernel and option") {
  const std::string help = dm::registry_help();
  INFO(help);
  for (const auto& e : dm::registry()) {
    CHECK(has(help, "  " + dm::entry_label(e) + " "));
    CHECK(has(help, e.summary));
    for (const auto& k : e.kernels) CHECK(has(help, k));
    for (const auto& a : e.aliases) CHECK(has(help, "also named " + a));
  }
  for (const auto& d : dm::option_table()) {
    CHECK(has(help, "  " + d.flag() + " "));
    CHECK(has(help, d.summary));
  }
  CHECK(has(help, "--posterior"));
  CHECK(has(help, "--inference"));
  CHECK(has(help, "depth 1 (a single-layer GP"));
  CHECK(has(help, "--hidden-ard (kernel se)"));
  CHECK(has(help,
            "--init-lengthscale   the SE kernels' initial lengthscales: sgp and dgp "
            "--inference dsvi\n"));
}

TEST_CASE("registry: every entry builds with every kernel; classification where it classifies") {
  const dkp::test::Tiny data = dkp::test::tiny_data(12, 2, 5);
  const dkp::test::Tiny line = dkp::test::tiny_data(12, 1, 5);
  arma::vec labels(12);
  for (arma::uword i = 0; i < labels.n_elem; ++i) labels[i] = double(i % 3);
  for (const auto& e : dm::registry()) {
    for (const auto& kernel : e.kernels) {
      CAPTURE(dm::entry_label(e, kernel));
      const ModelSpec s = spec_of(e, kernel);
      const auto& d = e.model == "cdgp" ? line : data;  // one-dimensional layers
      dkp::random::Stream init(7);
      const auto model = dm::make_model(s, d.X, d.y, init);
      REQUIRE(model != nullptr);
      CHECK(!model->describe().empty());
      CHECK(!model->initial_parameters().empty());
      ModelSpec c = s;
      c.classes = 3;
      const bool classifies = std::find(e.classifies_with.begin(), e.classifies_with.end(),
                                        kernel) != e.classifies_with.end();
      CHECK(dm::classifies(c) == classifies);
      if (classifies) {
        dkp::random::Stream init2(7);
        CHECK(dm::make_model(c, data.X, labels, init2) != nullptr);
      } else {
        CHECK(has(error_of(c), "classification (3 classes) is not available for"));
      }
    }
  }
  // The compositional DGP takes one input feature (dkp toy's).
  ModelSpec c;
  c.model = "cdgp";
  c.kernel = "se";
  dkp::random::Stream init(7);
  CHECK_THROWS_WITH_AS(dm::make_model(c, data.X, data.y, init),
                       doctest::Contains("one input feature"), dkp::ConfigError);
}
