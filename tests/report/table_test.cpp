// Table aggregation: standard errors, the paired-difference convention, flags for missing and
// failed cells, agreement with the paper, writers, and the reference CSVs of the repository.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "experiments/grid.hpp"
#include "experiments/store.hpp"
#include "experiments/tables_job.hpp"
#include "report/reference.hpp"
#include "report/table.hpp"
#include "test_support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace dkp::report;
namespace fs = std::filesystem;
namespace ex = dkp::experiments;

namespace {

CellRecord rec(const std::string& model, const std::string& inference, const std::string& posterior,
               int split, std::optional<double> value, const std::string& metric = "test_ll",
               const std::string& dataset = "boston", int depth = 3,
               const std::string& kernel = "relu", long inducing = 100) {
  CellRecord r;
  r.dataset = dataset;
  r.split = split;
  r.model = model;
  r.inference = inference;
  r.posterior = posterior;
  r.depth = depth;
  r.kernel = kernel;
  r.inducing = inducing;
  r.state = value ? "done" : "missing";
  if (value) r.values[metric] = *value;
  return r;
}

const Entry& entry(const Table& t, size_t row, const std::string& column) {
  for (const auto& e : t.rows.at(row).entries)
    if (e.column == column) return e;
  FAIL("no column " << column);
  static Entry none;
  return none;
}

double sd_of(const std::vector<double>& x) {
  double m = 0;
  for (double v : x) m += v;
  m /= static_cast<double>(x.size());
  double ss = 0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

// One of the paper's values: its table, row (dataset, depth), column (model, posterior) and
// metric, with the mean as printed; no error unless the caller sets one.
RefRow paper_value(const std::string& paper, const std::string& table, const std::string& dataset,
                   int depth, const std::string& model, const std::string& posterior,
                   const std::string& metric, double mean, const std::string& mean_text) {
  RefRow r;
  r.paper = paper;
  r.table = table;
  r.dataset = dataset;
  r.depth = depth;
  r.model = model;
  r.posterior = posterior;
  r.metric = metric;
  r.mean = mean;
  r.mean_text = mean_text;
  return r;
}

const std::string kAgwGrid = R"(name: agwtest
family: agw-uci
protocol:
  steps: 100
  lr_schedule: [[0, 0.01]]
  kl_anneal: 10
  train_samples: 2
  test_samples: 10
  inducing: 10
  batch: 64
  kernel: se
  seed: 0
axes:
  datasets: [boston, yacht]
  splits: [0, 1, 2, 3]
  depths: [2]
  models:
    - {model: dgp, inference: global-inducing}
    - {model: dwp, posterior: [gw, agw, abgw]}
)";

}  // namespace

