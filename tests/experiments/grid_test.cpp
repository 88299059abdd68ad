// Grid schema, expansion, hashing and command rendering.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "data/datasets.hpp"
#include "data/user_dataset.hpp"
#include "experiments/grid.hpp"
#include "experiments/tables_job.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

using namespace dkp::experiments;

namespace {

// A small valid grid; line numbers matter for the error tests below (line 1 is "name: t").
const std::string kGrid = R"(name: t
family: agw-uci
protocol:
  steps: 2000
  lr_schedule: [[0, 0.01], [1000, 0.001]]
  kl_anneal: 100
  train_samples: 10
  test_samples: 100
  inducing: 100
  batch: 10000
  kernel: se
  seed: 3
axes:
  datasets: [boston, protein]
  splits: all
  depths: [2, 3]
  models:
    - {model: dgp, inference: global-inducing}
    - {model: dwp, posterior: [gw, agw]}
    - {model: sgp, inducing: [100, 500]}
overrides:
  - when: {dataset: protein}
    set: {train_samples: 1}
profiles:
  quick:
    description: two splits
    protocol: {steps: 200, lr_schedule: [[0, 0.01], [100, 0.001]]}
    axes: {splits: [0, 1]}
)";

// Replaces the first occurrence of `from` by `to` in the grid text.
std::string with(const std::string& from, const std::string& to) {
  std::string s = kGrid;
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  s.replace(pos, from.size(), to);
  return s;
}

