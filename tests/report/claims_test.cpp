// report/claims: the paired t-test and the splits that would decide a comparison (hand-computed
// from Student-t tables), a synthetic store aggregated by build_table and evaluated for each
// verdict, the claim's verdict rule, the cost of missing splits, claims.yaml's errors naming the
// line and key, and the claims page and the results page's claim counts.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "report/claims.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "util/error.hpp"

using namespace dkp::report;

namespace {

// Student-t 0.975 quantiles from the tables (Abramowitz and Stegun 26.10 / any statistics text).
constexpr double kT1 = 12.706205, kT2 = 4.302653, kT3 = 3.182446, kT10 = 2.228139;

CellRecord cell(const std::string& model, const std::string& dataset, int split,
                std::optional<double> value, const std::string& metric = "elbo", double train_s = 0,
                double predict_s = 0) {
  CellRecord r;
  r.dataset = dataset;
  r.split = split;
  r.model = model;
  r.depth = 2;
  r.kernel = "se";
  r.steps = 1000;
  r.state = value ? "done" : "missing";
  if (value) {
    r.values[metric] = *value;
    r.values["train_s"] = train_s;
    r.values["predict_s"] = predict_s;
  }
  return r;
}

ColumnSpec column(const std::string& label, const std::string& model) {
  ColumnSpec c;
  c.label = label;
  c.sel.model = model;
  c.ref_model = model;
  return c;
}

TableSpec spec(const std::string& metric) {
  TableSpec s;
  s.name = "toy-table1";
  s.paper = "toy";
  s.paper_table = "1";
  s.title = "A toy paper (2024), Table 1: " + metric;
  s.metrics = {metric};
  s.row_keys = {"dataset"};
  s.columns = {column("A", "a"), column("B", "b")};
  s.decimals = 2;
  return s;
}

RefRow ref(const std::string& model, const std::string& dataset, double mean) {
  RefRow r;
  r.paper = "toy";
  r.table = "1";
  r.dataset = dataset;
  r.model = model;
  r.metric = "elbo";
  r.mean = mean;
  r.mean_text = std::to_string(mean);
  return r;
}

// Three splits each of two columns on three datasets, and one more dataset of one split:
//   d1: A - B = {1.0, 1.1, 0.8}: mean 0.9667, sd sqrt(0.07 / 3) = 0.15275, interval 0.9667
//   +- 4.302653 x
//       0.15275 / sqrt(3) = +- 0.37946 -> [0.587, 1.346]: supported.
//   d2: A - B = {-1.0, -0.95, -1.1}: mean -1.0167, sd sqrt(0.035 / 6) = 0.076376, +- 0.18973 ->
//       [-1.206, -0.827]:
//       contradicted.
//   d3: A - B = {1, 2, 3}: mean 2, sd 1, +- 4.302653 / sqrt(3) = 2.48414 -> [-0.484, 4.484]:
//       undecided; 10 splits planned (3..9 missing), 4 pairs decide (n = 4: 3.182446 / 2 =
//       1.591 < 2; n = 3: 2.484 > 2), so one more split: A's cells cost 3600 s, B's 1800 s ->
//       1.5 CPU h.
//   solo: one split planned and done: undecided, not testable.
std::vector<CellRecord> store() {
  std::vector<CellRecord> c;
  const double a1[] = {1.0, 1.2, 1.1}, b1[] = {0.0, 0.1, 0.3};
  const double a2[] = {0.0, 0.1, 0.2}, b2[] = {1.0, 1.05, 1.3};
  for (int s = 0; s < 3; ++s) {
    c.push_back(cell("a", "d1", s, a1[s]));
    c.push_back(cell("b", "d1", s, b1[s]));
    c.push_back(cell("a", "d2", s, a2[s]));
    c.push_back(cell("b", "d2", s, b2[s]));
  }
  for (int s = 0; s < 10; ++s) {
    const bool done = s < 3;
    c.push_back(
        cell("a", "d3", s, done ? std::optional<double>(s + 1.0) : std::nullopt, "elbo", 3590, 10));
    c.push_back(
        cell("b", "d3", s, done ? std::optional<double>(0.0) : std::nullopt, "elbo", 1800, 0));
  }
  c.push_back(cell("a", "solo", 0, 0.5));
  c.push_back(cell("b", "solo", 0, 0.1));
  return c;
}

Claim claim(const std::string& id, std::vector<std::string> datasets = {}) {
  Claim c;
  c.id = id;
  c.paper = "toy";
  c.quote = "A is better than B.";
  c.section = "Section 1";
  c.table = "toy-table1";
  c.metrics = {"elbo"};
  c.better = {"A"};
  c.worse = {"B"};
  c.datasets = std::move(datasets);
  c.source = "claims.yaml:2";
  return c;
}

const ClaimRow& row_of(const ClaimResult& r, const std::string& dataset) {
  for (const auto& x : r.rows)
    if (x.dataset == dataset) return x;
  FAIL("no row " << dataset);
  static ClaimRow none;
  return none;
}

}  // namespace