TEST_CASE("tables: mean and one standard error over splits from result.json files") {
  const fs::path root = dkp::test::temp_dir("tables-se") / "runs";
  const ex::Grid g = ex::parse_grid(kAgwGrid, "agwtest.yaml");
  REQUIRE(g.cells.size() == 2 * 4 * 4);
  // Synthetic results: DGP elbo 1, 2, 3, 4 on boston; GW 10 +- a little; yacht DGP split 3 fails,
  // yacht A-GW split 0 only; yacht AB-GW nothing.
  for (const auto& c : g.cells) {
    const fs::path dir = c.run_dir(root);
    double elbo = 0;
    if (c.posterior == "gw") elbo = 10.0 + 0.1 * (c.split % 2);
    if (c.model == "dgp") elbo = 1.0 + c.split;
    if (c.posterior == "agw") elbo = -1.0 - c.split;
    if (c.posterior == "abgw") elbo = -2.0 - c.split;
    if (c.dataset == "yacht" && c.model == "dgp" && c.split == 3) {
      ex::Failure f;
      f.exit_code = 3;
      f.reason = "exit code 3: not implemented";
      ex::write_error_json(c, root, f);
      continue;
    }
    if (c.dataset == "yacht" && c.posterior == "agw" && c.split != 0) continue;
    if (c.dataset == "yacht" && c.posterior == "abgw") continue;
    dkp::util::write_file_atomic(
        dir / "result.json",
        fmt::format("{{\"config_hash\": \"{}\", \"dataset\": \"{}\", \"elbo\": {}, \"test_ll\": "
                    "{}, \"test_rmse\": 1.0, \"train_time_s\": 3.5}}\n",
                    c.hash(), c.dataset, elbo, elbo - 1));
  }
  // The paper's values (one reference row per checked cell).
  std::vector<RefRow> refs;
  auto ref = [&](const std::string& model, const std::string& post, double mean, double err) {
    RefRow r;
    r.paper = "agw";
    r.table = "3";
    r.dataset = "boston";
    r.depth = 2;
    r.model = model;
    r.posterior = post;
    r.metric = "elbo";
    r.mean = mean;
    r.error = err;
    r.mean_text = fmt::format("{:.2f}", mean);
    r.error_text = fmt::format("{:.2f}", err);
    r.error_kind = "se";
    r.kernel = "se";
    r.n_splits = 20;
    refs.push_back(r);
  };
  ref("dgp", "global-inducing", 2.6, 0.1);  // close to ours: agrees
  ref("dwp", "gw", 2.0, 0.01);              // far from ours: disagrees
  const auto tables = ex::grid_tables(g, root, refs);
  const Table* t3 = nullptr;
  for (const auto& t : tables)
    if (t.spec.name == "agw-table3") t3 = &t;
  REQUIRE(t3);
  REQUIRE(t3->rows.size() == 2);  // boston-2, yacht-2

  const Entry& dgp = entry(*t3, 0, "DGP");
  CHECK(dgp.n_expected == 4);
  CHECK(dgp.n_done == 4);
  CHECK(dgp.status == "ok");
  CHECK(*dgp.mean == doctest::Approx(2.5));
  const double se = sd_of({1, 2, 3, 4}) / 2.0;
  CHECK(*dgp.se == doctest::Approx(se));
  CHECK(*dgp.shown_error == doctest::Approx(se));
  CHECK(dgp.shown_error_kind == "se");
  CHECK(dgp.ref);
  CHECK(dgp.agree == "yes");  // |2.5 - 2.6| <= 2 sqrt(se^2 + 0.1^2)

  const Entry& gw = entry(*t3, 0, "DWP GW");
  CHECK(*gw.mean == doctest::Approx(10.05));
  CHECK(gw.agree == "no");
  CHECK(gw.best);
  CHECK(gw.bold);
  CHECK(!dgp.bold);
  CHECK(entry(*t3, 0, "DWP A-GW").agree == "n/a");  // no reference row

  // yacht: a failed split, a partial column and a column with nothing, all kept and flagged.
  const Entry& ydgp = entry(*t3, 1, "DGP");
  CHECK(ydgp.status == "partial");
  CHECK(ydgp.n_done == 3);
  CHECK(ydgp.n_failed == 1);
  const Entry& yagw = entry(*t3, 1, "DWP A-GW");
  CHECK(yagw.status == "partial");
  CHECK(yagw.n_done == 1);
  CHECK(!yagw.se);
  CHECK(yagw.agree == "n/a");
  const Entry& yab = entry(*t3, 1, "DWP AB-GW");
  CHECK(yab.status == "missing");
  CHECK(!yab.mean);
  CHECK(yab.n_expected == 4);
  CHECK(t3->incomplete() == 3);

  const std::string tex = to_latex(*t3);
  CHECK(tex.find("\\documentclass") != std::string::npos);
  CHECK(tex.find("\\end{document}") != std::string::npos);
  CHECK(tex.find("\\textit{missing}") != std::string::npos);
  CHECK(tex.find("\\textsuperscript{3/4, 1 failed}") != std::string::npos);  // yacht DGP
  CHECK(tex.find("$\\mathbf{10.05 \\pm 0.03}$") != std::string::npos);
  CHECK(tex.find("$2.60 \\pm 0.10$") != std::string::npos);  // the paper's value as printed
  const std::string csv = to_csv(*t3);
  CHECK(csv.find(",missing,") != std::string::npos);
  CHECK(csv.find(",partial,") != std::string::npos);
  size_t lines = 0;
  for (char ch : csv) lines += ch == '\n';
  CHECK(lines == 1 + 2 * 4);  // header + every (row, column), none dropped

  // Table 4: paired ELBO differences by split.
  const Table* t4 = nullptr;
  for (const auto& t : tables)
    if (t.spec.name == "agw-table4") t4 = &t;
  REQUIRE(t4);
  const Entry& d = entry(*t4, 0, "A-GW - AB-GW");  // (-1 - s) - (-2 - s) = 1 on every split
  CHECK(*d.mean == doctest::Approx(1.0));
  CHECK(*d.se == doctest::Approx(0.0));
  const Entry& d2 = entry(*t4, 0, "A-GW - GW");
  CHECK(*d2.mean == doctest::Approx(-1.0 - 1.5 - 10.05));

  // Files are written where asked.
  const fs::path out = root.parent_path() / "tables";
  const auto files = ex::write_tables(tables, out);
  CHECK(files.size() == 3 * tables.size());
  CHECK(fs::exists(out / "agw-table3.tex"));
  CHECK(fs::exists(out / "agw-table3.csv"));
}