// Parses and returns the ConfigError message ("" when it parsed).
std::string error_of(const std::string& text, const std::string& profile = "full") {
  try {
    parse_grid(text, "grids/t.yaml", profile);
  } catch (const dkp::ConfigError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("grid schema: a typo'd key fails with file:line and the key name") {
  const auto msg = error_of(with("  steps: 2000", "  stpes: 2000"));
  INFO(msg);
  CHECK(has(msg, "grids/t.yaml:4:"));
  CHECK(has(msg, "protocol.stpes"));
  CHECK(has(msg, "unknown key"));
  CHECK(has(msg, "did you mean 'steps'"));
  // At the top level and inside a model entry too.
  const auto top = error_of(with("family: agw-uci", "famliy: agw-uci"));
  CHECK(has(top, "grids/t.yaml:2:"));
  CHECK(has(top, "'famliy'"));
  const auto entry = error_of(with("{model: dgp, inference:", "{model: dgp, infrence:"));
  INFO(entry);
  CHECK(has(entry, "grids/t.yaml:18:"));
  CHECK(has(entry, "axes.models[0].infrence"));
}

TEST_CASE("grid schema: a wrong type fails with file:line and the key name") {
  const auto msg = error_of(with("  steps: 2000", "  steps: many"));
  INFO(msg);
  CHECK(has(msg, "grids/t.yaml:4:"));
  CHECK(has(msg, "protocol.steps"));
  CHECK(has(msg, "expected an integer, got 'many'"));
  const auto list = error_of(with("  depths: [2, 3]", "  depths: {a: 1}"));
  INFO(list);
  CHECK(has(list, "grids/t.yaml:16:"));
  CHECK(has(list, "axes.depths"));
  const auto lr = error_of(with("[1000, 0.001]", "[1000, fast]"));
  INFO(lr);
  CHECK(has(lr, "grids/t.yaml:5:"));
  CHECK(has(lr, "protocol.lr_schedule[1][1]"));
}

TEST_CASE("grid schema: impossible values fail with file:line and the key name") {
  const auto ind = error_of(with("  inducing: 100", "  inducing: 0"));
  INFO(ind);
  CHECK(has(ind, "grids/t.yaml:9:"));
  CHECK(has(ind, "protocol.inducing"));
  CHECK(has(ind, "impossible"));
  // A schedule step beyond the number of steps.
  const auto lr = error_of(with("[1000, 0.001]", "[5000, 0.001]"));
  INFO(lr);
  CHECK(has(lr, "grids/t.yaml:5:"));
  CHECK(has(lr, "lr_schedule"));
  CHECK(has(lr, "5000"));
  // A split that protein does not have.
  const auto split = error_of(with("  splits: all", "  splits: [0, 7]"));
  INFO(split);
  CHECK(has(split, "grids/t.yaml:15:"));
  CHECK(has(split, "split 7 does not exist for protein"));
  // Unknown names.
  CHECK(has(error_of(with("posterior: [gw, agw]", "posterior: [gw, xgw]")), "'xgw' is not one of"));
  CHECK(has(error_of(with("[boston, protein]", "[boston, bostn]")), "unknown dataset 'bostn'"));
  CHECK(has(error_of(with("{model: dgp, inference: global-inducing}", "{model: dgp}")),
            "model dgp needs 'inference'"));
  CHECK(has(error_of(with("{model: sgp, inducing: [100, 500]}", "{model: sgp, posterior: gw}")),
            "model sgp takes no posterior"));
  // An error inside an unselected profile still fails.
  const auto prof = error_of(with("axes: {splits: [0, 1]}", "axes: {splits: [0, 1], dephts: [2]}"));
  INFO(prof);
  CHECK(has(prof, "profiles.quick.axes.dephts"));
  CHECK(has(error_of(kGrid, "nosuch"), "no profile 'nosuch'"));
  // A profile's `tables` is true or false.
  const auto tab = error_of(with("    description: two splits", "    tables: yes"));
  INFO(tab);
  CHECK(has(tab, "grids/t.yaml:26:"));
  CHECK(has(tab, "profiles.quick.tables"));
  CHECK(has(tab, "'yes' is not one of: true, false"));
}

TEST_CASE("grid expansion: counts, order, overrides and profiles") {
  const Grid g = parse_grid(kGrid, "grids/t.yaml");
  CHECK(g.name == "t");
  CHECK(g.family == "agw-uci");
  // boston 20 splits + protein 5 splits, each: dgp x 2 depths + dwp x 2 posteriors x 2 depths
  // + sgp x 2 inducing (depth 1 only).
  CHECK(g.cells.size() == (20 + 5) * (2 + 4 + 2));
  // Split-major order: the first cells are all split 0.
  for (size_t i = 0; i < 16; ++i) CHECK(g.cells[i].split == 0);
  std::set<std::string> hashes;
  for (const auto& c : g.cells) {
    hashes.insert(c.hash());
    CHECK(c.protocol.train_samples == (c.dataset == "protein" ? 1 : 10));
    if (c.model == "sgp") CHECK(c.depth == 1);
    CHECK(c.kernel == "se");
    CHECK(c.protocol.seed == 3);
  }
  CHECK(hashes.size() == g.cells.size());
  const auto sgp500 = std::count_if(g.cells.begin(), g.cells.end(), [](const RunSpec& c) {
    return c.model == "sgp" && c.protocol.inducing == 500;
  });
  CHECK(sgp500 == 25);

  CHECK(g.tabulated_profiles.empty());
  const Grid q = parse_grid(kGrid, "grids/t.yaml", "quick");
  CHECK(q.profile == "quick");
  CHECK(q.profile_description == "two splits");
  CHECK(q.cells.size() == 2 * 2 * 8);
  for (const auto& c : q.cells) {
    CHECK(c.protocol.steps == 200);
    CHECK(c.protocol.lr_schedule == std::vector<LrPoint>{{0, 0.01}, {100, 0.001}});
  }
  // `tables: true` names the profile among the tabulated ones, whichever profile is loaded; it
  // changes no cell.
  const std::string tabulated =
      with("    description: two splits", "    description: two splits\n    tables: true");
  CHECK(parse_grid(tabulated, "grids/t.yaml").tabulated_profiles ==
        std::vector<std::string>{"quick"});
  const Grid tq = parse_grid(tabulated, "grids/t.yaml", "quick");
  CHECK(tq.tabulated_profiles == std::vector<std::string>{"quick"});
  REQUIRE(tq.cells.size() == q.cells.size());
  for (size_t i = 0; i < q.cells.size(); ++i) CHECK(tq.cells[i].hash() == q.cells[i].hash());
  CHECK(parse_grid(
            with("    description: two splits", "    description: two splits\n    tables: false"),
            "grids/t.yaml")
            .tabulated_profiles.empty());
}

TEST_CASE("grid: keep_splits_below keeps the first splits of every dataset and says so") {
  Grid g = parse_grid(kGrid, "grids/t.yaml");
  const size_t per_split = 8;  // dgp x 2 depths + dwp x 2 posteriors x 2 depths + sgp x 2
  keep_splits_below(g, 3);
  CHECK(g.split_limit == 3);
  CHECK(g.cells.size() == 2 * 3 * per_split);  // boston and protein, splits 0-2
  std::set<int> splits;
  for (const auto& c : g.cells) splits.insert(c.split);
  CHECK(splits == std::set<int>{0, 1, 2});
  // The cells kept are the grid's own, in its order.
  const Grid all = parse_grid(kGrid, "grids/t.yaml");
  std::vector<std::string> expect;
  for (const auto& c : all.cells)
    if (c.split < 3) expect.push_back(c.hash());
  std::vector<std::string> got;
  for (const auto& c : g.cells) got.push_back(c.hash());
  CHECK(got == expect);
  // protein has 5 splits: a limit above them keeps all of protein's.
  Grid h = parse_grid(kGrid, "grids/t.yaml");
  keep_splits_below(h, 6);
  CHECK(h.cells.size() == (6 + 5) * per_split);
  CHECK_THROWS_AS(keep_splits_below(h, 0), dkp::ConfigError);
}

TEST_CASE("grid: a profile of seed replicates") {
  const std::string seed = with("  quick:\n", R"(  seed1:
    tables: true
    replicates: true
    protocol: {seed: 1}
  quick:
)");
  CHECK(!parse_grid(seed, "r.yaml").replicates);
  const Grid g = parse_grid(seed, "r.yaml", "seed1");
  CHECK(g.replicates);
  CHECK(g.cells.front().protocol.seed == 1);
  CHECK(g.cells.size() == parse_grid(seed, "r.yaml").cells.size());
  auto fails = [&](const std::string& from, const std::string& to, const std::string& msg) {
    std::string text = seed;
    text.replace(text.find(from), from.size(), to);
    CHECK_THROWS_WITH_AS(parse_grid(text, "r.yaml"), doctest::Contains(msg.c_str()),
                         dkp::ConfigError);
  };
  fails("    tables: true\n", "", "needs tables: true");
  fails("{seed: 1}", "{seed: 1, steps: 20}", "replicates set the seed and nothing else");
  fails("    protocol: {seed: 1}\n", "", "replicates set the seed and nothing else");
}

TEST_CASE("config hash: stable for the same spec, different for a changed step count") {
  const Grid a = parse_grid(kGrid, "grids/t.yaml");
  const Grid b = parse_grid(kGrid, "other/name.yaml");
  REQUIRE(a.cells.size() == b.cells.size());
  for (size_t i = 0; i < a.cells.size(); ++i) CHECK(a.cells[i].hash() == b.cells[i].hash());

  RunSpec s = a.cells.front();
  CHECK(s.hash().size() == 16);
  CHECK(s.hash().find_first_not_of("0123456789abcdef") == std::string::npos);
  RunSpec t = s;
  t.grid = "elsewhere";  // the grid name is not part of the configuration
  CHECK(t.hash() == s.hash());
  t.protocol.steps += 1;
  CHECK(t.hash() != s.hash());
  RunSpec u = s;
  u.protocol.lr_schedule.back().lr = 0.002;
  CHECK(u.hash() != s.hash());
  RunSpec v = s;
  v.split = 1;
  CHECK(v.hash() != s.hash());
  // dkp run's extra model options (e.g. --delta-init) join the hash only when set: as the last
  // line of the canonical form, and as an option with its value on the command line.
  const auto ends_with_line = [](const RunSpec& r, const std::string& line) {
    const std::string c = r.canonical();
    return c.size() >= line.size() && c.compare(c.size() - line.size(), line.size(), line) == 0;
  };
  const auto option_value = [](const RunSpec& r, const std::string& opt) -> std::string {
    const auto args = r.run_args("results/runs", {});
    const auto at = std::find(args.begin(), args.end(), opt);
    return at == args.end() || at + 1 == args.end() ? "<absent>" : *(at + 1);
  };
  RunSpec w = s;
  w.model = "diwp";
  w.inference.clear();
  RunSpec w1 = w;
  w.options.set_number("delta_init", 100.0);
  CHECK(w.hash() != s.hash());
  CHECK(ends_with_line(w, "delta_init=100\n"));
  // The DIWP's delta_init joins the hash unless it is 1, the first default: results computed at
  // 1 keep their hash, and the default e^4 gets its own.
  w1.options.set_number("delta_init", 1.0);
  CHECK(w1.canonical().find("delta_init") == std::string::npos);
  RunSpec we = w1;
  we.options.set_number("delta_init", dkp::models::kDiwpDeltaInit);
  CHECK(we.hash() != w1.hash());
  CHECK(ends_with_line(we, "delta_init=54.598150033144236\n"));
  CHECK(option_value(we, "--delta-init") == "54.598150033144236");
  // Other models carry the default but never print it.
  CHECK(s.options.number("delta_init") == dkp::models::kDiwpDeltaInit);
  CHECK(s.canonical().find("delta_init") == std::string::npos);
  std::vector<std::string> stl_hashes{s.hash(), w.hash()};
  for (const std::string stl : {"off", "mixing"}) {
    CAPTURE(stl);
    RunSpec x = s;
    x.options.set("stl", stl);
    for (const std::string& other : stl_hashes) CHECK(x.hash() != other);
    stl_hashes.push_back(x.hash());
    CHECK(ends_with_line(x, "stl=" + stl + "\n"));
    CHECK(option_value(x, "--stl") == stl);
  }
  RunSpec y = s;
  y.options.set_number("a_prime_scale", 0.1);
  CHECK(y.hash() != s.hash());
  CHECK(ends_with_line(y, "a_prime_scale=0.1\n"));
  RunSpec mu = s;
  mu.options.set("mu_param", "bayesfunc");
  CHECK(mu.hash() != s.hash());
  CHECK(ends_with_line(mu, "mu_param=bayesfunc\n"));
  CHECK(option_value(mu, "--mu-param") == "bayesfunc");
  CHECK(option_value(s, "--mu-param") == "<absent>");
  RunSpec h = s;
  h.options.set_switch("hidden_ard", true);
  CHECK(h.hash() != s.hash());
  CHECK(ends_with_line(h, "hidden_ard=on\n"));
  CHECK(option_value(h, "--hidden-ard") != "<absent>");
  h.options.set("gi_precision", "per-output");
  CHECK(ends_with_line(h, "gi_precision=per-output\n"));
  CHECK(option_value(h, "--gi-precision") == "per-output");
  CHECK(option_value(s, "--gi-precision") == "<absent>");
  CHECK(option_value(s, "--stl") == "<absent>");

  // Pinned: changing the canonical form orphans every stored result, so it must be deliberate.
  RunSpec g;
  g.grid = "x";
  g.dataset = "boston";
  g.split = 0;
  g.model = "dwp";
  g.posterior = "agw";
  g.depth = 5;
  g.kernel = "se";
  g.protocol = {20000, {{0, 0.01}, {10000, 0.001}}, 1000, 10, 100, 100, 10000, "input", 0};
  CHECK(g.canonical() ==
        "dkp-run-v1\ndataset=boston\nsplit=0\nmodel=dwp\ninference=\nposterior=agw\ndepth=5\n"
        "kernel=se\nsteps=20000\nlr_schedule=0:0.01,10000:0.001\nkl_anneal=1000\n"
        "train_samples=10\ntest_samples=100\ninducing=100\nbatch=10000\nwidth=input\nseed=0\n");
  CHECK(g.hash() == dkp::util::sha256_hex(g.canonical()).substr(0, 16));
}

TEST_CASE("grid: a model entry's initial kernel values reach only its cells") {
  const Grid g = parse_grid(with("    - {model: sgp, inducing: [100, 500]}",
                                 "    - {model: sgp, inducing: [100, 500], options: "
                                 "{init_lengthscale: 2, init_variance: 3}}"),
                            "grids/t.yaml");
  size_t sgp = 0;
  for (const RunSpec& c : g.cells) {
    const bool is_sgp = c.model == "sgp";
    sgp += is_sgp;
    CHECK(c.options.number("init_lengthscale") == (is_sgp ? 2.0 : 0.0));
    CHECK(c.options.number("init_variance") == (is_sgp ? 3.0 : 0.0));
  }
  CHECK(sgp > 0);
  CHECK(error_of(with("    - {model: sgp, inducing: [100, 500]}",
                      "    - {model: sgp, inducing: [100, 500], options: {init_variance: -1}}"))
            .find("init_variance") != std::string::npos);
  // A model that has no such initial value refuses it.
  CHECK(error_of(with("{model: dgp, inference: global-inducing}",
                      "{model: dgp, inference: global-inducing, options: {init_lengthscale: 2}}"))
            .find("sgp and dgp --inference dsvi") != std::string::npos);
}

TEST_CASE("grid options: a sweep applies where a model takes each value, and keeps the hashes") {
  const Grid base = parse_grid(kGrid, "grids/t.yaml");
  // A profile sweeping two DWP options: the GW takes stl on and off but not mixing, and has no A'.
  const std::string sweep = kGrid +
                            "  ablation:\n"
                            "    axes: {splits: [0], options: {stl: [on, mixing], "
                            "a_prime_scale: [1, 10]}}\n";
  const Grid g = parse_grid(sweep, "grids/t.yaml", "ablation");
  std::map<std::string, int> per_label;
  std::set<std::string> base_hashes;
  for (const auto& c : base.cells) base_hashes.insert(c.hash());
  size_t shared = 0;
  for (const auto& c : g.cells) {
    per_label[c.model_label()]++;
    shared += base_hashes.count(c.hash());
    if (c.model_label() != "dwp-agw") CHECK(c.options.text("a_prime_scale") == "1");
    if (c.model_label() != "dwp-agw") CHECK(c.options.text("stl") == "on");
  }
  // Per split-0 dataset (2) and depth (2): dgp 1, dwp-gw 1, dwp-agw 2 x 2, sgp 2 (depth 1).
  CHECK(per_label["dgp-global-inducing"] == 4);
  CHECK(per_label["dwp-gw"] == 4);
  CHECK(per_label["dwp-agw"] == 16);
  CHECK(per_label["sgp-m100"] == 2);
  // The cells at the defaults are the full profile's (same hashes); the others are new.
  CHECK(shared == 4 + 4 + 4 + 2 + 2);
  std::set<std::string> canon;
  for (const auto& c : g.cells) canon.insert(c.canonical());
  CHECK(canon.size() == g.cells.size());
  CHECK(canon.count([&] {
    for (const auto& c : g.cells)
      if (c.model_label() == "dwp-agw" && c.options.is_set("stl") &&
          c.options.is_set("a_prime_scale"))
        return c.canonical();
    return std::string();
  }()) == 1);
  for (const auto& c : g.cells) {
    if (c.model_label() == "dwp-agw" && c.options.text("stl") == "mixing" &&
        c.options.text("a_prime_scale") == "10") {
      CHECK(has(c.canonical(), "stl=mixing\na_prime_scale=10\n"));
      CHECK(has(c.command_line("dkp", "results/runs"), "--stl mixing --a-prime-scale 10"));
    }
  }
  // protocol.options: a fixed value, where a model takes it; a model entry's must be taken.
  const Grid p = parse_grid(with("  seed: 3", "  seed: 3\n  options: {stl: off}"), "grids/t.yaml");
  for (const auto& c : p.cells) CHECK(c.options.is_set("stl") == (c.model == "dwp"));
  CHECK(has(error_of(with("{model: dgp, inference: global-inducing}",
                          "{model: dgp, inference: global-inducing, options: {stl: off}}")),
            "--stl (sticking the landing in log Q) is not an option of dgp --inference "
            "global-inducing"));
  CHECK(has(error_of(with("{model: dwp, posterior: [gw, agw]}",
                          "{model: dwp, posterior: [gw, agw], options: {stl: mixing}}")),
            "--stl mixing (sticking the landing in log Q) is not an option of dwp --posterior gw"));
  // Errors name file:line and the key.
  const std::string typo = error_of(with("  seed: 3", "  seed: 3\n  options: {a_prime_scal: 2}"));
  CHECK(has(typo, "grids/t.yaml:13:"));
  CHECK(has(typo, "protocol.options.a_prime_scal"));
  CHECK(has(typo, "did you mean 'a_prime_scale'"));
  CHECK(has(error_of(with("  seed: 3", "  seed: 3\n  options: {stl: [on, yes]}")),
            "protocol.options.stl[1] must be on, off or mixing (got 'yes')"));
  CHECK(has(error_of(with("  seed: 3", "  seed: 3\n  options: {stl: [off, off]}")),
            "a value is listed twice"));
  CHECK(has(error_of(with("  seed: 3", "  seed: 3\n  options: {a_prime_scale: -2}")),
            "positive and finite"));
  // An option no cell takes is an error, not a silent no-op.
  CHECK(has(error_of(with("  seed: 3", "  seed: 3\n  options: {delta_init: 2}")),
            "no cell of the grid takes option delta_init"));
}

TEST_CASE("grid over a user dataset: its fingerprint joins every cell's hash") {
  namespace fs = std::filesystem;
  const fs::path root = dkp::test::temp_dir("grid-user");
  dkp::data::write_example_datasets(root);
  const std::string text = with("datasets: [boston, protein]", "datasets: [friedman]");
  const Grid g = parse_grid(text, "grids/t.yaml", "full", root);
  REQUIRE(g.cells.size() ==
          5 * (2 + 2 * 2) + 5 * 2);  // 5 splits: dgp, dwp x 2, x 2 depths; sgp x 2
  const std::string fp = dkp::data::dataset_info("friedman", root).fingerprint;
  for (const auto& c : g.cells) {
    CHECK(c.data_fingerprint == fp);
    CHECK(has(c.canonical(), "\ndata=" + fp + "\n"));
    CHECK(RunSpec::parse_canonical(c.canonical()).hash() == c.hash());
  }
  // Without the root that declares it, the name is unknown, and the message says where to look.
  CHECK(has(error_of(text), "datasets/friedman.yaml"));
  // A split the rule does not have.
  const std::string bad =
      with("datasets: [boston, protein]\n  splits: all", "datasets: [friedman]\n  splits: [7]");
  try {
    parse_grid(bad, "grids/t.yaml", "full", root);
    FAIL("no error");
  } catch (const dkp::ConfigError& e) {
    CHECK(has(e.what(), "split 7 does not exist for friedman (splits 0..4)"));
  }
}

TEST_CASE("the posterior's two names: inference and posterior give the same cells and hashes") {
  const Grid a = parse_grid(kGrid, "grids/t.yaml");
  const Grid b = parse_grid(
      with("{model: dgp, inference: global-inducing}", "{model: dgp, posterior: global-inducing}"),
      "grids/t.yaml");
  const Grid c =
      parse_grid(with("{model: dwp, posterior: [gw, agw]}", "{model: dwp, inference: [gw, agw]}"),
                 "grids/t.yaml");
  REQUIRE(a.cells.size() == b.cells.size());
  REQUIRE(a.cells.size() == c.cells.size());
  for (size_t i = 0; i < a.cells.size(); ++i) {
    CHECK(b.cells[i].hash() == a.cells[i].hash());
    CHECK(c.cells[i].hash() == a.cells[i].hash());
    CHECK(b.cells[i].inference == a.cells[i].inference);  // the model's field, as before
    CHECK(c.cells[i].posterior == a.cells[i].posterior);
  }
  CHECK(has(error_of(with("{model: dgp, inference: global-inducing}",
                          "{model: dgp, inference: dsvi, posterior: dsvi}")),
            "name the same axis"));
  CHECK(
      has(error_of(with("{model: dwp, posterior: [gw, agw]}", "{model: dwp, inference: [gw, x]}")),
          "'x' is not one of: gw, agw, abgw"));
  // The registry's depth rule, at the entry's depths.
  CHECK(has(error_of(with("{model: sgp, inducing: [100, 500]}", "{model: sgp, depths: [1, 2]}")),
            "model sgp: depth must be 1 (got 2)"));
  // dgp's canonical text and command line keep "inference" (the committed hashes), whichever
  // field holds it.
  const RunSpec& d = a.cells.front();
  REQUIRE(d.model == "dgp");
  CHECK(has(d.canonical(), "\nmodel=dgp\ninference=global-inducing\nposterior=\ndepth=2\n"));
  RunSpec e = d;
  e.inference.clear();
  e.posterior = "global-inducing";
  CHECK(e.canonical() == d.canonical());
  CHECK(e.hash() == d.hash());
  CHECK(e.run_args("r") == d.run_args("r"));
  CHECK(e.model_label() == "dgp-global-inducing");
  CHECK_NOTHROW(validate_run_spec(e));
  RunSpec f = e;
  f.set_posterior(f.posterior_name());
  CHECK(f.inference == "global-inducing");
  CHECK(f.posterior.empty());
  e.inference = "dsvi";  // two values for one axis
  CHECK_THROWS_WITH_AS(validate_run_spec(e), doctest::Contains("differ"), dkp::ConfigError);
  const auto dwp = std::find_if(a.cells.begin(), a.cells.end(),
                                [](const RunSpec& r) { return r.model == "dwp"; });
  REQUIRE(dwp != a.cells.end());
  const RunSpec& w = *dwp;
  RunSpec wi = w;
  wi.inference = wi.posterior;
  wi.posterior.clear();
  CHECK(wi.hash() == w.hash());
  CHECK_NOTHROW(validate_run_spec(wi));
  // A canonical text holds the posterior under the model's key only.
  std::string text = d.canonical();
  const std::string keyed = "inference=global-inducing\nposterior=\n";
  text.replace(text.find(keyed), keyed.size(), "inference=\nposterior=global-inducing\n");
  CHECK_THROWS_AS(RunSpec::parse_canonical(text), dkp::DataError);
  // Overrides match the posterior under either name.
  for (const std::string k : {"inference", "posterior"}) {
    CAPTURE(k);
    const Grid o = parse_grid(
        with("  - when: {dataset: protein}",
             "  - when: {" + k + ": [agw, global-inducing]}\n    set: {test_samples: 7}\n" +
                 "  - when: {dataset: protein}"),
        "grids/t.yaml");
    for (const RunSpec& cell : o.cells) {
      const bool hit = cell.posterior_name() == "agw" || cell.posterior_name() == "global-inducing";
      CHECK((cell.protocol.test_samples == 7) == hit);
    }
  }
}

TEST_CASE("the grid runner's arguments: the canonical configuration, which parses back to it") {
  const Grid g = parse_grid(kGrid, "grids/t.yaml");
  for (const RunSpec& c : g.cells) {
    const auto args = c.spec_args("results/runs", {"--data", "/d"});
    REQUIRE(args.size() == 8);
    CHECK(args[0] == "run");
    CHECK(args[1] == "--spec");
    CHECK(RunSpec::parse_canonical(args[2]).hash() == c.hash());
    CHECK(std::vector<std::string>(args.begin() + 3, args.end()) ==
          std::vector<std::string>{"--data", "/d", "--out", c.run_dir("results/runs").string(),
                                   "--quiet"});
  }
}

TEST_CASE("run directory and the dkp run command line") {
  const Grid g = parse_grid(kGrid, "grids/t.yaml");
  const RunSpec& c = g.cells.front();  // boston split 0 dgp global-inducing depth 2
  REQUIRE(c.model == "dgp");
  CHECK(c.run_dir("results/runs") ==
        std::filesystem::path("results/runs/t/boston/split0") / c.hash());
  const auto args = c.run_args("results/runs", {"--data", "/d"});
  const std::vector<std::string> expected = {"run",
                                             "--dataset",
                                             "boston",
                                             "--split",
                                             "0",
                                             "--model",
                                             "dgp",
                                             "--inference",
                                             "global-inducing",
                                             "--depth",
                                             "2",
                                             "--kernel",
                                             "se",
                                             "--steps",
                                             "2000",
                                             "--lr-schedule",
                                             "0:0.01,1000:0.001",
                                             "--kl-anneal",
                                             "100",
                                             "--samples",
                                             "10",
                                             "--test-samples",
                                             "100",
                                             "--inducing",
                                             "100",
                                             "--batch",
                                             "10000",
                                             "--seed",
                                             "3",
                                             "--data",
                                             "/d",
                                             "--out",
                                             ("results/runs/t/boston/split0/" + c.hash()),
                                             "--quiet"};
  CHECK(args == expected);
  CHECK(c.command_line("/usr/bin/dkp", "my results") ==
        "/usr/bin/dkp run --dataset boston --split 0 --model dgp --inference global-inducing "
        "--depth 2 --kernel se --steps 2000 --lr-schedule 0:0.01,1000:0.001 --kl-anneal 100 "
        "--samples 10 --test-samples 100 --inducing 100 --batch 10000 --seed 3 --out "
        "'my results/t/boston/split0/" +
            c.hash() + "' --quiet");
  // Posterior for dwp, width only when not the default rule.
  RunSpec d = c;
  d.model = "dwp";
  d.inference = "";
  d.posterior = "abgw";
  d.protocol.width = "min(input,30)";
  const std::string line = d.command_line("dkp", "r");
  CHECK(has(line, " --posterior abgw "));
  CHECK(!has(line, "--inference"));
  CHECK(has(line, " --width 'min(input,30)' "));
}

TEST_CASE("learning-rate schedules round-trip and reject nonsense") {
  const std::vector<LrPoint> s = {{0, 0.01}, {4000, 0.001}};
  CHECK(format_lr_schedule(s) == "0:0.01,4000:0.001");
  CHECK(parse_lr_schedule("0:0.01,4000:0.001") == s);
  CHECK(parse_lr_schedule("0:1e-2") == std::vector<LrPoint>{{0, 0.01}});
  CHECK_THROWS_AS(parse_lr_schedule("10:0.01"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_lr_schedule("0:0.01,0:0.001"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_lr_schedule("0:-1"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_lr_schedule("0:x"), dkp::ConfigError);
  CHECK_THROWS_AS(parse_lr_schedule(""), dkp::ConfigError);
}

// A protocol option set in `spec` (unset, the spec's hash is `unset_hash`): valid, written into
// the canonical configuration as `line`, parsed back, in the hash, and passed to dkp run as
// `flag value`.
void check_option_joins(const RunSpec& spec, const std::string& unset_hash, const std::string& line,
                        const std::string& flag, const std::string& value) {
  CHECK_NOTHROW(validate_run_spec(spec));
  CHECK(spec.canonical().find(line) != std::string::npos);
  CHECK(RunSpec::parse_canonical(spec.canonical()).protocol == spec.protocol);
  CHECK(spec.hash() != unset_hash);
  const auto args = spec.run_args("results");
  const auto at = std::find(args.begin(), args.end(), flag);
  REQUIRE(at != args.end());
  CHECK(*std::next(at) == value);
}

TEST_CASE("validate_run_spec checks what dkp run receives") {
  const Grid g = parse_grid(kGrid, "grids/t.yaml");
  RunSpec s = g.cells.front();
  CHECK_NOTHROW(validate_run_spec(s));
  RunSpec bad = s;
  bad.model = "dwp";
  CHECK_THROWS_WITH_AS(validate_run_spec(bad),
                       doctest::Contains("model dwp has no posterior 'global-inducing'"),
                       dkp::ConfigError);
  bad.inference = "";
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("needs posterior"),
                       dkp::ConfigError);
  bad = s;
  bad.split = 25;
  CHECK_THROWS_AS(validate_run_spec(bad), dkp::ConfigError);
  bad = s;  // MNIST: one split, and only the SVGP models classify
  bad.dataset = "mnist";
  bad.split = 0;
  bad.model = "dgp";
  bad.inference = "dsvi";
  CHECK_NOTHROW(validate_run_spec(bad));
  bad.split = 1;
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("split 1 does not exist"),
                       dkp::ConfigError);
  bad.split = 0;
  bad.protocol.pixels = "standard";  // MNIST's pixel scaling: in the hash and the arguments
  CHECK_NOTHROW(validate_run_spec(bad));
  CHECK(bad.canonical().find("pixels=standard\n") != std::string::npos);
  CHECK(RunSpec::parse_canonical(bad.canonical()).hash() == bad.hash());
  CHECK(bad.hash() != s.hash());
  bad.protocol.pixels = "raw";
  CHECK_THROWS_AS(validate_run_spec(bad), dkp::ConfigError);
  bad.protocol.pixels = "unit";
  const std::string unscaled = bad.hash();
  bad.protocol.pixel_scale = 2.5;  // in the hash and the arguments when not 1
  check_option_joins(bad, unscaled, "pixel_scale=2.5\n", "--pixel-scale", "2.5");
  bad.protocol.pixel_scale = 0.0;
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("positive and finite"),
                       dkp::ConfigError);
  bad.protocol.pixel_scale = 1.0;
  CHECK(bad.hash() == unscaled);
  CHECK(bad.canonical().find("pixels") == std::string::npos);  // old hashes stay
  bad.inference = "global-inducing";
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("classification dataset"),
                       dkp::ConfigError);
  bad = s;  // the SE kernels' initial values: sgp and dgp dsvi only, in the hash when set
  bad.model = "dgp";
  bad.inference = "dsvi";
  const std::string before = bad.hash();
  bad.options.set_number("init_lengthscale", 2.0);
  bad.options.set_number("init_variance", 0.5);
  check_option_joins(bad, before, "init_lengthscale=2\ninit_variance=0.5\n", "--init-variance",
                     "0.5");
  bad.options.set_number("init_variance", 0.0);
  CHECK(bad.canonical().find("init_variance") == std::string::npos);
  bad.options.set_number("init_lengthscale", 0.0);
  CHECK(bad.hash() == before);  // unset: old hashes stay
  bad.options.set_number("init_lengthscale", -1.0);
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("positive and finite"),
                       dkp::ConfigError);
  bad.options.set_number("init_lengthscale", 2.0);
  bad.inference = "global-inducing";
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("sgp and dgp --inference dsvi"),
                       dkp::ConfigError);
  bad = s;
  bad.protocol.pixels = "standard";  // a UCI dataset: inputs standardised per feature
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("for images"), dkp::ConfigError);
  bad = s;
  bad.protocol.pixel_scale = 2.0;
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("for images"), dkp::ConfigError);
  bad = s;  // the test-set scaling: sgp and dgp dsvi on tabular data, in the hash when set
  bad.model = "dgp";
  bad.inference = "dsvi";
  const std::string train_scaled = bad.hash();
  bad.options.set("standardise", "test-sd");
  check_option_joins(bad, train_scaled, "standardise=test-sd\n", "--standardise", "test-sd");
  bad.dataset = "mnist";
  bad.split = 0;
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("for tabular data"),
                       dkp::ConfigError);
  bad = s;
  bad.options.set("standardise", "test-sd");  // not an option of the global-inducing DGP
  CHECK_THROWS_AS(validate_run_spec(bad), dkp::ConfigError);
  bad.options.set("standardise", "train");
  CHECK(bad.hash() == s.hash());  // the default: old hashes stay
  CHECK_THROWS_AS(bad.options.set("standardise", "test"), dkp::ConfigError);
  bad = s;
  bad.protocol.kl_anneal = 1000000;
  CHECK_THROWS_AS(validate_run_spec(bad), dkp::ConfigError);
  bad = s;
  bad.options.set("stl", "off");  // sticking the landing is a DWP option
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("only dwp"), dkp::ConfigError);
  bad.model = "dwp";
  bad.inference = "";
  bad.posterior = "agw";
  CHECK_NOTHROW(validate_run_spec(bad));
  bad.options.set("stl", "mixing");
  CHECK_NOTHROW(validate_run_spec(bad));
  CHECK_THROWS_WITH_AS(bad.options.set("stl", "yes"), doctest::Contains("on, off or mixing"),
                       dkp::ConfigError);
  bad.options.set("stl", "mixing");
  bad.posterior = "gw";  // the GW has no A' or B
  CHECK_THROWS_WITH_AS(validate_run_spec(bad),
                       doctest::Contains("only dwp --posterior agw or abgw takes it"),
                       dkp::ConfigError);
  bad.posterior = "agw";
  bad.options.set("stl", "off");
  bad.options.set_number("a_prime_scale", 0.1);
  CHECK_NOTHROW(validate_run_spec(bad));
  bad.options.set_number("a_prime_scale", -1.0);
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("positive"), dkp::ConfigError);
  bad.options.set_number("a_prime_scale", 0.1);
  bad.posterior = "gw";  // the GW has no A'
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("agw or abgw"), dkp::ConfigError);
  bad.options.set_number("a_prime_scale", 1.0);
  bad.options.set("mu_param", "bayesfunc");  // every DWP posterior has Bartlett means
  CHECK_NOTHROW(validate_run_spec(bad));
  CHECK_THROWS_WITH_AS(bad.options.set("mu_param", "raw"), doctest::Contains("direct or bayesfunc"),
                       dkp::ConfigError);
  bad = s;
  bad.options.set("mu_param", "bayesfunc");  // a DWP option
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("only dwp"), dkp::ConfigError);
  bad = s;
  bad.model = "dgp";
  bad.inference = "global-inducing";
  bad.posterior = "";
  bad.options.set_switch("hidden_ard", true);
  bad.options.set("gi_precision", "per-output");
  CHECK_NOTHROW(validate_run_spec(bad));
  CHECK_THROWS_WITH_AS(bad.options.set("gi_precision", "per-layer"),
                       doctest::Contains("shared or per-output"), dkp::ConfigError);
  bad.options.set("gi_precision", "shared");
  bad.inference = "dsvi";  // the options are the global-inducing DGP's
  CHECK_THROWS_WITH_AS(validate_run_spec(bad),
                       doctest::Contains("only dgp --inference global-inducing --kernel se"),
                       dkp::ConfigError);
  bad.inference = "global-inducing";
  bad.kernel = "relu";  // the ReLU DGP is the Gram DGP, which has neither option
  bad.options.set_switch("hidden_ard", true);
  CHECK_THROWS_WITH_AS(validate_run_spec(bad),
                       doctest::Contains("only dgp --inference global-inducing --kernel se"),
                       dkp::ConfigError);
  bad = s;
  bad.model = "nonsense";
  CHECK_THROWS_WITH_AS(validate_run_spec(bad), doctest::Contains("unknown model"),
                       dkp::ConfigError);
}