TEST_CASE("claims: the paired t-test and its quantiles, by hand") {
  CHECK(t_quantile_975(1) == doctest::Approx(kT1).epsilon(1e-6));
  CHECK(t_quantile_975(2) == doctest::Approx(kT2).epsilon(1e-6));
  CHECK(t_quantile_975(10) == doctest::Approx(kT10).epsilon(1e-6));
  const PairedTest t = paired_t_test({1, 2, 3});
  CHECK(t.n == 3);
  CHECK(t.mean == doctest::Approx(2.0));
  CHECK(t.sd == doctest::Approx(1.0));
  REQUIRE(t.lo);
  CHECK(*t.lo == doctest::Approx(2.0 - kT2 / std::sqrt(3.0)).epsilon(1e-6));
  CHECK(*t.hi == doctest::Approx(2.0 + kT2 / std::sqrt(3.0)).epsilon(1e-6));
  const PairedTest one = paired_t_test({0.7});
  CHECK(one.n == 1);
  CHECK(one.mean == doctest::Approx(0.7));
  CHECK_FALSE(one.lo);
  CHECK(paired_t_test({}).n == 0);
}

TEST_CASE("claims: splits that would decide a difference, by hand") {
  // mean 2, sd 1: n = 3 gives 4.302653 / 1.732 = 2.484 > 2, n = 4 gives 3.182446 / 2 = 1.591.
  CHECK(kT2 / std::sqrt(3.0) > 2.0);
  CHECK(kT3 / 2.0 < 2.0);
  CHECK(pairs_to_decide(2.0, 1.0) == 4L);
  CHECK(pairs_to_decide(-2.0, 1.0) == 4L);  // either direction decides
  // mean 0.5, sd 1: n = 17: 2.119905 / 4.1231 = 0.5142 > 0.5; n = 18: 2.109816 / 4.2426 = 0.4973.
  CHECK(pairs_to_decide(0.5, 1.0) == 18L);
  CHECK_FALSE(pairs_to_decide(0.0, 1.0));
  CHECK(pairs_to_decide(1.0, 0.0) == 2L);
}

TEST_CASE("claims: a cell's cost counts the steps before a resume") {
  CellRecord c = cell("a", "d", 0, 1.0, "elbo", 100, 5);
  CHECK(*cell_cost_s(c) == doctest::Approx(105));
  c.values["resumed_from_step"] = 750;  // 100 s for the last 250 of 1000 steps
  CHECK(*cell_cost_s(c) == doctest::Approx(405));
  c.values.erase("train_s");
  CHECK_FALSE(cell_cost_s(c));
}

