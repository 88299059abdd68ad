// report/summary: cell counts and the scoreboard line, the explanations CSV (wildcards, first
// match, errors naming the line), the results page and its figures (report::svg_scatter).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "report/scatter_svg.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

using namespace dkp::report;

namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

RefRow ref(double mean, double err) {
  RefRow r;
  r.mean = mean;
  r.mean_text = fmt::format("{:.2f}", mean);
  r.error = err;
  r.error_text = fmt::format("{:.2f}", err);
  r.error_kind = "se";
  return r;
}

Entry entry(size_t col, const std::string& label, int depth, const std::string& status,
            std::optional<double> mean, std::optional<double> se, int done, int expected,
            const std::string& agree, std::optional<RefRow> r = std::nullopt) {
  Entry e;
  e.col = col;
  e.column = label;
  e.depth = depth;
  e.status = status;
  e.mean = mean;
  e.se = se;
  e.shown_error = se;
  e.n_done = done;
  e.n_expected = expected;
  e.agree = agree;
  e.ref = r;
  if (r && r->error) e.ref_se = *r->error;
  return e;
}

Table table(const std::string& name, const std::string& paper, const std::string& number,
            const std::string& metric) {
  Table t;
  t.spec.name = name;
  t.spec.paper = paper;
  t.spec.paper_table = number;
  t.spec.title = "A paper on " + paper + " (2021), Table " + number + ": " + metric;
  t.spec.metrics = {metric};
  t.spec.row_keys = {"dataset", "depth"};
  ColumnSpec a, b;
  a.label = "DWP";
  b.label = "DGP";
  t.spec.columns = {a, b};
  return t;
}

Row row(const std::string& metric, const std::string& dataset, int depth, std::vector<Entry> e) {
  Row r;
  r.metric = metric;
  r.dataset = dataset;
  r.depth = depth;
  r.entries = std::move(e);
  return r;
}

// gw-table2 (ELBO): 7 planned entries (one more absent), 4 computed of which 2 complete (two are
// partial), 2 agree, 1 disagrees, 1 is not comparable (one split only). gw-table3 (test LL): 2
// complete, 1 agrees, 1 disagrees. dsvi-table4: no paper values at all.
std::vector<Table> tables() {
  Table a = table("gw-table2", "gw", "2", "elbo");
  a.rows.push_back(row("elbo", "yacht", 2,
                       {entry(0, "DWP", 2, "ok", -0.40, 0.01, 20, 20, "yes", ref(-0.41, 0.01)),
                        entry(1, "DGP", 2, "ok", 0.50, 0.01, 20, 20, "no", ref(0.20, 0.02))}));
  a.rows.push_back(
      row("elbo", "yacht", 3,
          {entry(0, "DWP", 3, "partial", -0.30, 0.02, 3, 20, "yes", ref(-0.31, 0.01)),
           entry(1, "DGP", 3, "partial", 0.10, std::nullopt, 1, 20, "n/a", ref(0.12, 0.01))}));
  a.rows.push_back(row("elbo", "boston", 2,
                       {entry(0, "DWP", 2, "missing", std::nullopt, std::nullopt, 0, 20, "n/a"),
                        entry(1, "DGP", 0, "absent", std::nullopt, std::nullopt, 0, 0, "n/a")}));
  a.rows.push_back(row("elbo", "boston", 3,
                       {entry(0, "DWP", 3, "failed", std::nullopt, std::nullopt, 0, 20, "n/a"),
                        entry(1, "DGP", 3, "running", std::nullopt, std::nullopt, 0, 20, "n/a")}));
  a.rows[0].entries[1].rule = "mean";  // as judge_table would set them
  a.rows[0].entries[1].tolerance = 0.045;
  Table b = table("gw-table3", "gw", "3", "test_ll");
  b.rows.push_back(row("test_ll", "yacht", 2,
                       {entry(0, "DWP", 2, "ok", -1.00, 0.05, 20, 20, "no", ref(-2.00, 0.10)),
                        entry(1, "DGP", 2, "ok", -1.10, 0.05, 20, 20, "yes", ref(-1.05, 0.02))}));
  Table c = table("dsvi-table4", "dsvi", "4", "test_ll");
  c.rows.push_back(row("test_ll", "boston", 0,
                       {entry(0, "DWP", 2, "ok", -2.5, 0.1, 20, 20, "n/a"),
                        entry(1, "DGP", 2, "missing", std::nullopt, std::nullopt, 0, 20, "n/a")}));
  return {a, b, c};
}

