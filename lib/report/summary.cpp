#include "report/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "report/scatter_svg.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/parse.hpp"

namespace dkp::report {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kExplanationColumns = {"table",   "metric", "dataset", "depth",
                                                      "kernel",  "column", "sign",    "min_abs",
                                                      "max_abs", "note",   "link"};

// Text for a Markdown table cell: no column breaks, no HTML, no emphasis markers.
std::string md_cell(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|' || c == '*' || c == '\\' || c == '`') {
      out += '\\';
      out += c;
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

// The metric an entry is compared on: the column's reference metric (elbo_diff), else the row's.
std::string ref_metric_of(const Table& t, const Row& r, const Entry& e) {
  const auto& c = t.spec.columns.at(e.col);
  return c.ref_metric.empty() ? r.metric : c.ref_metric;
}

// "Deep kernel processes (Aitchison, Yang and Ober 2021)" from the first table's title (the text
// before ", Table"), else the paper key.
std::string paper_name(const std::vector<Table>& tables, const std::string& paper) {
  for (const auto& t : tables) {
    if (t.spec.paper != paper) continue;
    const auto pos = t.spec.title.find(", Table");
    if (pos != std::string::npos && pos > 0) return t.spec.title.substr(0, pos);
  }
  return paper;
}

// A file stem from a paper key: [A-Za-z0-9_-] kept, anything else '_'.
std::string figure_stem(const std::string& paper) {
  std::string s;
  for (const char c : paper) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    s += ok ? c : '_';
  }
  return s;
}

std::vector<std::string> papers_of(const std::vector<Table>& tables) {
  std::vector<std::string> out;
  for (const auto& t : tables) {
    if (t.spec.paper.empty()) continue;
    if (std::find(out.begin(), out.end(), t.spec.paper) == out.end()) out.push_back(t.spec.paper);
  }
  return out;
}

struct PaperFigure {
  std::string stem, name;
  std::vector<std::string> series;
  std::vector<ScatterPanel> panels;
  int points = 0;
};

// Ours against the paper's for every entry of the paper's tables with both values; an entry
// shared by two tables (same metric, kernel, dataset, depth and column) is drawn once.
PaperFigure paper_figure(const std::vector<Table>& tables, const std::string& paper) {
  PaperFigure f;
  f.stem = figure_stem(paper);
  f.name = paper_name(tables, paper);
  std::vector<std::string> metrics;
  std::map<std::string, std::vector<ScatterPoint>> by_metric;
  std::map<std::string, int> agree_by_metric;
  std::set<std::string> seen, log_metrics;
  for (const auto& t : tables) {
    if (t.spec.paper != paper) continue;
    for (const auto& r : t.rows) {
      for (const auto& e : r.entries) {
        if (!e.mean || !e.ref || !std::isfinite(*e.mean) || !std::isfinite(e.ref->mean)) continue;
        const std::string metric = ref_metric_of(t, r, e);
        const std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", metric, r.kernel,
                                            r.dataset, e.depth, e.column);
        if (!seen.insert(key).second) continue;
        auto it = std::find(f.series.begin(), f.series.end(), e.column);
        if (it == f.series.end()) it = f.series.insert(f.series.end(), e.column);
        if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) {
          metrics.push_back(metric);
        }
        ScatterPoint p;
        p.x = e.ref->mean;
        p.y = *e.mean;
        p.x_err = e.ref_se;
        p.y_err = e.se.value_or(0.0);
        p.series = static_cast<size_t>(it - f.series.begin());
        p.flagged = e.agree == "no";
        p.hollow = e.n_done < e.n_expected;
        by_metric[metric].push_back(p);
        // Metrics a table prints in scientific notation span orders of magnitude: log axes.
        const auto& sci = t.spec.scientific;
        if (std::find(sci.begin(), sci.end(), r.metric) != sci.end() ||
            std::find(sci.begin(), sci.end(), metric) != sci.end()) {
          log_metrics.insert(metric);
        }
        if (e.agree == "yes") ++agree_by_metric[metric];
        ++f.points;
      }
    }
  }
  for (const auto& m : metrics) {
    ScatterPanel p;
    p.title = metric_title(m);
    p.points = by_metric[m];
    int disagree_n = 0;
    for (const auto& q : p.points) disagree_n += q.flagged;
    const int agree_n = agree_by_metric[m];
    p.subtitle = fmt::format("{} {}: {} agree, {} disagree", p.points.size(),
                             p.points.size() == 1 ? "entry" : "entries", agree_n, disagree_n);
    p.x_label = "paper: " + metric_title(m);  // the title may end in its unit, "(%)"
    p.y_label = "ours: " + metric_title(m);
    p.log_scale = log_metrics.count(m) > 0;
    f.panels.push_back(std::move(p));
  }
  return f;
}

std::string entry_where(const Table& t, const Row& r, const Entry& e) {
  std::string s = metric_title(ref_metric_of(t, r, e));
  if (!r.kernel.empty()) s += ", kernel " + r.kernel;
  s += ", " + r.dataset;
  if (e.depth > 0) s += fmt::format(", depth {}", e.depth);
  s += ", " + e.column;
  return s;
}

std::string link_or_text(const std::string& text, const std::string& target) {
  return target.empty() ? text : "[" + text + "](" + target + ")";
}

}  // namespace

namespace {

bool listed(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

}  // namespace

bool Explanation::names(const Table& t, const Row& r, const Entry& e) const {
  if (!listed(tables, t.spec.name)) return false;
  if (!listed(metrics, r.metric) && !listed(metrics, ref_metric_of(t, r, e))) return false;
  if (!listed(datasets, r.dataset)) return false;
  if (depths.empty() ? e.depth != 0
                     : std::find(depths.begin(), depths.end(), e.depth) == depths.end()) {
    return false;
  }
  if (kernels.empty() ? !r.kernel.empty() : !listed(kernels, r.kernel)) return false;
  return listed(columns, e.column);
}

bool Explanation::matches(const Table& t, const Row& r, const Entry& e) const {
  if (!names(t, r, e)) return false;
  const std::optional<double> d = compared_difference(e);
  if (!d || !std::isfinite(*d)) return false;
  if (sign == Sign::below ? !(*d < 0) : !(*d > 0)) return false;
  const double a = std::fabs(*d);
  return a >= min_abs && a <= max_abs;
}

std::optional<double> compared_difference(const Entry& e) {
  const std::optional<double> ours = e.compared_ours ? e.compared_ours : e.mean;
  std::optional<double> paper = e.compared_paper;
  if (!paper && e.ref) paper = e.ref->mean;
  if (!ours || !paper) return std::nullopt;
  return *ours - *paper;
}

std::vector<Explanation> parse_explanations(const std::string& text, const std::string& filename) {
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  std::map<std::string, size_t> col;
  size_t n_cols = 0;
  std::vector<Explanation> out;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = fmt::format("{}:{}", filename, line_no);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (line[line.find_first_not_of(" \t")] == '#') continue;
    const auto f = split_csv_line(line);
    if (col.empty()) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (std::find(kExplanationColumns.begin(), kExplanationColumns.end(), f[i]) ==
            kExplanationColumns.end()) {
          throw DataError(
              fmt::format("{}: unknown column '{}' (expected table,metric,dataset,depth,kernel,"
                          "column,sign,min_abs,max_abs,note,link)",
                          where, f[i]));
        }
        if (!col.emplace(f[i], i).second) {
          throw DataError(fmt::format("{}: column '{}' twice", where, f[i]));
        }
      }
      for (const auto& c : kExplanationColumns) {
        if (!col.count(c)) throw DataError(fmt::format("{}: header lacks column '{}'", where, c));
      }
      n_cols = f.size();
      continue;
    }
    if (f.size() != n_cols) {
      throw DataError(fmt::format("{}: {} fields, the header has {}", where, f.size(), n_cols));
    }
    // Every field is given: an empty one is an error, never "any".
    auto get = [&](const std::string& name) {
      const std::string& v = f[col.at(name)];
      if (v.find_first_not_of(" \t") == std::string::npos) {
        throw DataError(
            fmt::format("{}: field '{}' is empty (every field is explicit)", where, name));
      }
      return v;
    };
    // A '|'-separated list of values; "-" only where `dash` allows it (it gives an empty list).
    auto list = [&](const std::string& name, bool dash) {
      const std::string v = get(name);
      if (v == "-") {
        if (!dash) {
          throw DataError(
              fmt::format("{}: field '{}' is '-' (only depth and kernel take '-')", where, name));
        }
        return std::vector<std::string>{};
      }
      std::vector<std::string> items;
      size_t pos = 0;
      while (true) {
        const size_t bar = v.find('|', pos);
        const std::string item = v.substr(pos, bar == std::string::npos ? bar : bar - pos);
        if (item.empty() || item == "-") {
          throw DataError(
              fmt::format("{}: field '{}' ('{}') has an empty or '-' item", where, name, v));
        }
        items.push_back(item);
        if (bar == std::string::npos) break;
        pos = bar + 1;
      }
      return items;
    };
    Explanation x;
    x.tables = list("table", false);
    x.metrics = list("metric", false);
    x.datasets = list("dataset", false);
    for (const auto& d : list("depth", true)) {
      const auto v = util::parse_integer(d);
      if (!v || *v < 1 || *v > 1000) {
        throw DataError(fmt::format(
            "{}: field 'depth' has '{}', expected positive integers ('|' between them) or '-'",
            where, d));
      }
      x.depths.push_back(static_cast<int>(*v));
    }
    x.kernels = list("kernel", true);
    x.columns = list("column", false);
    const std::string sign = get("sign");
    if (sign == "below") {
      x.sign = Explanation::Sign::below;
    } else if (sign == "above") {
      x.sign = Explanation::Sign::above;
    } else {
      throw DataError(
          fmt::format("{}: field 'sign' is '{}', expected below or above", where, sign));
    }
    for (const char* name : {"min_abs", "max_abs"}) {
      const std::string v = get(name);
      const auto d = util::parse_double(v);
      if (!d || !std::isfinite(*d) || *d < 0) {
        throw DataError(
            fmt::format("{}: field '{}' is '{}', expected a number >= 0", where, name, v));
      }
      (std::string(name) == "min_abs" ? x.min_abs : x.max_abs) = *d;
    }
    if (x.min_abs > x.max_abs) {
      throw DataError(fmt::format("{}: fields 'min_abs' and 'max_abs': {} > {}", where,
                                  get("min_abs"), get("max_abs")));
    }
    x.note = get("note");
    x.link = get("link");
    x.source = where;
    if (x.link.find_first_of(" \t()<>") != std::string::npos) {
      throw DataError(fmt::format(
          "{}: field 'link' is '{}', not a Markdown link target (no spaces, parentheses or <>)",
          where, x.link));
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<Explanation> load_explanations(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return {};
  return parse_explanations(util::read_file(file), file.string());
}

const Explanation* find_explanation(const std::vector<Explanation>& explanations, const Table& t,
                                    const Row& r, const Entry& e) {
  for (const auto& x : explanations)
    if (x.matches(t, r, e)) return &x;
  return nullptr;
}

namespace {

/// The tables of the papers' protocols, or those of other protocols (Table::extra), in the page's
/// order: the papers in the order they first appear, each paper's tables by their number (Table 2
/// after Table 1 whichever grid holds it), tables without a number last, ties as given.
std::vector<Table> tables_where_extra(const std::vector<Table>& tables, bool extra) {
  std::vector<Table> out;
  std::vector<std::string> papers;
  for (const auto& t : tables) {
    if (t.extra != extra) continue;
    out.push_back(t);
    if (std::find(papers.begin(), papers.end(), t.spec.paper) == papers.end())
      papers.push_back(t.spec.paper);
  }
  const auto key = [&papers](const Table& t) {
    const auto paper = std::find(papers.begin(), papers.end(), t.spec.paper) - papers.begin();
    const std::optional<long long> number = util::parse_integer(t.spec.paper_table);
    return std::pair{paper, number.value_or(std::numeric_limits<long long>::max())};
  };
  std::stable_sort(out.begin(), out.end(),
                   [&key](const Table& a, const Table& b) { return key(a) < key(b); });
  return out;
}

// An entry the page lists as a disagreement (and an explanation may explain).
bool listed_disagreement(const Entry& e) {
  return e.agree == "no" && e.mean && e.ref;
}

}  // namespace

std::vector<const Explanation*> unused_explanations(const std::vector<Table>& tables,
                                                    const std::vector<Explanation>& explanations) {
  std::set<const Explanation*> used;
  for (const auto& t : tables) {
    if (t.extra) continue;
    for (const auto& r : t.rows) {
      for (const auto& e : r.entries) {
        if (!listed_disagreement(e)) continue;
        if (const Explanation* x = find_explanation(explanations, t, r, e)) used.insert(x);
      }
    }
  }
  std::vector<const Explanation*> out;
  for (const auto& x : explanations) {
    if (!used.count(&x)) out.push_back(&x);
  }
  return out;
}

void attach_explanations(std::vector<Table>& tables, const std::vector<Explanation>& explanations) {
  for (auto& t : tables) {
    t.explanations_attached = !t.extra;
    for (auto& r : t.rows) {
      for (auto& e : r.entries) {
        e.explanation.clear();
        e.explanation_link.clear();
        e.explanation_source.clear();
        e.explanation_near.clear();
        if (t.extra || !listed_disagreement(e)) continue;
        if (const Explanation* x = find_explanation(explanations, t, r, e)) {
          e.explanation = x->note;
          e.explanation_link = x->link;
          e.explanation_source = x->source;
          continue;
        }
        for (const auto& x : explanations) {
          if (!x.names(t, r, e)) continue;
          e.explanation_near += (e.explanation_near.empty() ? "" : "; ") + x.source;
        }
      }
    }
  }
}

CellCounts& CellCounts::operator+=(const CellCounts& o) {
  planned += o.planned;
  computed += o.computed;
  complete += o.complete;
  agree += o.agree;
  disagree += o.disagree;
  unexplained += o.unexplained;
  not_comparable += o.not_comparable;
  return *this;
}

CellCounts count_cells(const Table& t) {
  CellCounts c;
  for (const auto& r : t.rows) {
    const auto& own = t.spec.ours_only;
    if (std::find(own.begin(), own.end(), r.metric) != own.end()) continue;
    for (const auto& e : r.entries) {
      if (e.status == "absent") continue;
      ++c.planned;
      if (e.status == "ok") ++c.complete;
      if (!e.mean) continue;
      ++c.computed;
      if (e.agree == "yes") {
        ++c.agree;
      } else if (e.agree == "no") {
        ++c.disagree;
        if (listed_disagreement(e) && e.explanation.empty()) ++c.unexplained;
      } else {
        ++c.not_comparable;
      }
    }
  }
  return c;
}

CellCounts count_cells(const std::vector<Table>& tables) {
  CellCounts c;
  for (const auto& t : tables) c += count_cells(t);
  return c;
}

std::string scoreboard_line(const std::vector<Table>& tables) {
  const CellCounts c = count_cells(tables_where_extra(tables, false));
  return fmt::format(
      "{} of {} planned cells computed; {} agree with the paper, {} disagree ({} unexplained), {} "
      "not comparable",
      c.computed, c.planned, c.agree, c.disagree, c.unexplained, c.not_comparable);
}

namespace {

/// "paper, Table N" (or the paper alone when the table has no number).
std::string paper_and_table(const Table& t) {
  if (t.spec.paper_table.empty()) return t.spec.paper;
  return t.spec.paper + ", Table " + t.spec.paper_table;
}

}  // namespace

namespace {

std::string verdict_word(const std::string& agree) {
  return agree == "yes" ? "agrees" : "disagrees";
}

// Our mean on the entry's splits and the verdict, "1.98 on 3 splits (agrees)".
std::string judged_text(const Table& t, const Row& r, const Entry& e) {
  return fmt::format("{} on {} split{} ({})", format_value(e.mean, t.spec, r.metric), e.n_done,
                     e.n_done == 1 ? "" : "s", verdict_word(e.agree));
}

std::string stability_section(const VerdictStability& s, const SummaryLinks& links) {
  const int n = s.few_splits;
  const int changed = s.agree_to_disagree + s.disagree_to_agree;
  std::string o = "## Verdicts with more splits\n\n";
  o += fmt::format(
      "Each entry with more than {} splits done is judged again on its first {} alone (`dkp "
      "tables --splits {}`, the same rules), to show what a verdict on {} splits is worth: of {} "
      "such entries, **{} changed verdict** ({} agreed on {} splits and disagree with all, {} the "
      "other way).",
      n, n, n, n, s.compared, changed, s.agree_to_disagree, n, s.disagree_to_agree);
  if (!s.claims_few.empty()) {
    o += fmt::format(" On their first {} splits the papers' claims read: {}.", n, s.claims_few);
  }
  o += "\n\n";
  for (const auto& c : s.changes) {
    const Table& t = c.table;
    const Row& r = c.row;
    const std::string paper = c.all.ref ? c.all.ref->mean_text : std::string("-");
    o += fmt::format("- [{}]({}{}.md), {}: ours {}, then {}; paper {}.\n", md_cell(t.spec.name),
                     links.tables, t.spec.name, md_cell(entry_where(t, r, c.all)),
                     judged_text(t, r, c.few), judged_text(t, r, c.all), md_cell(paper));
  }
  if (s.changes.empty()) o += "None changed.\n";
  o += "\n";
  return o;
}

}  // namespace