TEST_CASE("tables: the DKP paper's paired-difference convention") {
  const std::vector<double> diwp = {-2.0, -2.2, -1.9, -2.1}, nngp = {-2.1, -2.3, -2.0, -2.3},
                            dgp = {-3.0, -3.4, -3.1, -3.5};
  std::vector<CellRecord> cells;
  for (int s = 0; s < 4; ++s) {
    cells.push_back(rec("dgp", "global-inducing", "", s, dgp[s]));
    cells.push_back(rec("nngp", "", "", s, nngp[s]));
    cells.push_back(rec("diwp", "", "", s, diwp[s]));
  }
  const auto specs = family_tables("dkp-uci", cells, "");
  REQUIRE(specs.size() == 1);
  const Table t = build_table(specs[0], cells, {});
  REQUIRE(t.rows.size() == 1);
  const Entry& best = entry(t, 0, "DIWP");
  CHECK(best.best);
  CHECK(best.bold);
  CHECK(!best.shown_error);  // the best method carries no error
  CHECK(*best.mean == doctest::Approx(-2.05));
  const Entry& n = entry(t, 0, "NNGP");
  CHECK(!n.best);
  // Two standard errors of the paired differences nngp - diwp = (-0.1, -0.1, -0.1, -0.2).
  CHECK(*n.shown_error == doctest::Approx(2.0 * sd_of({-0.1, -0.1, -0.1, -0.2}) / 2.0));
  CHECK(n.shown_error_kind == "2se_paired");
  const Entry& g = entry(t, 0, "DGP");
  CHECK(*g.shown_error == doctest::Approx(2.0 * sd_of({-1.0, -1.2, -1.2, -1.4}) / 2.0));
  // The paired error is much smaller than the marginal one when splits share their difficulty.
  CHECK(*g.shown_error < 2.0 * *g.se);
  const std::string tex = to_latex(t);
  CHECK(tex.find("$\\mathbf{-2.05}$") != std::string::npos);
  CHECK(tex.find("paired difference") != std::string::npos);

  // A missing method stays in the table, flagged, and does not take part in the comparison.
  std::vector<CellRecord> partial = cells;
  for (auto& c : partial) {
    if (c.model == "diwp") {
      c.state = "failed";
      c.values.clear();
    }
  }
  const Table t2 = build_table(specs[0], partial, {});
  CHECK(entry(t2, 0, "DIWP").status == "failed");
  CHECK(entry(t2, 0, "NNGP").best);
  CHECK(!entry(t2, 0, "NNGP").shown_error);
  CHECK(to_latex(t2).find("\\textit{failed 4/4}") != std::string::npos);
}

TEST_CASE("tables: standard deviation convention and the paper's error conversion") {
  std::vector<CellRecord> cells;
  const std::vector<double> v = {0.5, 0.7, 0.6, 0.8, 0.4};
  for (int s = 0; s < 5; ++s) {
    cells.push_back(rec("sgp", "", "", s, v[s], "test_rmse", "wine", 1, "se", 100));
  }
  cells.push_back(rec("dgp", "aep", "", 0, 0.65, "test_rmse", "wine", 2, "se", 100));
  const auto specs = family_tables("dsvi-uci", cells, "");
  REQUIRE(specs.size() == 2);
  RefRow r = paper_value("dsvi", "5", "wine", 1, "sgp100", "", "test_rmse", 0.627, "0.627");
  r.error = 0.037;
  r.error_text = "0.037";
  r.error_kind = "sd";
  r.n_splits = 20;
  const Table t = build_table(specs[1], cells, {r});
  REQUIRE(t.rows.size() == 1);
  const Entry& e = entry(t, 0, "SGP 100");
  CHECK(*e.shown_error == doctest::Approx(sd_of(v)));
  CHECK(e.shown_error_kind == "sd");
  CHECK(e.ref_se == doctest::Approx(0.037 / std::sqrt(20.0)));
  CHECK(e.agree == "yes");  // |0.6 - 0.627| <= 2 sqrt(se^2 + (0.037/sqrt 20)^2)
  CHECK(entry(t, 0, "SGP 500").status == "absent");
  // The approximate-EP DGP's runs fill the report's AEP-2 column.
  CHECK(entry(t, 0, "AEP-2").status != "absent");
  CHECK(*entry(t, 0, "AEP-2").mean == doctest::Approx(0.65));
  CHECK(t.incomplete() == 0);
}