const std::string kExplanations =
    "table,metric,dataset,depth,column,note,link\n"
    "# comments and blank lines are skipped\n"
    "\n"
    "gw-table2,elbo,yacht,2,DGP,Collapsed DGP layers,disagreements.md#yacht-dgp\n"
    "gw-table2,,yacht,,,\"All yacht rows, with a comma\",\n"
    ",,,,,Catch-all,other.md\n";

}  // namespace

TEST_CASE("summary: cell counts and the scoreboard line") {
  const auto ts = tables();
  const CellCounts a = count_cells(ts[0]);
  CHECK(a.planned == 7);
  CHECK(a.computed == 4);
  CHECK(a.complete == 2);  // partial entries are computed, not complete
  CHECK(a.agree == 2);
  CHECK(a.disagree == 1);
  CHECK(a.not_comparable == 1);
  const CellCounts all = count_cells(ts);
  CHECK(all.planned == 11);
  CHECK(all.computed == 7);
  CHECK(all.complete == 5);
  CHECK(all.agree == 3);
  CHECK(all.disagree == 2);
  CHECK(all.not_comparable == 2);
  CHECK(scoreboard_line(ts) ==
        "7 of 11 planned cells computed; 3 agree with the paper, 2 disagree, 2 not comparable");
  auto with_extra = ts;
  with_extra.push_back(ts[0]);
  with_extra.back().extra = true;
  CHECK(scoreboard_line(with_extra) == scoreboard_line(ts));  // another protocol's table
  CHECK(scoreboard_line({}) ==
        "0 of 0 planned cells computed; 0 agree with the paper, 0 disagree, 0 not comparable");
}

TEST_CASE("summary: explanations match with wildcards, the first match wins") {
  const auto ts = tables();
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  REQUIRE(xs.size() == 3);
  CHECK(xs[0].depth == 2);
  CHECK(!xs[1].depth);
  CHECK(xs[1].note == "All yacht rows, with a comma");
  CHECK(xs[2].source == "expl.csv:6");
  const Table& a = ts[0];
  // yacht depth 2 DGP: the specific row; yacht depth 2 DWP: the yacht wildcard row.
  const Explanation* x = find_explanation(xs, a, a.rows[0], a.rows[0].entries[1]);
  REQUIRE(x);
  CHECK(x->note == "Collapsed DGP layers");
  x = find_explanation(xs, a, a.rows[0], a.rows[0].entries[0]);
  REQUIRE(x);
  CHECK(x->note == "All yacht rows, with a comma");
  // Another table: only the catch-all.
  const Table& b = ts[1];
  x = find_explanation(xs, b, b.rows[0], b.rows[0].entries[0]);
  REQUIRE(x);
  CHECK(x->note == "Catch-all");
  // First match wins: with the catch-all first, it takes everything.
  const std::vector<Explanation> reversed = {xs[2], xs[0]};
  x = find_explanation(reversed, a, a.rows[0], a.rows[0].entries[1]);
  REQUIRE(x);
  CHECK(x->note == "Catch-all");
  // No match: depth, column, metric and dataset are compared.
  const std::vector<Explanation> specific = {xs[0]};
  CHECK(find_explanation(specific, a, a.rows[1], a.rows[1].entries[1]) == nullptr);  // depth 3
  CHECK(find_explanation(specific, a, a.rows[0], a.rows[0].entries[0]) == nullptr);  // DWP
  CHECK(find_explanation(specific, b, b.rows[0], b.rows[0].entries[1]) == nullptr);  // table
  // A profile's table ("gw-table2-quick") matches the base name too.
  Table q = a;
  q.spec.name = "gw-table2-quick";
  q.profile = "quick";
  CHECK(find_explanation(specific, q, q.rows[0], q.rows[0].entries[1]) != nullptr);
  q.profile = "full";
  CHECK(find_explanation(specific, q, q.rows[0], q.rows[0].entries[1]) == nullptr);
  CHECK(find_explanation({}, a, a.rows[0], a.rows[0].entries[1]) == nullptr);
}