TEST_CASE("claims: each verdict on a synthetic store") {
  std::vector<RefRow> refs = {ref("a", "d1", 1.5), ref("b", "d1", 1.0)};
  const Table t = build_table(spec("elbo"), store(), refs);
  const auto results =
      evaluate_claims({claim("all"), claim("d1", {"d1"}), claim("d1-d3", {"d1", "d3"}),
                       claim("d3", {"d3"}), claim("solo", {"solo"})},
                      {t});
  REQUIRE(results.size() == 5);
  const ClaimResult& all = results[0];
  REQUIRE(all.evaluated);
  REQUIRE(all.rows.size() == 4);

  const ClaimRow& d1 = row_of(all, "d1");
  CHECK(d1.test.n == 3);
  CHECK(d1.test.mean == doctest::Approx(2.9 / 3));
  CHECK(d1.test.sd == doctest::Approx(std::sqrt(0.07 / 3 / 1.0)).epsilon(1e-9));
  CHECK(*d1.test.lo ==
        doctest::Approx(2.9 / 3 - kT2 * std::sqrt(0.07 / 3) / std::sqrt(3.0)).epsilon(1e-6));
  CHECK(d1.verdict == Verdict::supported);
  REQUIRE(d1.paper_effect);
  CHECK(*d1.paper_effect == doctest::Approx(0.5));

  const ClaimRow& d2 = row_of(all, "d2");
  CHECK(d2.test.mean == doctest::Approx(-3.05 / 3));
  CHECK(*d2.test.hi < 0);
  CHECK(*d2.test.hi ==
        doctest::Approx(-3.05 / 3 + kT2 * std::sqrt(0.035 / 6) / std::sqrt(3.0)).epsilon(1e-6));
  CHECK(d2.verdict == Verdict::contradicted);
  CHECK_FALSE(d2.paper_effect);

  const ClaimRow& d3 = row_of(all, "d3");
  CHECK(d3.verdict == Verdict::undecided);
  CHECK(d3.planned == 10);
  CHECK(d3.pairs_needed == 4L);
  CHECK(d3.more_splits == 1);
  REQUIRE(d3.cost_h);
  CHECK(*d3.cost_h == doctest::Approx(1.5));  // (3590 + 10) s of A's + 1800 s of B's

  const ClaimRow& solo = row_of(all, "solo");
  CHECK(solo.verdict == Verdict::undecided);
  CHECK(solo.test.n == 1);
  CHECK(solo.planned == 1);
  CHECK_FALSE(solo.pairs_needed);

  // The claim: one contradicted comparison contradicts it; d1 alone supports it; d1 and d3 (one
  // of two testable comparisons supported, not more than half) leave it undecided.
  CHECK(all.verdict == Verdict::contradicted);
  CHECK(all.supported == 1);
  CHECK(all.contradicted == 1);
  CHECK(all.undecided == 2);
  CHECK(results[1].verdict == Verdict::supported);
  CHECK(results[2].verdict == Verdict::undecided);
  CHECK(results[3].verdict == Verdict::undecided);
  CHECK(results[4].verdict == Verdict::undecided);  // no comparison has two pairs

  const ClaimCounts n = count_claims(results);
  CHECK(n.supported == 1);
  CHECK(n.contradicted == 1);
  CHECK(n.undecided == 3);
  CHECK(claim_counts_text(n) == "1 supported, 1 contradicted, 3 undecided");

  const std::string page = claims_markdown(results);
  CHECK(page.find("**Claims: 1 supported, 1 contradicted, 3 undecided (of 5).**") !=
        std::string::npos);
  CHECK(page.find("**Verdict: contradicted**") != std::string::npos);
  CHECK(page.find("| d3 | A − B | — | +2.000 [-0.484, +4.484] | 3 of 10 | undecided | 4 splits "
                  "(1 more: 1.5 CPU h) |") != std::string::npos);
  CHECK(page.find("| solo | A − B | — | +0.400 | 1 | undecided | one split in the protocol: not "
                  "testable |") != std::string::npos);
  CHECK(page.find("| d1 | A − B | +0.500 | +0.967 [+0.587, +1.346] | 3 | supported |  |") !=
        std::string::npos);
  // The cheapest decisions: d3 (decidable within its 10 splits) is listed under each claim that
  // holds it, before the claims' sections; solo (one split) and the decided rows are not.
  const auto cheap = page.find("## Cheapest decisions");
  REQUIRE(cheap != std::string::npos);
  const std::string section = page.substr(cheap, page.find("\n## ", cheap + 1) - cheap);
  CHECK(section.find("| [all](#all) | d3 | A − B | 4 of 10 | 1 more | 1.5 CPU h |") !=
        std::string::npos);
  CHECK(section.find("| [d1-d3](#d1-d3) | d3 | A − B | 4 of 10 | 1 more | 1.5 CPU h |") !=
        std::string::npos);
  CHECK(section.find("solo") == std::string::npos);
  CHECK(section.find("| d1 |") == std::string::npos);
  CHECK(section.find("3 of 3 shown") != std::string::npos);
  CHECK(cheap < page.find("## all\n"));
}