TEST_CASE("RefRow::rounding_sd: the rounding of a value printed to few digits") {
  const auto rounding = [](const std::string& text) {
    RefRow r;
    r.mean_text = text;
    return r.rounding_sd();
  };
  const double s12 = std::sqrt(12.0);
  CHECK(rounding("-0.01") == doctest::Approx(0.01 / s12));
  CHECK(rounding("36.31") == doctest::Approx(0.01 / s12));
  CHECK(rounding("47.4") == doctest::Approx(0.1 / s12));
  CHECK(rounding("1") == doctest::Approx(1.0 / s12));
  CHECK(rounding("4.23e-5") == doctest::Approx(1e-7 / s12));
  CHECK(rounding("2.22E-3") == doctest::Approx(1e-5 / s12));
  CHECK(rounding("") == 0.0);
  CHECK(rounding("-") == 0.0);
}

TEST_CASE("tables: epoch time from step timings when the run did not write it") {
  CellRecord c = rec("dwp", "", "gw", 0, std::nullopt);
  c.state = "done";
  c.batch = 100;
  c.steps = 50;
  c.values = {{"n_train", 455}, {"train_time_s", 10.0}};
  CHECK(*metric_value(c, "epoch_time_s") == doctest::Approx(10.0 / 50 * 5));
  c.values["step_time_s"] = 0.3;
  CHECK(*metric_value(c, "epoch_time_s") == doctest::Approx(0.3 * 5));
  c.values = {{"n_train", 455}, {"step_s", 0.2}, {"batch", 1000}};  // dkp run's key names
  CHECK(*metric_value(c, "epoch_time_s") == doctest::Approx(0.2));
  c.values["epoch_time_s"] = 1.25;
  CHECK(*metric_value(c, "epoch_time_s") == 1.25);
  CHECK(!metric_value(c, "elbo"));
  CHECK(higher_is_better("elbo"));
  CHECK(higher_is_better("test_ll"));
  CHECK(!higher_is_better("test_rmse"));
  CHECK(!higher_is_better("epoch_time_s"));
}

TEST_CASE("reference CSVs: they parse, and every printed cell of the papers' tables has a home") {
  const fs::path dir = fs::path(DKP_SOURCE_DIR) / "results" / "reference";
  const auto refs = load_reference_dir(dir);
  std::map<std::string, int> per_paper;  // the papers' printed values (not the code's)
  for (const auto& r : refs)
    if (r.origin == "paper") ++per_paper[r.paper];
  CHECK(per_paper["dkp"] == 72);
  CHECK(per_paper["gw"] == 180);
  CHECK(per_paper["agw"] == 637);
  CHECK(per_paper["dsvi"] == 164);
  CHECK(per_paper["compositional"] == 9);
  // No duplicate keys.
  std::set<std::string> keys;
  for (const auto& r : refs) {
    const std::string k = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", r.origin, r.paper, r.table,
                                      r.dataset, r.depth, r.model, r.posterior, r.metric, r.kernel);
    INFO(r.source);
    CHECK(keys.insert(k).second);
  }
  // Tables over the full grids (no results): how many entries find their printed value.
  std::map<std::string, std::pair<int, int>> found;  // table -> (with ref, entries)
  for (const char* name :
       {"dkp-table1", "gw-tables", "agw-tables", "agw-runtime", "dsvi-tables", "toy"}) {
    const ex::Grid g =
        ex::load_grid(fs::path(DKP_SOURCE_DIR) / "experiments" / (std::string(name) + ".yaml"));
    for (const auto& t : ex::grid_tables(g, dkp::test::temp_dir("noresults"), refs)) {
      for (const auto& row : t.rows) {
        const auto& own = t.spec.ours_only;
        if (std::find(own.begin(), own.end(), row.metric) != own.end()) continue;  // no paper value
        for (const auto& e : row.entries) {
          found[t.spec.name].second += 1;
          found[t.spec.name].first += e.ref ? 1 : 0;
          CHECK(e.status == "missing");
        }
      }
    }
  }
  CHECK(found["dkp-table1"] == std::pair{54, 54});
  CHECK(found["gw-table1"] == std::pair{36, 36});
  CHECK(found["gw-table2"] == std::pair{72, 72});
  CHECK(found["gw-table3"] == std::pair{72, 72});
  CHECK(found["agw-table1"] == std::pair{108, 108});
  CHECK(found["agw-table2"] == std::pair{16, 16});
  CHECK(found["agw-table3"] == std::pair{144, 144});
  // Table 4 lost its AB-GW - GW column for depths 3-5 in the paper's text (27 cells).
  CHECK(found["agw-table4"] == std::pair{81, 108});
  CHECK(found["agw-table5"] == std::pair{144, 144});
  CHECK(found["agw-table6"] == std::pair{144, 144});
  CHECK(found["dsvi-table4"] == std::pair{56, 56});
  CHECK(found["dsvi-table5"] == std::pair{56, 56});
  CHECK(found["compositional-table1"] == std::pair{9, 9});
}

