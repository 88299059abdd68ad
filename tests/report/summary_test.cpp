// report/summary: cell counts and the scoreboard line, the explanations CSV (explicit keys, the
// sign and size of the miss, the first match; errors naming the line and field), the marks of an
// unexplained disagreement in the tables, the results page and its figures (report::svg_scatter).
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

const std::string kHeader =
    "table,metric,dataset,depth,kernel,column,sign,min_abs,max_abs,note,link\n";

// Line 4: gw-table2's yacht depth-2 DGP (ours 0.50, paper 0.20: +0.30) and nothing else. Line 5:
// two tables, metrics, datasets, depths and columns, differences above of 0.1 to 2. Line 6:
// gw-table3's yacht DWP (ours -1.00, paper -2.00: +1.00), but for a difference below.
const std::string kExplanations =
    kHeader +
    "# comments and blank lines are skipped\n"
    "\n"
    "gw-table2,elbo,yacht,2,-,DGP,above,0.15,0.6,Collapsed DGP layers,disagreements.md#yacht-dgp\n"
    "gw-table2|gw-table3,elbo|test_ll,yacht|boston,2|3,-,DWP|DGP,above,0.1,2,\"Two tables, with a "
    "comma\",disagreements.md#two\n"
    "gw-table3,test_ll,yacht,2,-,DWP,below,0.5,2,The opposite sign,disagreements.md#other\n";

}  // namespace

TEST_CASE("summary: cell counts and the scoreboard line") {
  const auto ts = tables();
  const CellCounts a = count_cells(ts[0]);
  CHECK(a.planned == 7);
  CHECK(a.computed == 4);
  CHECK(a.complete == 2);  // partial entries are computed, not complete
  CHECK(a.agree == 2);
  CHECK(a.disagree == 1);
  CHECK(a.unexplained == 1);  // no explanation attached
  CHECK(a.not_comparable == 1);
  const CellCounts all = count_cells(ts);
  CHECK(all.planned == 11);
  CHECK(all.computed == 7);
  CHECK(all.complete == 5);
  CHECK(all.agree == 3);
  CHECK(all.disagree == 2);
  CHECK(all.unexplained == 2);
  CHECK(all.not_comparable == 2);
  CHECK(scoreboard_line(ts) ==
        "7 of 11 planned cells computed; 3 agree with the paper, 2 disagree "
        "(2 unexplained), 2 not comparable");
  auto with_extra = ts;
  with_extra.push_back(ts[0]);
  with_extra.back().extra = true;
  CHECK(scoreboard_line(with_extra) == scoreboard_line(ts));  // another protocol's table
  CHECK(scoreboard_line({}) ==
        "0 of 0 planned cells computed; 0 agree with the paper, 0 disagree "
        "(0 unexplained), 0 not comparable");
  // With the explanations attached, one of the two disagreements is explained.
  auto attached = ts;
  attach_explanations(attached, parse_explanations(kExplanations, "expl.csv"));
  CHECK(count_cells(attached).unexplained == 0);
  auto one = ts;
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  attach_explanations(one, {xs[0]});
  CHECK(count_cells(one).unexplained == 1);
  CHECK(scoreboard_line(one) ==
        "7 of 11 planned cells computed; 3 agree with the paper, 2 disagree "
        "(1 unexplained), 2 not comparable");
}