TEST_CASE("claims: beyond the protocol's splits, and one pair so far") {
  // d3's three splits only, and a dataset with one of five splits paired.
  std::vector<CellRecord> cells;
  for (int s = 0; s < 3; ++s) {
    cells.push_back(cell("a", "d3", s, s + 1.0, "elbo", 3600, 0));
    cells.push_back(cell("b", "d3", s, 0.0, "elbo", 3600, 0));
  }
  for (int s = 0; s < 5; ++s) {
    cells.push_back(
        cell("a", "d4", s, s == 0 ? std::optional<double>(1.0) : std::nullopt, "elbo", 720, 0));
    cells.push_back(
        cell("b", "d4", s, s < 2 ? std::optional<double>(0.0) : std::nullopt, "elbo", 1440, 0));
  }
  // A dataset planned but not computed: listed, not tested.
  for (int s = 0; s < 2; ++s) {
    cells.push_back(cell("a", "d5", s, std::nullopt));
    cells.push_back(cell("b", "d5", s, std::nullopt));
  }
  const Table t = build_table(spec("elbo"), cells, {});
  const auto r = evaluate_claims({claim("x")}, {t});
  CHECK(r[0].rows.size() == 2);
  CHECK(r[0].not_computed == std::vector<std::string>{"d5"});
  CHECK(r[0].n_not_computed == 1);
  const ClaimRow& d3 = row_of(r[0], "d3");
  CHECK(d3.planned == 3);
  CHECK(d3.pairs_needed == 4L);  // more than the 3 splits planned
  CHECK(d3.more_splits == 0);
  CHECK_FALSE(d3.cost_h);
  const ClaimRow& d4 = row_of(r[0], "d4");
  CHECK(d4.test.n == 1);
  CHECK(d4.more_splits == 1);
  // The next split is split 1, where B is done: only A's cell (720 s) is missing.
  CHECK(*d4.cost_h == doctest::Approx(0.2));
  const std::string page = claims_markdown(r);
  CHECK(page.find("not within the paper's 3 splits (needs 4)") != std::string::npos);
  CHECK(page.find("one pair: no spread yet; the next split: 0.2 CPU h") != std::string::npos);
  CHECK(page.find("): d5.") != std::string::npos);
  // Neither row is decidable within its protocol's splits at its observed spread: no section.
  CHECK(page.find("## Cheapest decisions") == std::string::npos);
}

TEST_CASE("claims: lower is better turns the difference round") {
  std::vector<CellRecord> cells;
  const double a[] = {1.0, 1.1, 0.9}, b[] = {2.0, 2.2, 2.1};
  for (int s = 0; s < 3; ++s) {
    cells.push_back(cell("a", "d1", s, a[s], "test_rmse"));
    cells.push_back(cell("b", "d1", s, b[s], "test_rmse"));
  }
  const Table t = build_table(spec("test_rmse"), cells, {});
  Claim c = claim("rmse");
  c.metrics = {"test_rmse"};
  c.higher = false;
  const auto r = evaluate_claims({c}, {t});
  const ClaimRow& x = row_of(r[0], "d1");
  CHECK(x.test.mean == doctest::Approx(1.1));  // B - A: {1.0, 1.1, 1.2}
  CHECK(x.test.sd == doctest::Approx(0.1));
  CHECK(x.verdict == Verdict::supported);
}