TEST_CASE("tables: the summed ELBO and scientific notation (the compositional paper's Table 1)") {
  CellRecord c = rec("cdgp", "", "dsvi", 0, std::nullopt);
  c.state = "done";
  c.values = {{"elbo", 0.5}, {"n_train", 50}};
  CHECK(*metric_value(c, "elbo_total") == doctest::Approx(25.0));
  c.values["elbo_mean"] = 0.7;  // the mean of the final estimates, when the run wrote it
  CHECK(*metric_value(c, "elbo_total") == doctest::Approx(35.0));
  c.values.erase("n_train");
  CHECK(!metric_value(c, "elbo_total"));
  TableSpec spec;
  spec.decimals = 2;
  spec.scientific = {"var_f1_at_0"};
  CHECK(format_value(2.2249e-3, spec, "var_f1_at_0") == "2.22e-03");
  CHECK(format_value(2.2249e-3, spec, "var_f1_at_0", 1) == "2.225e-03");
  CHECK(format_value(2.2249e-3, spec, "elbo_total") == "0.00");
  CHECK(format_value(std::nullopt, spec, "var_f1_at_0").empty());
  // Mean +- sd over the trials, beside the paper's mean +- sd of 10 trials.
  std::vector<CellRecord> cells;
  const std::vector<double> v = {1.9e-6, 2.1e-6, 2.0e-6};
  for (int s = 0; s < 3; ++s) {
    CellRecord r = rec("cdgp", "", "dsvi", s, v[s], "var_f1_at_0", "toy", 2, "periodic", 10);
    r.values["n_train"] = 50;
    r.values["elbo_mean"] = 0.2 + 0.01 * s;
    r.values["elbo_tail"] = 0.1 + 0.01 * s;
    cells.push_back(r);
  }
  const auto specs = family_tables("compositional", cells, "");
  REQUIRE(specs.size() == 1);
  const auto refs = load_reference_dir(fs::path(DKP_SOURCE_DIR) / "results" / "reference");
  const Table t = build_table(specs[0], cells, refs);
  REQUIRE(t.rows.size() == 4);
  CHECK(t.rows[0].metric == "elbo_total");
  const Entry& elbo = entry(t, 0, "Mean field");
  CHECK(*elbo.mean == doctest::Approx(50 * 0.21));
  REQUIRE(elbo.ref);
  CHECK(elbo.ref->mean == 13.43);
  // The trace's level over the last tenth (elbo_tail), summed: ours only, no paper value.
  CHECK(t.rows[1].metric == "elbo_tail_total");
  const Entry& tail = entry(t, 1, "Mean field");
  CHECK(*tail.mean == doctest::Approx(50 * 0.11));
  CHECK_FALSE(tail.ref);
  const Entry& var = entry(t, 2, "Mean field");
  CHECK(*var.mean == doctest::Approx(2.0e-6));
  CHECK(*var.shown_error == doctest::Approx(sd_of(v)));
  REQUIRE(var.ref);
  CHECK(var.ref->mean == 1.99e-6);
  CHECK(to_markdown(t).find("2.00e-06 ± 1.00e-07") != std::string::npos);
  CHECK(entry(t, 2, "Jointly Gaussian").status == "absent");  // no cell of it
}