TEST_CASE("summary: explanations that explain no disagreement") {
  auto ts = tables();
  // Line 4 explains gw-table2's DGP (the first match); line 6 (catch-all) is the first match of
  // gw-table3's DWP; line 5 (all yacht rows of gw-table2) comes after line 4 for the one
  // disagreement it could match, so it explains nothing.
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  REQUIRE(xs.size() == 3);
  auto unused = unused_explanations(ts, xs);
  REQUIRE(unused.size() == 1);
  CHECK(unused[0]->source == "expl.csv:5");
  // Without the catch-all, gw-table3's disagreement is unexplained and all the rest is used.
  const std::vector<Explanation> first_two = {xs[0], xs[1]};
  unused = unused_explanations(ts, first_two);
  REQUIRE(unused.size() == 1);
  CHECK(unused[0]->source == "expl.csv:5");
  // Once gw-table2's DGP agrees, line 4 is left over too.
  ts[0].rows[0].entries[1].agree = "yes";
  unused = unused_explanations(ts, xs);
  REQUIRE(unused.size() == 2);
  CHECK(unused[0]->source == "expl.csv:4");
  CHECK(unused[1]->source == "expl.csv:5");
  // A table of another protocol explains nothing: its disagreements do not count.
  ts = tables();
  for (auto& t : ts) t.extra = true;
  CHECK(unused_explanations(ts, xs).size() == 3);
}