TEST_CASE("claims: a claim's verdict follows the stated rule") {
  auto rowv = [](Verdict v, int n) {
    ClaimRow r;
    r.verdict = v;
    r.test.n = n;
    return r;
  };
  using V = Verdict;
  CHECK(claim_verdict({}) == V::undecided);
  CHECK(claim_verdict({rowv(V::supported, 3)}) == V::supported);
  CHECK(claim_verdict({rowv(V::supported, 3), rowv(V::supported, 3), rowv(V::undecided, 3)}) ==
        V::supported);
  CHECK(claim_verdict({rowv(V::supported, 3), rowv(V::undecided, 3)}) == V::undecided);
  // One-pair comparisons do not count against it.
  CHECK(claim_verdict({rowv(V::supported, 3), rowv(V::undecided, 1)}) == V::supported);
  CHECK(claim_verdict({rowv(V::supported, 20), rowv(V::supported, 20), rowv(V::contradicted, 3)}) ==
        V::contradicted);
  CHECK(claim_verdict({rowv(V::undecided, 1)}) == V::undecided);
}

TEST_CASE("claims: claims.yaml is parsed, and its errors name the line and key") {
  const std::string good =
      "claims:\n"                      // 1
      "  - id: a-above-b\n"            // 2
      "    paper: toy\n"               // 3
      "    quote: \"A is better.\"\n"  // 4
      "    section: Section 1\n"       // 5
      "    table: toy-table1\n"        // 6
      "    metric: [elbo, test_ll]\n"  // 7
      "    better: A\n"                // 8
      "    worse: [B, C]\n"            // 9
      "    datasets: [d1]\n"           // 10
      "    depths: [2, 5]\n"           // 11
      "    direction: higher\n";       // 12
  const auto claims = parse_claims(good, "claims.yaml");
  REQUIRE(claims.size() == 1);
  const Claim& c = claims[0];
  CHECK(c.id == "a-above-b");
  CHECK(c.metrics == std::vector<std::string>{"elbo", "test_ll"});
  CHECK(c.better == std::vector<std::string>{"A"});
  CHECK(c.worse == std::vector<std::string>{"B", "C"});
  CHECK(c.depths == std::vector<int>{2, 5});
  CHECK(c.higher);
  CHECK(c.source == "claims.yaml:2");
  CHECK(c.where.at("better") == "claims.yaml:8");

  auto error = [](const std::string& text) {
    try {
      parse_claims(text, "claims.yaml");
    } catch (const dkp::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // A second claim without its quote: the message names the claim's line (13) and the key.
  const std::string missing = good +
                              "  - id: b\n"              // 13
                              "    paper: toy\n"         // 14
                              "    section: S\n"         // 15
                              "    table: toy-table1\n"  // 16
                              "    metric: elbo\n"       // 17
                              "    better: A\n"          // 18
                              "    worse: B\n"           // 19
                              "    direction: higher\n";
  const std::string m = error(missing);
  CHECK(m.find("claims.yaml:13:") != std::string::npos);
  CHECK(m.find("quote") != std::string::npos);
  CHECK(m.find("missing") != std::string::npos);
  // A direction against the metric's: its line.
  std::string lower = good;
  lower.replace(lower.find("direction: higher"), 17, "direction: lower");
  const std::string d = error(lower);
  CHECK(d.find("claims.yaml:12:") != std::string::npos);
  CHECK(d.find("direction") != std::string::npos);
  // An unknown key: its line.
  std::string typo = good;
  typo.replace(typo.find("    datasets"), 12, "    dataset");
  const std::string u = error(typo);
  CHECK(u.find("claims.yaml:10:") != std::string::npos);
  CHECK(u.find("dataset") != std::string::npos);
  // A paper_metric beside two tested metrics: its line (13, after the good claim's 12).
  const std::string pm = error(good + "    paper_metric: elbo\n");
  CHECK(pm.find("claims.yaml:13:") != std::string::npos);
  CHECK(pm.find("exactly one tested metric") != std::string::npos);
  // Invalid YAML: its line.
  CHECK(error("claims:\n  - id: [x\n").find("claims.yaml:") != std::string::npos);
  // A duplicate id.
  std::string twice = good + good.substr(std::string("claims:\n").size());
  CHECK(error(twice).find("duplicate id") != std::string::npos);
}

TEST_CASE("claims: a column or dataset that is not its table's is an error naming the key") {
  const Table t = build_table(spec("elbo"), store(), {});
  Claim c = claim("bad");
  c.where["better"] = "claims.yaml:8";
  c.better = {"Z"};
  try {
    evaluate_claims({c}, {t});
    FAIL("no error");
  } catch (const dkp::ConfigError& e) {
    const std::string m = e.what();
    CHECK(m.find("claims.yaml:8") != std::string::npos);
    CHECK(m.find("'better'") != std::string::npos);
    CHECK(m.find("'Z'") != std::string::npos);
  }
  c = claim("bad", {"nowhere"});
  CHECK_THROWS_AS(evaluate_claims({c}, {t}), dkp::ConfigError);
  c = claim("bad");
  c.paper = "other";
  CHECK_THROWS_AS(evaluate_claims({c}, {t}), dkp::ConfigError);
  // A table not among those of the call: not evaluated, not an error.
  c = claim("elsewhere");
  c.table = "toy-table9";
  const auto r = evaluate_claims({c}, {t});
  CHECK_FALSE(r[0].evaluated);
  CHECK(count_claims(r).not_evaluated == 1);
}

TEST_CASE("claims: the results page shows the claim counts") {
  const Table t = build_table(spec("elbo"), store(), {});
  const auto results = evaluate_claims({claim("all"), claim("d1", {"d1"})}, {t});
  const std::string page = summary_markdown({t}, {}, {}, &results);
  CHECK(page.find("The papers' claims: 1 supported, 1 contradicted, 0 undecided.**") !=
        std::string::npos);
  CHECK(
      page.find("| [d1](claims.md#d1) | toy | [toy-table1](tables/toy-table1.md) | supported |") !=
      std::string::npos);
  // Without claims, no claims section.
  CHECK(summary_markdown({t}, {}).find("The papers' claims") == std::string::npos);
}

TEST_CASE("claims: a metric the paper does not print, with the paper's effect from another") {
  // The table prints elbo (with the paper's values) and elbo_tail (ours only). The claim tests
  // elbo_tail: A - B on d1 is {2, 2.2, 1.9} there (not elbo's {1, 1.1, 0.8}), while the paper's
  // effect is read from elbo's row: 1.5 - 1.0.
  std::vector<CellRecord> cells = store();
  for (auto& c : cells) {
    if (c.dataset == "d1" && c.values.count("elbo"))
      c.values["elbo_tail"] = c.values["elbo"] * (c.model == "a" ? 2.0 : 1.0);
  }
  TableSpec s = spec("elbo");
  s.metrics = {"elbo", "elbo_tail"};
  s.ours_only = {"elbo_tail"};
  const Table t = build_table(s, cells, {ref("a", "d1", 1.5), ref("b", "d1", 1.0)});
  Claim c = claim("tail", {"d1"});
  c.metrics = {"elbo_tail"};
  c.paper_metric = "elbo";
  const auto r = evaluate_claims({c}, {t});
  REQUIRE(r[0].rows.size() == 1);
  // a = {2.0, 2.4, 2.2}, b = {0.0, 0.1, 0.3}: differences {2.0, 2.3, 1.9}.
  CHECK(r[0].rows[0].metric == "elbo_tail");
  CHECK(r[0].rows[0].test.mean == doctest::Approx(6.2 / 3));
  REQUIRE(r[0].rows[0].paper_effect);
  CHECK(*r[0].rows[0].paper_effect == doctest::Approx(0.5));
  // Without paper_metric there is no paper's effect (the paper prints no elbo_tail).
  c.paper_metric = "";
  CHECK_FALSE(evaluate_claims({c}, {t})[0].rows[0].paper_effect);
  // A paper_metric that is not the table's is an error naming the key.
  c.paper_metric = "test_ll";
  CHECK_THROWS_WITH_AS(evaluate_claims({c}, {t}), doctest::Contains("'paper_metric'"),
                       dkp::ConfigError);
  // The ours-only row is not counted among the paper's cells on the scoreboard.
  TableSpec plain = spec("elbo");
  const CellCounts with = count_cells(t), without = count_cells(build_table(plain, cells, {}));
  CHECK(with.planned == without.planned);
  CHECK(with.computed == without.computed);
}