TEST_CASE("summary: an explanation names its entries explicitly and covers a sign and a size") {
  auto ts = tables();
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  REQUIRE(xs.size() == 3);
  CHECK(xs[0].tables == std::vector<std::string>{"gw-table2"});
  CHECK(xs[0].depths == std::vector<int>{2});
  CHECK(xs[0].kernels.empty());  // "-": no kernel rows
  CHECK(xs[0].sign == Explanation::Sign::above);
  CHECK(xs[0].min_abs == 0.15);
  CHECK(xs[0].max_abs == 0.6);
  CHECK(xs[1].tables == std::vector<std::string>{"gw-table2", "gw-table3"});
  CHECK(xs[1].depths == std::vector<int>{2, 3});
  CHECK(xs[1].columns == std::vector<std::string>{"DWP", "DGP"});
  CHECK(xs[1].note == "Two tables, with a comma");
  CHECK(xs[2].sign == Explanation::Sign::below);
  CHECK(xs[2].source == "expl.csv:6");
  Table& a = ts[0];
  Entry& dgp = a.rows[0].entries[1];  // ours 0.50, paper 0.20
  // The first row that names the entry and covers its difference wins.
  const Explanation* x = find_explanation(xs, a, a.rows[0], dgp);
  REQUIRE(x);
  CHECK(x->note == "Collapsed DGP layers");
  // gw-table3's DWP, +1.00: line 5; line 6 names it but for a difference below.
  Table& b = ts[1];
  Entry& dwp = b.rows[0].entries[0];
  x = find_explanation(xs, b, b.rows[0], dwp);
  REQUIRE(x);
  CHECK(x->source == "expl.csv:5");
  CHECK(xs[2].names(b, b.rows[0], dwp));
  CHECK(!xs[2].matches(b, b.rows[0], dwp));

  SUBCASE("a sign-flipped miss is unexplained by a row written for the other sign") {
    dwp.mean = -3.00;  // ours - paper = -1.00
    x = find_explanation(xs, b, b.rows[0], dwp);
    REQUIRE(x);
    CHECK(x->source == "expl.csv:6");  // the row written for a miss below
    const std::vector<Explanation> above_only = {xs[0], xs[1]};
    CHECK(find_explanation(above_only, b, b.rows[0], dwp) == nullptr);
    attach_explanations(ts, above_only);
    CHECK(b.explanations_attached);
    CHECK(dwp.explanation.empty());
    CHECK(dwp.explanation_near == "expl.csv:5");
    CHECK(is_unexplained(b, dwp));
    CHECK(!is_unexplained(a, dgp));
    CHECK(dgp.explanation == "Collapsed DGP layers");
    CHECK(dgp.explanation_source == "expl.csv:4");
    CHECK(dgp.explanation_link == "disagreements.md#yacht-dgp");
    // The tables say it: Markdown, LaTeX, CSV; and the page.
    const std::string md = to_markdown(b);
    CHECK(md.find("| -3.00 ± 0.05 ✗ unexplained |") != std::string::npos);
    CHECK(md.find("✗ unexplained: a disagreement that no row of results/explanations.csv "
                  "explains") != std::string::npos);
    CHECK(to_markdown(a).find("✗ unexplained") == std::string::npos);
    CHECK(to_markdown(a).find("0.50 ± 0.01 ✗ |") != std::string::npos);
    CHECK(to_latex(b).find("$\\times^{?}$}") != std::string::npos);
    CHECK(to_latex(a).find("\\times^{?}") == std::string::npos);
    const std::string csv = to_csv(b);
    CHECK(csv.find(",wider_spread,explained\n") != std::string::npos);
    CHECK(csv.find(",0,no\n") != std::string::npos);
    CHECK(to_csv(a).find(",0,yes\n") != std::string::npos);
    const std::string page = summary_markdown(ts, above_only);
    CHECK(page.find("ours -3.00 ± 0.05 (se) vs paper -2.00 ± 0.10 (se) (difference -1.000, "
                    "tolerance 0.000). Unexplained (expl.csv:5 names this entry, for another "
                    "sign or size of difference).\n") != std::string::npos);
  }
  SUBCASE("a miss outside the size range is unexplained") {
    dgp.mean = 1.50;  // +1.30: beyond line 4's 0.6, within line 5's 2
    x = find_explanation(xs, a, a.rows[0], dgp);
    REQUIRE(x);
    CHECK(x->source == "expl.csv:5");
    dgp.mean = 3.00;  // +2.80: beyond both
    CHECK(find_explanation(xs, a, a.rows[0], dgp) == nullptr);
    dgp.mean = 0.32;  // +0.12: below line 4's 0.15, within line 5's 0.1 to 2
    x = find_explanation(xs, a, a.rows[0], dgp);
    REQUIRE(x);
    CHECK(x->source == "expl.csv:5");
    dgp.mean = 0.25;  // +0.05: below both
    CHECK(find_explanation(xs, a, a.rows[0], dgp) == nullptr);
    attach_explanations(ts, xs);
    CHECK(is_unexplained(a, dgp));
    CHECK(dgp.explanation_near == "expl.csv:4; expl.csv:5");
    CHECK(count_cells(a).unexplained == 1);
  }
  SUBCASE("the paired rule's compared differences decide the sign, not the means") {
    dgp.mean = 0.10;  // mean - paper = -0.10, but the compared differences give +0.30
    dgp.compared_ours = -0.10;
    dgp.compared_paper = -0.40;
    REQUIRE(compared_difference(dgp));
    CHECK(*compared_difference(dgp) == doctest::Approx(0.30));
    x = find_explanation(xs, a, a.rows[0], dgp);
    REQUIRE(x);
    CHECK(x->source == "expl.csv:4");
  }
  SUBCASE("every key is compared: depth, column, table (full name), kernel") {
    const std::vector<Explanation> first = {xs[0]};
    CHECK(find_explanation(first, a, a.rows[1], a.rows[1].entries[1]) == nullptr);  // depth 3
    CHECK(!first[0].names(a, a.rows[0], a.rows[0].entries[0]));                     // DWP
    CHECK(!first[0].names(b, b.rows[0], dwp));                                      // table
    Table q = a;
    q.spec.name = "gw-table2-quick";
    q.profile = "quick";
    CHECK(!first[0].names(q, q.rows[0], q.rows[0].entries[1]));  // a profile's table: not named
    Row with_kernel = a.rows[0];
    with_kernel.kernel = "se";
    CHECK(!first[0].names(a, with_kernel, with_kernel.entries[1]));  // "-": no kernel rows only
    auto se = parse_explanations(
        kHeader + "gw-table2,elbo,yacht,2,se|relu,DGP,above,0.1,1,SE rows,x.md#se\n", "e.csv");
    CHECK(se[0].names(a, with_kernel, with_kernel.entries[1]));
    CHECK(!se[0].names(a, a.rows[0], a.rows[0].entries[1]));
    Entry no_depth = dgp;
    no_depth.depth = 0;
    CHECK(!first[0].names(a, a.rows[0], no_depth));
    auto dash = parse_explanations(
        kHeader + "gw-table2,elbo,yacht,-,-,DGP,above,0.1,1,No depth,x.md#d\n", "e.csv");
    CHECK(dash[0].depths.empty());
    CHECK(dash[0].names(a, a.rows[0], no_depth));
    CHECK(!dash[0].names(a, a.rows[0], dgp));
    CHECK(find_explanation({}, a, a.rows[0], dgp) == nullptr);
  }
}