TEST_CASE("the grids in experiments/ load, with every profile") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(DKP_SOURCE_DIR) / "experiments";
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    INFO(e.path().string());
    const Grid g = load_grid(e.path());
    CHECK(!g.cells.empty());
    CHECK(g.name == e.path().stem().string());
    for (const auto& p : g.profiles) {
      const Grid q = load_grid(e.path(), p);
      CHECK(q.cells.size() <= g.cells.size());
    }
  }
  CHECK(files >= 6);
  // The paper grids have the sizes of the papers' tables (20 splits, protein 5).
  CHECK(load_grid(dir / "agw-tables.yaml").cells.size() == 165 * 4 * 4);
  CHECK(load_grid(dir / "gw-tables.yaml").cells.size() == 165 * 4 * 2);
  CHECK(load_grid(dir / "dkp-table1.yaml").cells.size() == 165 * 3 * 2);
  CHECK(load_grid(dir / "dsvi-tables.yaml").cells.size() == 145 * 7);  // + AEP-2
}

TEST_CASE("a run's canonical configuration parses back to the same spec") {
  namespace fs = std::filesystem;
  // Every cell of every grid file, and the extra options of dkp run.
  std::vector<RunSpec> specs;
  for (const auto& e : fs::directory_iterator(fs::path(DKP_SOURCE_DIR) / "experiments")) {
    if (e.path().extension() != ".yaml") continue;
    for (const RunSpec& s : load_grid(e.path()).cells) specs.push_back(s);
  }
  REQUIRE(specs.size() > 1000);
  RunSpec d = specs.front();
  d.model = "diwp";
  d.inference.clear();
  d.posterior.clear();
  for (double delta : {1.0, dkp::models::kDiwpDeltaInit, 0.3, 1e-7}) {
    d.options.set_number("delta_init", delta);
    specs.push_back(d);
  }
  d.options.set("diwp_dof", "batch");
  specs.push_back(d);
  d.options.set("diwp_omega_v", "paper");
  specs.push_back(d);
  RunSpec w = specs.front();
  w.model = "dwp";
  w.inference.clear();
  w.posterior = "abgw";
  w.options.set("stl", "mixing");
  w.options.set_number("a_prime_scale", 0.1);
  w.options.set("mu_param", "bayesfunc");
  w.protocol.seed = 18446744073709551615ull;
  w.protocol.width = "min(input,30)";
  specs.push_back(w);
  RunSpec gi = specs.front();
  gi.model = "dgp";
  gi.inference = "global-inducing";
  gi.posterior.clear();
  gi.options.set_switch("hidden_ard", true);
  gi.options.set("gi_precision", "per-output");
  specs.push_back(gi);
  for (const RunSpec& s : specs) {
    const RunSpec r = RunSpec::parse_canonical(s.canonical());
    CHECK(r.canonical() == s.canonical());
    CHECK(r.hash() == s.hash());
    CHECK(r.options == s.options);  // also where canonical() leaves delta_init out
    CHECK(r.protocol == s.protocol);
  }

  const std::string c = specs.front().canonical();
  auto error_of = [](const std::string& text) {
    try {
      RunSpec::parse_canonical(text);
    } catch (const dkp::DataError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = c;
    const auto pos = t.find(from);
    REQUIRE(pos != std::string::npos);
    return t.replace(pos, from.size(), to);
  };
  CHECK(has(error_of("dkp-run-v2\n" + c.substr(c.find('\n') + 1)), "dkp-run-v1"));
  CHECK(has(error_of(replaced("depth=", "deep=")), "no 'depth'"));
  CHECK(has(error_of(c + "colour=red\n"), "unknown key 'colour'"));
  CHECK(has(error_of(c + "seed=1\n"), "repeated"));
  CHECK(has(error_of(replaced("split=", "split=x")), "not a number"));
  CHECK(has(error_of(replaced("steps=", "steps=1.5")), "not an integer"));
  CHECK(has(error_of(replaced("seed=", "seed=-")), "not a seed"));
  CHECK(has(error_of(c + "stl=all\n"),
            "run configuration: stl must be on, off or mixing (got 'all')"));
  CHECK(has(error_of(c + "hidden_ard=maybe\n"), "'maybe' is not on or off"));
  // Parsable but not canonical: an option written at its default.
  CHECK(has(error_of(c + "stl=on\n"), "not in canonical form"));
  CHECK(has(error_of(c + "hidden_ard=off\n"), "not in canonical form"));
  CHECK(has(error_of(c + "mu_param=direct\n"), "not in canonical form"));
  CHECK(has(error_of(c + "a_prime_scale=1\n"), "not in canonical form"));
  CHECK(error_of(c).empty());
}

TEST_CASE("load_grid: a directory given as a grid file is named as such") {
  const auto dir = dkp::test::temp_dir("grid-dir");
  CHECK_THROWS_WITH_AS(load_grid(dir), doctest::Contains("is a directory, not a grid file"),
                       dkp::ConfigError);
}

TEST_CASE("tables: the protocol line names the model options the grid's cells set") {
  // The tables' columns name models, not options: a grid whose entries set options says which in
  // its tables' protocol line; a grid without any says nothing more.
  CHECK(dkp::experiments::protocol_summary(parse_grid(kGrid, "grids/t.yaml")).find("options") ==
        std::string::npos);
  const Grid g = parse_grid(with("    - {model: sgp, inducing: [100, 500]}",
                                 "    - {model: sgp, inducing: [100, 500], options: "
                                 "{init_lengthscale: 2, init_variance: 3}}"),
                            "grids/t.yaml");
  const std::string s = dkp::experiments::protocol_summary(g);
  INFO(s);
  CHECK(s.find(" Model options: sgp-m100 init_lengthscale=2 init_variance=3; sgp-m500 "
               "init_lengthscale=2 init_variance=3.") != std::string::npos);
  CHECK(s.find("Protocol: ") == 0);
}