TEST_CASE("reference CSV parsing: quoting and errors name the line") {
  const fs::path dir = dkp::test::temp_dir("refcsv");
  CHECK(split_csv_line("a,\"b, c\",\"say \"\"hi\"\"\",") ==
        std::vector<std::string>{"a", "b, c", "say \"hi\"", ""});
  CHECK(csv_field("x,y") == "\"x,y\"");
  CHECK(csv_field("plain") == "plain");
  dkp::util::write_file_atomic(
      dir / "bad.csv",
      "paper,table,dataset,depth,model,posterior,metric,mean,error,error_kind\n"
      "gw,1,boston,5,dwp,gw,elbo,-0.38,0.01,se\n"
      "gw,1,boston,5,dwp,gw,elbo,oops,0.01,se\n");
  CHECK_THROWS_WITH_AS(load_reference_csv(dir / "bad.csv"), doctest::Contains("bad.csv:3"),
                       dkp::DataError);
  // A header that names a column twice (found by the reference-csv fuzz target: a row as long as
  // the distinct names was then read past its end).
  dkp::util::write_file_atomic(
      dir / "twice.csv",
      "paper,table,dataset,depth,model,posterior,metric,mean,error,error_kind,metric\n"
      "gw,1,boston,5,dwp,gw,elbo,-0.38,0.01,se\n");
  CHECK_THROWS_WITH_AS(load_reference_csv(dir / "twice.csv"),
                       doctest::Contains("twice.csv:1: header names column 'metric' twice"),
                       dkp::DataError);
  CHECK(load_reference_dir(dir / "absent").empty());
}

TEST_CASE("the LaTeX tables compile with pdflatex (when it is installed)") {
  if (std::system("command -v pdflatex > /dev/null 2>&1") != 0) {
    MESSAGE("pdflatex not installed: compilation not checked");
    return;
  }
  std::vector<CellRecord> cells;
  for (int s = 0; s < 3; ++s) {
    cells.push_back(rec("dgp", "global-inducing", "", s, -3.0 - s, "test_ll", "boston", 3, "se"));
    cells.push_back(rec("nngp", "", "", s, -2.5 - s, "test_ll", "boston", 3, "se"));
  }
  cells.push_back(rec("diwp", "", "", 0, std::nullopt, "test_ll", "boston", 3, "se"));
  const fs::path dir = dkp::test::temp_dir("pdflatex");
  const Table t = build_table(family_tables("dkp-uci", cells, "")[0], cells, {});
  dkp::util::write_file_atomic(dir / "t.tex", to_latex(t));
  const std::string cmd = "cd '" + dir.string() +
                          "' && pdflatex -interaction=nonstopmode -halt-on-error t.tex > log.txt "
                          "2>&1";
  CHECK(std::system(cmd.c_str()) == 0);
  CHECK(fs::exists(dir / "t.pdf"));
}

TEST_CASE("tables: bold follows each paper's rule") {
  auto cells_for = [](const std::vector<std::pair<std::string, std::vector<double>>>& cols) {
    std::vector<CellRecord> cells;
    for (const auto& [post, values] : cols) {
      for (size_t s = 0; s < values.size(); ++s) {
        if (post == "dgp") {
          cells.push_back(rec("dgp", "global-inducing", "", static_cast<int>(s), values[s], "elbo",
                              "boston", 2, "se"));
        } else {
          cells.push_back(
              rec("dwp", "", post, static_cast<int>(s), values[s], "elbo", "boston", 2, "se"));
        }
      }
    }
    return cells;
  };
  // A-GW paper: the best mean, with ties at the printed precision, unless all print equal.
  const auto agw = family_tables("agw-uci", {}, "")[1];
  REQUIRE(agw.name == "agw-table3");
  auto cells = cells_for({{"dgp", {-0.40, -0.41}},
                          {"gw", {-0.361, -0.359}},
                          {"agw", {-0.362, -0.360}},
                          {"abgw", {-0.357, -0.358}}});
  Table t = build_table(agw, cells, {});
  CHECK(!entry(t, 0, "DGP").bold);
  CHECK(entry(t, 0, "DWP GW").bold);
  CHECK(entry(t, 0, "DWP A-GW").bold);
  CHECK(entry(t, 0, "DWP AB-GW").bold);
  CHECK(entry(t, 0, "DWP AB-GW").best);
  cells = cells_for({{"dgp", {-0.36, -0.36}},
                     {"gw", {-0.36, -0.36}},
                     {"agw", {-0.361, -0.36}},
                     {"abgw", {-0.359, -0.36}}});
  t = build_table(agw, cells, {});
  for (const auto& e : t.rows[0].entries) CHECK(!e.bold);

  // GW paper: only a significant improvement (paired by split) is highlighted.
  const auto gw = family_tables("gw-uci", {}, "")[1];
  REQUIRE(gw.name == "gw-table2");
  cells = cells_for({{"gw", {-0.30, -0.35, -0.40, -0.33}}, {"dgp", {-0.32, -0.37, -0.42, -0.36}}});
  t = build_table(gw, cells, {});
  CHECK(entry(t, 0, "DWP").bold);
  cells = cells_for({{"gw", {-0.30, -0.35, -0.40, -0.33}}, {"dgp", {-0.33, -0.34, -0.41, -0.32}}});
  t = build_table(gw, cells, {});
  CHECK(entry(t, 0, "DWP").best);
  CHECK(!entry(t, 0, "DWP").bold);
}