TEST_CASE("summary: explanations attach to the papers' protocols only, and again afresh") {
  auto ts = tables();
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  ts[1].extra = true;
  attach_explanations(ts, xs);
  CHECK(ts[0].explanations_attached);
  CHECK(!ts[1].explanations_attached);
  CHECK(ts[1].rows[0].entries[0].explanation.empty());
  CHECK(!is_unexplained(ts[1], ts[1].rows[0].entries[0]));
  CHECK(to_markdown(ts[1]).find("✗ unexplained") == std::string::npos);
  CHECK(ts[0].rows[0].entries[1].explanation == "Collapsed DGP layers");
  // Attached again with none: what the first call set is gone.
  ts[1].extra = false;
  attach_explanations(ts, {});
  CHECK(ts[0].rows[0].entries[1].explanation.empty());
  CHECK(is_unexplained(ts[0], ts[0].rows[0].entries[1]));
  CHECK(is_unexplained(ts[1], ts[1].rows[0].entries[0]));
  // An agreeing entry is never unexplained.
  CHECK(!is_unexplained(ts[0], ts[0].rows[0].entries[0]));
}

TEST_CASE("summary: explanations that explain no disagreement") {
  auto ts = tables();
  // Line 4 explains gw-table2's DGP (the first match); line 5 is the first match of gw-table3's
  // DWP; line 6 names that entry but for a miss below, so it explains nothing.
  const auto xs = parse_explanations(kExplanations, "expl.csv");
  REQUIRE(xs.size() == 3);
  auto unused = unused_explanations(ts, xs);
  REQUIRE(unused.size() == 1);
  CHECK(unused[0]->source == "expl.csv:6");
  // Once gw-table2's DGP agrees, line 4 is left over too.
  ts[0].rows[0].entries[1].agree = "yes";
  unused = unused_explanations(ts, xs);
  REQUIRE(unused.size() == 2);
  CHECK(unused[0]->source == "expl.csv:4");
  CHECK(unused[1]->source == "expl.csv:6");
  // When gw-table3's miss changes sign, line 6 explains it and line 5 nothing.
  ts = tables();
  ts[1].rows[0].entries[0].mean = -3.00;
  unused = unused_explanations(ts, xs);
  REQUIRE(unused.size() == 1);
  CHECK(unused[0]->source == "expl.csv:5");
  // A table of another protocol explains nothing: its disagreements do not count.
  ts = tables();
  for (auto& t : ts) t.extra = true;
  CHECK(unused_explanations(ts, xs).size() == 3);
}