std::string summary_markdown(const std::vector<Table>& all_tables,
                             const std::vector<Explanation>& explanations,
                             const SummaryLinks& links, const std::vector<ClaimResult>* claims,
                             const ProvenanceCounts* provenance,
                             const VerdictStability* stability) {
  std::vector<Table> tables = tables_where_extra(all_tables, false);
  attach_explanations(tables, explanations);
  const std::vector<Table> others = tables_where_extra(all_tables, true);
  std::string o = "<!-- Generated by dkp tables --summary (make tables). Do not edit. -->\n\n";
  o += "# Results: our reproductions against the papers\n\n";
  o += "This page is generated by `make tables` from the committed store `results/runs/` (the "
       "runs' result files) and the papers' printed values in `results/reference/`. Do not edit "
       "it by hand: rerun `make tables`. The explanations of disagreements come from "
       "`results/explanations.csv`, whose rows each name the entries they explain (tables, "
       "metric, datasets, depths, kernel, columns) and the sign and size range of the difference "
       "ours − paper they account for; a disagreement that no row covers is *unexplained*.\n\n";
  o += "**Overall: " + scoreboard_line(tables) + ".";
  if (claims) {
    o += " The papers' claims: " + claim_counts_text(count_claims(*claims)) + ".";
  }
  o += "**\n\n";
  if (provenance) o += "**Provenance:** " + provenance_line(*provenance) + ".\n\n";
  o += "A *cell* is one entry of a table: one method's mean over the splits for one metric and "
       "one row (dataset, depth, kernel); a cell printed in two tables counts in both. *Planned*: "
       "in the experiment grid; *computed*: at least one split done (*complete*: all of them); "
       "*agree* / *disagree*: by the rule of its kind below (*unexplained*: a disagreement without "
       "an explanation); *not comparable*: computed, but no "
       "rule applies (the paper prints no value, or the rule lacks what it needs: two splits, "
       "seed replicates).\n\n";
  o += "## Rules of agreement\n\n";
  o += "Each entry is compared with the paper's printed value by the first rule of its kind "
       "that applies; the code is `judge_table` in lib/report/table.cpp, and these texts come "
       "from there. n: our splits done; s: their sd; se = s / √n; n_p: the paper's splits; "
       "σ_p: the paper's split-to-split sd, from its printed error and error kind "
       "(results/reference/), the error widened by its rounding (\"± 0.00\" is below 0.005, not "
       "zero); r: the sd of the paper's mean's rounding to its printed digits (a value printed to "
       "0.01 is known to 0.01 / √12).\n\n";
  for (const auto& [name, text] : agreement_rules()) o += "- **" + name + "**: " + text + ".\n";
  o += "\n";

  // Scoreboard.
  o += "## Scoreboard\n\n";
  o += "| table | paper | planned | computed | complete | agree | disagree | unexplained | not "
       "comparable |\n";
  o += "| :-- | :-- | --: | --: | --: | --: | --: | --: | --: |\n";
  for (const auto& t : tables) {
    const CellCounts c = count_cells(t);
    const std::string paper = paper_and_table(t);
    o += fmt::format("| [{}]({}{}.md) | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                     md_cell(t.spec.name), links.tables, t.spec.name, md_cell(paper), c.planned,
                     c.computed, c.complete, c.agree, c.disagree, c.unexplained, c.not_comparable);
  }
  const CellCounts all = count_cells(tables);
  o +=
      fmt::format("| **all** | | {} | {} | {} | {} | {} | {} | {} |\n\n", all.planned, all.computed,
                  all.complete, all.agree, all.disagree, all.unexplained, all.not_comparable);

  // The papers' claims (claims_markdown has the details).
  if (claims) {
    o += "## The papers' claims\n\n";
    o += fmt::format(
        "Each paper's stated conclusions that its tables support (`results/reference/"
        "claims.yaml`), tested on our cells with a paired t-test over the splits: "
        "[{}]({}) has the quotes, the test, the rule for a verdict, every comparison with its "
        "interval, and for an undecided one the splits that would decide it and their cost. "
        "**{}.**\n\n",
        links.claims, links.claims, claim_counts_text(count_claims(*claims)));
    o += "| claim | paper | table | verdict | comparisons: supported / contradicted / undecided "
         "/ not computed |\n";
    o += "| :-- | :-- | :-- | :-- | :-- |\n";
    for (const auto& r : *claims) {
      const std::string id = md_cell(r.claim.id);
      if (!r.evaluated) {
        o += fmt::format("| [{}]({}#{}) | {} | {} | not evaluated | |\n", id, links.claims, id,
                         md_cell(r.claim.paper), md_cell(r.claim.table));
        continue;
      }
      o += fmt::format("| [{}]({}#{}) | {} | [{}]({}{}.md) | {} | {} / {} / {} / {} |\n", id,
                       links.claims, id, md_cell(r.claim.paper), md_cell(r.claim.table),
                       links.tables, r.claim.table, verdict_name(r.verdict), r.supported,
                       r.contradicted, r.undecided, r.n_not_computed);
    }
    o += "\n";
  }

  // Disagreements.
  o += "## Disagreements\n\n";
  if (!tables.empty()) {
    o += "Each with its explanation, the note of the first row of `results/explanations.csv` that "
         "names the entry and covers the sign and size of its difference, or *Unexplained.* where "
         "none does; `results/disagreements.md` records what is known and what was tried for "
         "each.\n\n";
  }
  int n_disagree = 0;
  for (const auto& t : tables) {
    for (const auto& r : t.rows) {
      for (const auto& e : r.entries) {
        if (!listed_disagreement(e)) continue;
        ++n_disagree;
        // Ours with the standard error the agreement test uses, the paper's error as printed,
        // each with its kind.
        std::string ours = format_value(e.mean, t.spec, r.metric);
        std::string ours_note;
        if (e.se) {
          ours += " ± " + format_value(e.se, t.spec, r.metric);
          ours_note = "se";
        }
        if (e.n_done < e.n_expected) {
          ours_note +=
              fmt::format("{}{}/{} splits", ours_note.empty() ? "" : "; ", e.n_done, e.n_expected);
        }
        if (!ours_note.empty()) ours += " (" + ours_note + ")";
        std::string paper = e.ref->mean_text;
        if (!e.ref->error_text.empty()) {
          paper += " ± " + e.ref->error_text;
          if (!e.ref->error_kind.empty() && e.ref->error_kind != "none") {
            paper += " (" + e.ref->error_kind + ")";
          }
        }
        const double tol = e.tolerance.value_or(0.0);
        const double diff = compared_difference(e).value_or(0.0);
        std::string diff_text = format_value(diff, t.spec, r.metric, 1);
        if (diff > 0) diff_text = "+" + diff_text;
        std::string rule = e.rule;
        if (e.rule == "paired") {
          rule += fmt::format(": difference to {} ours {}, paper {}", e.compared_to,
                              format_value(e.compared_ours, t.spec, r.metric, 1),
                              format_value(e.compared_paper, t.spec, r.metric, 1));
        }
        if (e.sign_flip) rule += "; ours of the opposite sign";
        std::string why =
            !e.explanation.empty()
                ? "Explanation: " + link_or_text(e.explanation, e.explanation_link) + "."
            : e.explanation_near.empty()
                ? std::string("Unexplained.")
                : "Unexplained (" + md_cell(e.explanation_near) +
                      " names this entry, for another sign or size of difference).";
        if (e.code_agree == "yes") why = "Agrees with the reference code. " + why;
        o += fmt::format(
            "- [{}]({}{}.md), {}: ours {} vs paper {} ({}difference {}, tolerance {}). {}\n",
            md_cell(t.spec.name), links.tables, t.spec.name, md_cell(entry_where(t, r, e)),
            md_cell(ours), md_cell(paper), rule.empty() ? "" : "rule " + md_cell(rule) + "; ",
            diff_text, format_value(tol, t.spec, r.metric, 1), why);
      }
    }
  }
  if (n_disagree == 0) o += "None so far.\n";
  o += "\n";

  if (stability) o += stability_section(*stability, links);

  // The spread check.
  o += "## Scatter wider than the paper's\n\n";
  o += "Entries whose split-to-split sd is larger than the paper's by the spread check (rule "
       "*spread* above), whatever their verdict.\n\n";
  int n_wide = 0;
  for (const auto& t : tables) {
    for (const auto& r : t.rows) {
      for (const auto& e : r.entries) {
        if (!e.wider_spread) continue;
        ++n_wide;
        o += fmt::format(
            "- [{}]({}{}.md), {}: our sd {:.2f} times the paper's over {} splits (F = {:.1f}, 99% "
            "point {:.1f}); verdict {}.\n",
            md_cell(t.spec.name), links.tables, t.spec.name, md_cell(entry_where(t, r, e)),
            std::sqrt(*e.spread_ratio), e.n_done, *e.spread_ratio, *e.spread_limit,
            e.agree == "yes"  ? "agree"
            : e.agree == "no" ? "disagree"
                              : "none");
      }
    }
  }
  if (n_wide == 0) o += "None.\n";
  o += "\n";

  // The reference code's own values, where we ran it.
  std::string code_list;
  for (const auto& t : tables) {
    for (const auto& r : t.rows) {
      for (const auto& e : r.entries) {
        if (!e.code_ref) continue;
        std::string code = e.code_ref->mean_text;
        if (!e.code_ref->error_text.empty()) code += " ± " + e.code_ref->error_text;
        std::string splits;
        for (int sp : e.code_ref->splits) {
          if (!splits.empty()) splits += ", ";
          splits += std::to_string(sp);
        }
        const std::string where_splits = splits.empty() ? "all splits" : "split " + splits;
        const std::string verdict =
            !e.code_ours ? "ours is not computed on those splits"
            : e.code_agree == "yes"
                ? "ours " + format_value(e.code_ours, t.spec, r.metric, 1) + " agrees with it"
            : e.code_agree == "no"
                ? "ours " + format_value(e.code_ours, t.spec, r.metric, 1) + " disagrees with it"
                : "ours " + format_value(e.code_ours, t.spec, r.metric, 1) +
                      " (not comparable: neither prints an error)";
        const std::string paper_verdict = e.agree == "yes"  ? "agrees with the paper"
                                          : e.agree == "no" ? "disagrees with the paper"
                                                            : "not comparable with the paper";
        code_list += fmt::format("- [{}]({}{}.md), {}: reference code {} ({}); {}; {}. {}\n",
                                 md_cell(t.spec.name), links.tables, t.spec.name,
                                 md_cell(entry_where(t, r, e)), md_cell(code), where_splits,
                                 verdict, paper_verdict, md_cell(e.code_ref->note));
      }
    }
  }
  if (!code_list.empty()) {
    o += "## The reference code's values\n\n";
    o += "Where we ran the public reference code ourselves (`results/reference/code/`), its value "
         "stands beside the paper's, and ours is compared with it on the same splits by the same "
         "rule.\n\n";
    o += code_list + "\n";
  }

  // Tables of other protocols than the papers' (grid profiles marked `tables: true`).
  if (!others.empty()) {
    o += "## Beyond the papers' protocols\n\n";
    o += "Tables of grid profiles that change the protocol (marked `tables: true` in their grid "
         "file), beside the paper's values at the paper's protocol. They answer a question the "
         "paper's protocol leaves open; they are not counted above, and their verdicts say only "
         "how far the other protocol moves the numbers.\n\n";
    o += "| table | paper | profile | what it changes | planned | computed | complete |\n";
    o += "| :-- | :-- | :-- | :-- | --: | --: | --: |\n";
    for (const auto& t : others) {
      const CellCounts c = count_cells(t);
      const std::string paper = paper_and_table(t);
      o += fmt::format("| [{}]({}{}.md) | {} | {} | {} | {} | {} | {} |\n", md_cell(t.spec.name),
                       links.tables, t.spec.name, md_cell(paper), md_cell(t.profile),
                       md_cell(t.profile_description), c.planned, c.computed, c.complete);
    }
    o += "\n";
  }

  // Figures, one per paper.
  o += "## Figures\n\n";
  o += "One figure per paper, one panel per metric: every cell with both our mean and the "
       "paper's printed value, ours (vertical) against the paper's (horizontal), with error bars "
       "of one standard error each (the paper's implied by its printed error, see "
       "`results/reference/`), the dashed line y = x, one marker per table column, hollow markers "
       "where not every split is done, and disagreements ringed in red.\n\n";
  for (const auto& paper : papers_of(tables)) {
    const PaperFigure f = paper_figure(tables, paper);
    o += "### " + md_cell(f.name) + "\n\n";
    std::string names;
    for (const auto& t : tables) {
      if (t.spec.paper != paper) continue;
      names += (names.empty() ? "" : ", ") +
               fmt::format("[{}]({}{}.md)", md_cell(t.spec.name), links.tables, t.spec.name);
    }
    o += "Tables: " + names + ".\n\n";
    if (f.points == 0) {
      o += "No cell has both our mean and the paper's value yet.\n\n";
    } else {
      o += fmt::format("![{}: ours against the paper's printed values]({}{}.svg)\n\n",
                       md_cell(f.name), links.figures, f.stem);
    }
  }
  return o;
}

std::map<std::string, std::string> summary_figures(const std::vector<Table>& all_tables) {
  const std::vector<Table> tables = tables_where_extra(all_tables, false);
  std::map<std::string, std::string> out;
  for (const auto& paper : papers_of(tables)) {
    const PaperFigure f = paper_figure(tables, paper);
    if (f.points == 0) continue;
    ScatterOptions opt;
    opt.flag_label = "disagrees with the paper";
    opt.hollow_label = "not every split done";
    out[f.stem] = svg_scatter(f.name + ": ours against the paper", f.panels, f.series, opt);
  }
  return out;
}

}  // namespace dkp::report