TEST_CASE("a grid of one split: no verdict without seed replicates, the single rule with them") {
  auto record = [](const std::string& model, double elbo) {
    CellRecord c;
    c.dataset = "mnist";
    c.split = 0;
    c.model = model;
    if (model == "dgp") c.inference = "global-inducing";
    c.depth = 3;
    c.kernel = "relu";
    c.state = "done";
    c.values = {{"elbo", elbo}};
    return c;
  };
  // The NNGP 0.0015 from the paper's -0.268 +- 0.001, the DIWP 0.1 below its -0.198, the DGP
  // 0.2 below a paper value printed without error.
  const std::vector<CellRecord> cells = {record("nngp", -0.2695), record("diwp", -0.298),
                                         record("dgp", -0.5)};
  auto ref = [](const std::string& model, double mean, std::optional<double> err) {
    RefRow r;
    r.paper = "dkp";
    r.table = "2";
    r.dataset = "mnist";
    r.depth = 3;
    r.model = model;
    r.metric = "elbo";
    r.mean = mean;
    r.error = err;
    r.error_kind = err ? "unspecified" : "none";
    r.kernel = "relu";
    return r;
  };
  const std::vector<RefRow> refs = {ref("nngp", -0.268, 0.001), ref("diwp", -0.198, 0.001),
                                    ref("dgp", -0.301, std::nullopt)};
  const auto specs = family_tables("dkp-mnist", cells, "dkp");
  REQUIRE(!specs.empty());
  const Table t = build_table(specs.front(), cells, refs);
  auto verdicts = [](const Table& table) {
    std::map<std::string, std::string> agree;
    for (const auto& r : table.rows) {
      if (r.metric != "elbo") continue;
      for (const auto& e : r.entries) {
        if (e.mean) agree[e.column] = e.agree;
      }
    }
    return agree;
  };
  // No run-to-run sd: no verdict.
  for (const auto& [col, a] : verdicts(t)) CHECK(a == "n/a");
  // The NNGP again with another seed, 0.001 away: sd_run = 0.001 / sqrt 2, and the tolerance
  // 2 sqrt(sd_run^2 + 0.001^2) = 0.0024 for the NNGP, 2 sd_run = 0.0014 for the DGP.
  Table rep = build_table(specs.front(), {record("nngp", -0.2685)}, refs);
  rep.spec.name += "-seed1";
  rep.replicate_of = t.spec.name;
  std::vector<Table> both = {t, rep};
  apply_replicates(both);
  const auto agree = verdicts(both.front());
  REQUIRE(agree.size() == 3);
  for (const auto& [col, a] : agree) {
    if (col.find("NNGP") != std::string::npos) CHECK(a == "yes");
    if (col.find("DIWP") != std::string::npos) CHECK(a == "no");
    if (col.find("DGP") != std::string::npos) CHECK(a == "no");
  }
}

