// report/stability: entries judged again on their first few splits (verdict_stability), and the
// results page's section that lists the verdicts more splits changed.
#include <doctest/doctest.h>

#include <string>

#include "report/stability.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"

using namespace dkp::report;

namespace {

Entry judged(const std::string& column, size_t col, double mean, int done,
             const std::string& agree) {
  Entry e;
  e.column = column;
  e.col = col;
  e.depth = 2;
  e.mean = mean;
  e.se = 0.01;
  e.n_done = done;
  e.n_expected = 20;
  e.status = done == 20 ? "ok" : "partial";
  e.agree = agree;
  RefRow r;
  r.mean = 2.02;
  r.mean_text = "2.02";
  e.ref = r;
  return e;
}

// One table, one row (yacht, depth 2) of four columns, with the verdicts given.
Table one_row(const std::vector<std::pair<int, std::string>>& done_agree,
              const std::vector<double>& means) {
  Table t;
  t.spec.name = "gw-table2";
  t.spec.paper = "gw";
  t.spec.title = "A paper (2021), Table 2: ELBO";
  t.spec.metrics = {"elbo"};
  t.spec.row_keys = {"dataset", "depth"};
  Row r;
  r.metric = "elbo";
  r.dataset = "yacht";
  r.depth = 2;
  const char* labels[] = {"DWP", "DGP", "A-GW", "AB-GW"};
  for (size_t i = 0; i < done_agree.size(); ++i) {
    ColumnSpec c;
    c.label = labels[i];
    t.spec.columns.push_back(c);
    r.entries.push_back(judged(labels[i], i, means[i], done_agree[i].first, done_agree[i].second));
  }
  t.rows.push_back(r);
  return t;
}

}  // namespace

TEST_CASE("stability: verdicts of the first splits against all, entry by entry") {
  // DWP: agreed on 3, disagrees on 20. DGP: the same verdict both ways. A-GW: disagreed on 3,
  // agrees on 20. AB-GW: no more splits than the few (not compared).
  const Table few = one_row({{3, "yes"}, {3, "no"}, {3, "no"}, {3, "yes"}}, {1.98, 1.5, 0.0, 1.9});
  const Table all =
      one_row({{20, "no"}, {20, "no"}, {20, "yes"}, {3, "yes"}}, {1.97, 1.5, 0.05, 1.9});
  const VerdictStability s = verdict_stability({few}, {all}, 3);
  CHECK(s.few_splits == 3);
  CHECK(s.compared == 3);
  CHECK(s.agree_to_disagree == 1);
  CHECK(s.disagree_to_agree == 1);
  REQUIRE(s.changes.size() == 2);
  CHECK(s.changes[0].all.column == "DWP");
  CHECK(s.changes[0].few.n_done == 3);
  CHECK(s.changes[0].all.n_done == 20);
  CHECK(s.changes[1].all.column == "A-GW");
  CHECK(s.changes[0].table.spec.name == "gw-table2");
  CHECK(s.changes[0].row.dataset == "yacht");

  // Entries without a verdict either way are not compared; nor are tables of other protocols.
  Table all_na = all;
  all_na.rows[0].entries[0].agree = "n/a";
  CHECK(verdict_stability({few}, {all_na}, 3).compared == 2);
  Table few_extra = few, all_extra = all;
  few_extra.extra = all_extra.extra = true;
  CHECK(verdict_stability({few_extra}, {all_extra}, 3).compared == 0);
  // An entry of `all` that `few` lacks (another table name) is not compared.
  Table other = all;
  other.spec.name = "gw-table3";
  CHECK(verdict_stability({few}, {other}, 3).compared == 0);
}

TEST_CASE("stability: the results page's section") {
  const Table few = one_row({{3, "yes"}, {3, "no"}}, {1.98, 1.5});
  const Table all = one_row({{20, "no"}, {20, "no"}}, {1.97, 1.5});
  VerdictStability s = verdict_stability({few}, {all}, 3);
  s.claims_few = "1 supported, 0 contradicted, 2 undecided";
  const std::string page = summary_markdown({all}, {}, {}, nullptr, nullptr, &s);
  INFO(page);
  CHECK(page.find("## Verdicts with more splits") != std::string::npos);
  CHECK(page.find("of 2 such entries, **1 changed verdict** (1 agreed on 3 splits and disagree "
                  "with all, 0 the other way)") != std::string::npos);
  CHECK(page.find("On their first 3 splits the papers' claims read: 1 supported, 0 "
                  "contradicted, 2 undecided.") != std::string::npos);
  CHECK(page.find("- [gw-table2](tables/gw-table2.md), ELBO per datapoint, yacht, depth 2, DWP: "
                  "ours 1.98 on 3 splits (agrees), then 1.97 on 20 splits (disagrees); paper "
                  "2.02.") != std::string::npos);
  // Without the report, no section.
  CHECK(summary_markdown({all}, {}).find("## Verdicts with more splits") == std::string::npos);
}