TEST_CASE("summary: a malformed explanations CSV throws DataError naming file:line") {
  const std::string head = "table,metric,dataset,depth,column,note,link\n";
  CHECK_THROWS_WITH_AS(parse_explanations(head + "a,b,c,,e,note,x\n" + "a,b,c,,e,note\n", "e.csv"),
                       doctest::Contains("e.csv:3: 6 fields, the header has 7"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + "\na,b,c,two,e,note,x\n", "e.csv"),
                       doctest::Contains("e.csv:3: depth is 'two'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + "a,b,c,0,e,note,x\n", "e.csv"),
                       doctest::Contains("e.csv:2: depth is '0'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + "a,b,c,,e,,x\n", "e.csv"),
                       doctest::Contains("e.csv:2: empty note"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + "a,b,c,,e,n,see here\n", "e.csv"),
                       doctest::Contains("e.csv:2: link 'see here'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations("table,metric,dataset,depht,column,note,link\n", "e.csv"),
                       doctest::Contains("e.csv:1: unknown column 'depht'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations("table,metric,dataset,depth,column,note\n", "e.csv"),
                       doctest::Contains("e.csv:1: header lacks column 'link'"), dkp::DataError);
  CHECK(parse_explanations("", "e.csv").empty());
  CHECK(parse_explanations(head, "e.csv").empty());
  // Files: an absent one gives none; a present one is parsed with its path in messages.
  const auto dir = dkp::test::temp_dir("explanations");
  CHECK(load_explanations(dir / "absent.csv").empty());
}

TEST_CASE("summary: the page") {
  const auto ts = tables();
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  const std::vector<Explanation> only_first = {xs[0]};
  const std::string md = summary_markdown(ts, only_first);
  CHECK(md.find("generated by `make tables` from the committed store `results/runs/`") !=
        std::string::npos);
  CHECK(md.find("**Overall: 7 of 11 planned cells computed; 3 agree with the paper, 2 disagree, "
                "2 not comparable.**") != std::string::npos);
  CHECK(md.find("| [gw-table2](tables/gw-table2.md) | gw, Table 2 | 7 | 4 | 2 | 2 | 1 | 1 |\n") !=
        std::string::npos);
  CHECK(md.find("| [gw-table3](tables/gw-table3.md) | gw, Table 3 | 2 | 2 | 2 | 1 | 1 | 0 |\n") !=
        std::string::npos);
  CHECK(md.find("| **all** | | 11 | 7 | 5 | 3 | 2 | 2 |\n") != std::string::npos);
  // One bullet per disagreement, with its explanation or none.
  CHECK(count(md, "\n- [") == 2);
  CHECK(
      md.find("- [gw-table2](tables/gw-table2.md), ELBO per datapoint, yacht, depth 2, DGP: ours "
              "0.50 ± 0.01 (se) vs paper 0.20 ± 0.02 (se) (rule mean; difference +0.300, tolerance "
              "0.045). "
              "Explanation: [Collapsed DGP layers](disagreements.md#yacht-dgp).\n") !=
      std::string::npos);
  CHECK(md.find("- [gw-table3](tables/gw-table3.md), test log-likelihood, yacht, depth 2, DWP: "
                "ours -1.00 ± 0.05 (se) vs paper -2.00 ± 0.10 (se)") != std::string::npos);
  CHECK(count(md, "No explanation yet.") == 1);
  // Figures: one per paper with comparable points, under the paper's name; none for dsvi.
  CHECK(md.find("### A paper on gw (2021)\n") != std::string::npos);
  CHECK(
      md.find("![A paper on gw (2021): ours against the paper's printed values](figures/gw.svg)") !=
      std::string::npos);
  CHECK(md.find("figures/dsvi.svg") == std::string::npos);
  CHECK(md.find("No cell has both our mean and the paper's value yet.") != std::string::npos);
  // Links relative to where the page goes.
  SummaryLinks links;
  links.tables = "../tables/";
  links.figures = "";
  const std::string md2 = summary_markdown(ts, {}, links);
  CHECK(md2.find("[gw-table3](../tables/gw-table3.md)") != std::string::npos);
  CHECK(md2.find("](gw.svg)") != std::string::npos);
  CHECK(count(md2, "No explanation yet.") == 2);
  CHECK(summary_markdown(ts, only_first) == md);  // deterministic
  // A partial disagreement says how many splits are done.
  auto partial = ts;
  partial[1].rows[0].entries[0].n_done = 5;
  partial[1].rows[0].entries[0].status = "partial";
  CHECK(summary_markdown(partial, {}).find("ours -1.00 ± 0.05 (se; 5/20 splits) vs paper") !=
        std::string::npos);
  // No disagreement at all.
  CHECK(summary_markdown({}, {}).find("None so far.") != std::string::npos);
}

TEST_CASE("summary: the scoreboard lists each paper's tables by number, papers as they come") {
  // As the grids give them: gw Table 3, dsvi Table 4, then gw Table 2 and an unnumbered gw table.
  const auto ts = tables();
  Table unnumbered = table("gw-extra", "gw", "", "elbo");
  const std::vector<Table> given = {ts[1], ts[2], ts[0], unnumbered};
  const std::string md = summary_markdown(given, {});
  const auto at = [&md](const std::string& name) {
    const size_t p = md.find("| [" + name + "](tables/" + name + ".md) |");
    REQUIRE(p != std::string::npos);
    return p;
  };
  CHECK(at("gw-table2") < at("gw-table3"));
  CHECK(at("gw-table3") < at("gw-extra"));
  CHECK(at("gw-extra") < at("dsvi-table4"));
  // The disagreements follow the same order.
  CHECK(md.find("- [gw-table2]") < md.find("- [gw-table3]"));
  // The counts do not depend on the order.
  CHECK(md.find("| **all** | | 11 | 7 | 5 | 3 | 2 | 2 |\n") != std::string::npos);
}

TEST_CASE("summary: a table of another protocol is listed apart and counted nowhere else") {
  const auto ts = tables();
  const std::string base = summary_markdown(ts, {});
  CHECK(base.find("## Beyond the papers' protocols") == std::string::npos);
  // gw-table3 of a profile marked `tables: true`: 2 complete entries, 1 disagreeing.
  auto with_extra = ts;
  Table x = ts[1];
  x.spec.name = "gw-table3-long";
  x.profile = "long";
  x.profile_description = "90,000 steps | not 30,000";
  x.extra = true;
  with_extra.push_back(x);
  const std::string md = summary_markdown(with_extra, {});
  // The scoreboard, its total and the disagreements are those of the papers' protocols alone.
  CHECK(md.find("**Overall: 7 of 11 planned cells computed; 3 agree with the paper, 2 disagree, "
                "2 not comparable.**") != std::string::npos);
  CHECK(md.find("| **all** | | 11 | 7 | 5 | 3 | 2 | 2 |\n") != std::string::npos);
  CHECK(count(md, "\n- [") == 2);
  CHECK(md.find("- [gw-table3-long]") == std::string::npos);
  // Its own section: planned, computed and complete, no verdicts.
  CHECK(md.find("## Beyond the papers' protocols") != std::string::npos);
  CHECK(md.find("| [gw-table3-long](tables/gw-table3-long.md) | gw, Table 3 | long | 90,000 "
                "steps \\| not 30,000 | 2 | 2 | 2 |\n") != std::string::npos);
  CHECK(md.find("## Beyond the papers' protocols") < md.find("## Figures"));
  // The figures are those without it, to the byte.
  CHECK(summary_figures(with_extra) == summary_figures(ts));
  // Only the extra table's entry moved, so the page is the base page plus that section.
  const auto start = md.find("## Beyond the papers' protocols");
  const auto end = md.find("## Figures");
  CHECK(md.substr(0, start) + md.substr(end) == base);
}

TEST_CASE("summary: figures, one panel per metric") {
  auto ts = tables();
  const auto figs = summary_figures(ts);
  REQUIRE(figs.size() == 1);  // dsvi has no paper values
  REQUIRE(figs.count("gw"));
  const std::string& svg = figs.at("gw");
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.size() > 7);
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
  CHECK(count(svg, "<line") == 2);  // y = x in each of the ELBO and test LL panels
  CHECK(count(svg, "<g>") == 2);
  CHECK(svg.find(">ELBO per datapoint</text>") != std::string::npos);
  CHECK(svg.find(">test log-likelihood</text>") != std::string::npos);
  CHECK(svg.find(">paper: test log-likelihood</text>") != std::string::npos);
  CHECK(svg.find(">ours: ELBO per datapoint</text>") != std::string::npos);
  CHECK(svg.find(">DWP</text>") != std::string::npos);  // legend
  CHECK(svg.find(">DGP</text>") != std::string::npos);
  CHECK(svg.find(">disagrees with the paper</text>") != std::string::npos);
  CHECK(svg.find(">not every split done</text>") != std::string::npos);  // yacht depth 3
  CHECK(svg.find(">4 entries: 2 agree, 1 disagree</text>") != std::string::npos);
  CHECK(svg.find(">2 entries: 1 agree, 1 disagree</text>") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  // An entry printed in two tables of the paper is drawn once.
  Table dup = ts[0];
  dup.spec.name = "gw-table1";
  ts.push_back(dup);
  const std::string svg2 = summary_figures(ts).at("gw");
  CHECK(svg2.find(">4 entries: 2 agree, 1 disagree</text>") != std::string::npos);
  CHECK(count(svg2, "<line") == 2);
}

TEST_CASE("svg_scatter: ranges, ticks, non-finite values, errors") {
  ScatterPanel p;
  p.title = "a & b";
  p.x_label = "paper";
  p.y_label = "ours";
  p.points = {{0.0, 0.1, 0.05, 0.0, 0, false},
              {1.0, 0.9, 0.0, 0.1, 1, true},
              {NAN, 1.0, 0.0, 0.0, 0, false},
              {0.5, 0.5, INFINITY, NAN, 1, false}};
  p.points[0].hollow = true;
  ScatterPanel empty;
  empty.title = "empty";
  ScatterOptions opt;
  opt.flag_label = "flag";
  opt.hollow_label = "hollow";
  const std::string svg = svg_scatter("T", {p, empty}, {"one", "two"}, opt);
  CHECK(count(svg, "<line") == 2);
  CHECK(svg.find("a &amp; b") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  CHECK(svg.find(">one</text>") != std::string::npos);
  CHECK(svg.find(">flag</text>") != std::string::npos);
  CHECK(svg.find(">hollow</text>") != std::string::npos);
  // The hollow point (series 0: a circle) outlined in the series' colour, the others filled.
  CHECK(count(svg, "fill=\"white\" stroke=\"#0072B2\"") == 1);
  CHECK(count(svg, "fill=\"#D55E00\"") == 2 + 1);  // series 1's two points and its legend
  // The range -0.05..1.0 widened by 4% (-0.092..1.042): ticks 0.0, 0.2, .., 1.0 on each axis.
  const std::string one = svg_scatter("T", {p}, {"one", "two"});
  CHECK(count(one, ">0.0</text>") == 2);
  CHECK(count(one, ">0.4</text>") == 2);
  CHECK(count(one, ">1.0</text>") == 2);
  CHECK(one.find(">-0.2</text>") == std::string::npos);
  CHECK(one.find(">1.2</text>") == std::string::npos);
  CHECK(one.find(">flag</text>") == std::string::npos);  // no flag label, no legend entry
  // Markers: a circle for series 0 (one finite point), a square for series 1 (two), the ring.
  CHECK(count(svg, "<rect x=") == 2 + 2 + 1);  // 2 frames, 2 squares, the legend's square
  CHECK(count(svg, "r=\"7.5\"") == 2);         // the flagged point and the legend's ring
  CHECK_THROWS_AS(svg_scatter("T", {p}, {"one"}), dkp::Error);
  opt.max_columns = 0;
  CHECK_THROWS_AS(svg_scatter("T", {p}, {"one", "two"}, opt), dkp::Error);
}

TEST_CASE("svg_scatter: a log-scale panel") {
  ScatterPanel p;
  p.title = "variance";
  p.log_scale = true;
  // 2e-6 .. 5e-2 (the compositional toy's range), a point at 0 (left out) and an error bar
  // reaching below 0 (drawn to the axis' end).
  p.points = {{2e-6, 2.1e-6, 0.0, 0.0, 0, false},
              {5e-2, 4.9e-2, 0.0, 0.0, 1, false},
              {0.0, 1e-3, 0.0, 0.0, 0, false},
              {1e-4, 1.3e-4, 0.0, 5e-4, 1, false}};
  const std::string svg = svg_scatter("T", {p}, {"one", "two"});
  // log10 range -5.70 .. -1.29 widened by 4%: ticks at 10^-5 .. 10^-2 on each axis.
  for (const int e : {-5, -4, -3, -2}) {
    CAPTURE(e);
    CHECK(count(svg, fmt::format(">{}</tspan>", e)) == 2);
  }
  CHECK(svg.find(">-6</tspan>") == std::string::npos);
  CHECK(svg.find(">-1</tspan>") == std::string::npos);
  CHECK(count(svg, "<circle") == 1 + 1);  // series 0 and its legend: the point at 0 is not drawn
  CHECK(count(svg, "<rect x=") == 1 + 2 + 1);  // frame, series 1's two squares, legend square
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  // The error bar's lower end at the bottom of the plot area (y0 + side = 74 + 220).
  CHECK(svg.find("V294.00") != std::string::npos);
  // One decade or less: widened to whole decades (10^-3 .. 10^-2).
  ScatterPanel narrow;
  narrow.log_scale = true;
  narrow.points = {{2e-3, 3e-3, 0.0, 0.0, 0, false}};
  const std::string n = svg_scatter("T", {narrow}, {"one"});
  CHECK(count(n, ">-3</tspan>") == 2);
  CHECK(count(n, ">-2</tspan>") == 2);
}