TEST_CASE(
    "the reference code's value: loaded from code/, matched beside the paper's, compared with "
    "ours on its own splits") {
  const fs::path dir = dkp::test::temp_dir("code-refs");
  fs::create_directories(dir / "code");
  const std::string header =
      "paper,table,dataset,depth,model,posterior,metric,mean,error,error_kind,kernel,n_splits,bold,"
      "splits,note\n";
  {
    std::ofstream(dir / "paper.csv")
        << header << "agw,3,yacht,2,dwp,gw,elbo,1.90,0.01,se,se,20,0,,printed\n";
    std::ofstream(dir / "code" / "ref.csv")
        << header << "agw,3,yacht,2,dwp,gw,elbo,1.50,0.02,se,se,1,0,1,\"split 1 only\"\n"
        << "agw,3,yacht,2,dwp,agw,elbo,1.50,0.02,se,se,2,0,0;3,\"splits 0 and 3\"\n";
  }
  const auto refs = load_reference_dir(dir);
  REQUIRE(refs.size() == 3);
  CHECK(refs[0].origin == "paper");
  CHECK(refs[1].origin == "code");
  CHECK(refs[1].splits == std::vector<int>{1});
  CHECK(refs[2].splits == std::vector<int>{0, 3});

  // GW: split 1 at 1.53 (within 2 x 0.02 of 1.50), the other splits far off; A-GW: splits 0
  // and 3 not both done.
  std::vector<CellRecord> cells;
  for (int s = 0; s < 4; ++s) {
    cells.push_back(rec("dwp", "", "gw", s, s == 1 ? 1.53 : 1.85, "elbo", "yacht", 2, "se"));
    cells.push_back(rec("dwp", "", "agw", s, s == 3 ? std::nullopt : std::optional<double>(1.5),
                        "elbo", "yacht", 2, "se"));
  }
  const auto grid = ex::parse_grid(kAgwGrid, "agwtest.yaml");
  const auto specs = family_tables(grid.family, cells, "");
  const TableSpec* t3 = nullptr;  // the A-GW paper's ELBO table, depths 2-5
  for (const auto& s : specs)
    if (s.paper_table == "3") t3 = &s;
  REQUIRE(t3 != nullptr);
  const Table t = build_table(*t3, cells, refs);
  bool seen_gw = false, seen_agw = false;
  for (const auto& r : t.rows) {
    if (r.dataset != "yacht" || r.metric != "elbo") continue;
    for (const auto& e : r.entries) {
      if (e.column == "DWP GW") {
        seen_gw = true;
        REQUIRE(e.ref);
        CHECK(e.ref->mean == doctest::Approx(1.90));
        REQUIRE(e.code_ref);
        CHECK(e.code_ours.value_or(0) == doctest::Approx(1.53));
        CHECK(e.code_agree == "yes");
      }
      if (e.column == "DWP A-GW") {
        seen_agw = true;
        REQUIRE(e.code_ref);
        CHECK_FALSE(e.code_ours);
        CHECK(e.code_agree == "n/a");
      }
    }
  }
  CHECK(seen_gw);
  CHECK(seen_agw);
  // The writers show it: the CSV's code columns, the Markdown's "code:" line.
  CHECK(to_csv(t).find(",1.50,0.02,1,1.53,yes") != std::string::npos);
  CHECK(to_markdown(t).find("code: 1.50 ± 0.02 (split 1) ✓") != std::string::npos);
}

TEST_CASE("tables: a table of times names the machines its cells ran on") {
  // Seconds per epoch depend on the machine: the runtime table's notes name each CPU and BLAS
  // kernel set its done cells ran on (from their manifests), with counts; other tables do not.
  const fs::path root = dkp::test::temp_dir("tables-machines") / "runs";
  std::string text = kAgwGrid;
  text.replace(text.find("family: agw-uci"), 15, "family: agw-runtime");
  const ex::Grid g = ex::parse_grid(text, "rt.yaml");
  size_t written = 0;
  for (const auto& c : g.cells) {
    if (c.dataset != "boston" || c.split > 1) continue;
    const fs::path dir = c.run_dir(root);
    fs::create_directories(dir);
    dkp::util::write_file_atomic(dir / "result.json",
                                 fmt::format("{{\"config_hash\": \"{}\", \"dataset\": \"{}\", "
                                             "\"epoch_time_s\": 0.5, \"elbo\": 1.0}}\n",
                                             c.hash(), c.dataset));
    const bool a = written++ % 2 == 0;
    dkp::util::write_file_atomic(
        dir / "manifest.json",
        fmt::format("{{\"config_hash\": \"{}\", \"cpu\": \"{}\", \"blas_core\": \"{}\"}}\n",
                    c.hash(), a ? "CPU A" : "CPU B", a ? "Haswell" : "Zen"));
  }
  // The paper's time for one column: shown, never judged (its machines are not ours), however
  // many splits are done.
  RefRow ref = paper_value("agw", "2", "boston", 2, "dgp", "global-inducing", "epoch_time_s", 0.463,
                           "0.463");
  ref.kernel = "se";
  const auto tables = ex::grid_tables(g, root, {ref});
  REQUIRE(!tables.empty());
  const Entry& dgp = entry(tables.front(), 0, "DGP");
  CHECK(dgp.n_done == 2);
  REQUIRE(dgp.ref);
  CHECK(dgp.agree == "n/a");
  const std::string notes = tables.front().notes;
  INFO(notes);
  CHECK(notes.find("Times measured on CPU A with OpenBLAS Haswell kernels (4 cells); CPU B with "
                   "OpenBLAS Zen kernels (4 cells). The paper's values, of its own machines, are "
                   "shown beside ours but not judged.") != std::string::npos);
  // The same cells under a table of ELBOs: no such line.
  const ex::Grid e = ex::parse_grid(kAgwGrid, "agwtest.yaml");
  for (const auto& t : ex::grid_tables(e, root, {}))
    CHECK(t.notes.find("Times measured") == std::string::npos);
}