TEST_CASE("summary: a malformed explanations CSV throws DataError naming file:line and field") {
  const std::string& head = kHeader;
  const std::string ok = "gw-table2,elbo,yacht,2,-,DGP,above,0.1,0.5,note,x.md#a";
  CHECK(parse_explanations(head + ok + "\n", "e.csv").size() == 1);
  // A row with one field changed from `ok`.
  const auto with = [&ok](size_t field, const std::string& value) {
    std::vector<std::string> f;
    size_t pos = 0;
    while (true) {
      const size_t comma = ok.find(',', pos);
      f.push_back(ok.substr(pos, comma == std::string::npos ? comma : comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    f.at(field) = value;
    std::string line;
    for (size_t i = 0; i < f.size(); ++i) line += (i ? "," : "") + f[i];
    return line + "\n";
  };
  // No empty field means "any": each is an error naming the field.
  const std::vector<std::string> names = {"table",   "metric", "dataset", "depth",
                                          "kernel",  "column", "sign",    "min_abs",
                                          "max_abs", "note",   "link"};
  for (size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    const std::string message = "e.csv:3: field '" + names[i] + "' is empty";
    CHECK_THROWS_WITH_AS(parse_explanations(head + "\n" + with(i, ""), "e.csv"),
                         doctest::Contains(message.c_str()), dkp::DataError);
  }
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(0, "-"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'table' is '-'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(2, "yacht||boston"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'dataset' ('yacht||boston') has an empty"),
                       dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(5, "DGP|"), "e.csv"),
                       doctest::Contains("field 'column' ('DGP|') has an empty"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(3, "two"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'depth' has 'two'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(3, "2|0"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'depth' has '0'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(
      parse_explanations(head + with(6, "worse"), "e.csv"),
      doctest::Contains("e.csv:2: field 'sign' is 'worse', expected below or above"),
      dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(6, "below|above"), "e.csv"),
                       doctest::Contains("field 'sign' is 'below|above'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(7, "-0.1"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'min_abs' is '-0.1', expected a number"),
                       dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(8, "lots"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'max_abs' is 'lots'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(7, "0.6"), "e.csv"),
                       doctest::Contains("e.csv:2: fields 'min_abs' and 'max_abs': 0.6 > 0.5"),
                       dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + with(10, "see here"), "e.csv"),
                       doctest::Contains("e.csv:2: field 'link' is 'see here'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations(head + ok + "\n" + "a,b\n", "e.csv"),
                       doctest::Contains("e.csv:3: 2 fields, the header has 11"), dkp::DataError);
  // The old header (seven columns, wildcards) is refused.
  CHECK_THROWS_WITH_AS(parse_explanations("table,metric,dataset,depth,column,note,link\n", "e.csv"),
                       doctest::Contains("e.csv:1: header lacks column 'kernel'"), dkp::DataError);
  CHECK_THROWS_WITH_AS(parse_explanations("table,metric,dataset,depht,column,note,link\n", "e.csv"),
                       doctest::Contains("e.csv:1: unknown column 'depht'"), dkp::DataError);
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
  CHECK(md.find("**Overall: 7 of 11 planned cells computed; 3 agree with the paper, 2 disagree "
                "(1 unexplained), 2 not comparable.**") != std::string::npos);
  CHECK(md.find("| table | paper | planned | computed | complete | agree | disagree | unexplained "
                "| not comparable |\n") != std::string::npos);
  CHECK(
      md.find("| [gw-table2](tables/gw-table2.md) | gw, Table 2 | 7 | 4 | 2 | 2 | 1 | 0 | 1 |\n") !=
      std::string::npos);
  CHECK(
      md.find("| [gw-table3](tables/gw-table3.md) | gw, Table 3 | 2 | 2 | 2 | 1 | 1 | 1 | 0 |\n") !=
      std::string::npos);
  CHECK(md.find("| **all** | | 11 | 7 | 5 | 3 | 2 | 1 | 2 |\n") != std::string::npos);
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
  CHECK(count(md, " Unexplained.\n") == 1);
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
  CHECK(count(md2, " Unexplained.\n") == 2);
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
  CHECK(md.find("| **all** | | 11 | 7 | 5 | 3 | 2 | 2 | 2 |\n") != std::string::npos);
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
  CHECK(md.find("**Overall: 7 of 11 planned cells computed; 3 agree with the paper, 2 disagree "
                "(2 unexplained), 2 not comparable.**") != std::string::npos);
  CHECK(md.find("| **all** | | 11 | 7 | 5 | 3 | 2 | 2 | 2 |\n") != std::string::npos);
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
