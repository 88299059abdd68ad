// LaTeX, CSV and Markdown renderings of an aggregated table.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "report/table.hpp"

namespace dkp::report {

namespace {

std::string latex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
      case '%':
      case '$':
      case '#':
      case '_':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '\\':
        out += "\\textbackslash{}";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The layer digit of a metric "var_f<l>_at_0" (a layer's variance at 0, the compositional
// paper's Table 1), or 0 for any other metric.
char layer_of_var_at_0(const std::string& m) {
  return m.size() == 11 && m.rfind("var_f", 0) == 0 && m.compare(6, 5, "_at_0") == 0 ? m[5] : 0;
}

std::string metric_label(const std::string& m) {
  if (m == "elbo") return "ELBO";
  if (m == "test_ll") return "LL";
  if (m == "test_rmse") return "RMSE";
  if (m == "epoch_time_s") return "epoch (s)";
  if (m == "elbo_total") return "ELBO (sum)";
  if (m == "elbo_tail_total") return "ELBO (sum), last tenth";
  if (const char l = layer_of_var_at_0(m)) return fmt::format("$\\mathrm{{Var}}[f_{}(0)]$", l);
  return latex_escape(m);
}

std::string kernel_label(const std::string& k) {
  if (k == "se") return "sq.\\ exp.";
  return latex_escape(k);
}

std::string number(std::optional<double> mean, std::optional<double> err, const TableSpec& spec,
                   const std::string& metric, bool bold) {
  std::string body = format_value(mean, spec, metric);
  if (err) body += " \\pm " + format_value(err, spec, metric);
  return bold ? "$\\mathbf{" + body + "}$" : "$" + body + "$";
}

// "k/n" of an entry with only k of its n splits done, "k/n, j failed" when j of the others failed.
std::string splits_done_text(const Entry& e) {
  std::string o = fmt::format("{}/{}", e.n_done, e.n_expected);
  if (e.n_failed > 0) o += fmt::format(", {} failed", e.n_failed);
  return o;
}

std::string ours_cell(const Table& t, const Entry& e, const std::string& metric) {
  const TableSpec& spec = t.spec;
  if (!e.mean) {
    if (e.status == "absent") return "";
    if (e.status == "failed")
      return fmt::format("\\textit{{failed {}/{}}}", e.n_failed, e.n_expected);
    if (e.status == "damaged")
      return fmt::format("\\textit{{damaged {}/{}}}", e.n_damaged, e.n_expected);
    if (e.status == "stale") return fmt::format("\\textit{{stale {}/{}}}", e.n_stale, e.n_expected);
    if (e.status == "running") return "\\textit{running}";
    return "\\textit{missing}";
  }
  std::string s = number(e.mean, e.shown_error, spec, metric, e.bold);
  if (e.n_done < e.n_expected) s += "\\textsuperscript{" + splits_done_text(e) + "}";
  if (e.agree == "yes") s += "\\,{\\scriptsize\\checkmark}";
  if (e.agree == "no")
    s += is_unexplained(t, e) ? "\\,{\\scriptsize$\\times^{?}$}" : "\\,{\\scriptsize$\\times$}";
  if (e.wider_spread) s += "\\,{\\scriptsize$\\updownarrow$}";
  return s;
}

std::string paper_cell(const Entry& e) {
  if (!e.ref) return "--";
  // As printed (trailing zeros kept), not re-rounded to our precision.
  std::string body = e.ref->mean_text;
  if (!e.ref->error_text.empty()) body += " \\pm " + e.ref->error_text;
  return e.ref->bold ? "$\\mathbf{" + body + "}$" : "$" + body + "$";
}

std::string convention_text(Convention c) {
  switch (c) {
    case Convention::se:
      return "Mean $\\pm$ one standard error over splits.";
    case Convention::sd:
      return "Mean $\\pm$ standard deviation over splits (the report's convention).";
    case Convention::paired2se:
      return "Errors are two standard errors of the paired difference (by split) to the best "
             "method of the row, which carries none, as in the paper.";
  }
  return "";
}

std::string bold_text(BoldRule b) {
  switch (b) {
    case BoldRule::none:
      return "";
    case BoldRule::best:
      return " Bold: best mean of the row (ours), as in the paper.";
    case BoldRule::significant:
      return " Bold: best mean of the row when better than every other method by more than two "
             "standard errors of the paired difference (ours), as in the paper.";
  }
  return "";
}

std::string num_or_empty(std::optional<double> x) {
  return x ? fmt::format("{}", *x) : "";
}

// Text for a Markdown table cell or paragraph: no column breaks, no HTML, no emphasis markers.
std::string md_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '|':
      case '*':
      case '\\':
      case '`':
        out += '\\';
        out += c;
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '\n':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A reference's splits as the CSV writes them, "0;1" (empty: all).
std::string splits_text(const std::vector<int>& splits) {
  std::string o;
  for (int sp : splits) {
    if (!o.empty()) o += ';';
    o += std::to_string(sp);
  }
  return o;
}

std::string md_ours_cell(const Table& t, const Entry& e, const std::string& metric) {
  const TableSpec& spec = t.spec;
  if (!e.mean) {
    if (e.status == "absent") return "";
    if (e.status == "failed") return fmt::format("*failed {}/{}*", e.n_failed, e.n_expected);
    if (e.status == "damaged") return fmt::format("*damaged {}/{}*", e.n_damaged, e.n_expected);
    if (e.status == "stale") return fmt::format("*stale {}/{}*", e.n_stale, e.n_expected);
    if (e.status == "running") return "*running*";
    return "*missing*";
  }
  std::string s = format_value(e.mean, spec, metric);
  if (e.shown_error) s += " ± " + format_value(e.shown_error, spec, metric);
  if (e.bold) s = "**" + s + "**";
  if (e.n_done < e.n_expected) s += " (" + splits_done_text(e) + ")";
  if (e.agree == "yes") s += " ✓";
  if (e.agree == "no") s += is_unexplained(t, e) ? " ✗ unexplained" : " ✗";
  if (e.wider_spread) s += " ↕";
  return s;
}

// The agreement rules that decided some entry of `t`, in the order of agreement_rules(), and
// whether an entry scatters more than the paper's.
std::vector<std::pair<std::string, std::string>> rules_used(const Table& t, bool& spread) {
  std::set<std::string> used;
  spread = false;
  for (const auto& row : t.rows) {
    for (const auto& e : row.entries) {
      if (!e.rule.empty()) used.insert(e.rule);
      if (e.rule == "difference" || e.rule == "paired") used.insert("mean");  // they cite it
      spread = spread || e.wider_spread;
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& rule : agreement_rules())
    if (used.count(rule.first)) out.push_back(rule);
  return out;
}

// Whether some disagreement of `t` is unexplained (is_unexplained).
bool any_unexplained(const Table& t) {
  for (const auto& row : t.rows)
    for (const auto& e : row.entries)
      if (is_unexplained(t, e)) return true;
  return false;
}

std::string md_paper_cell(const Entry& e) {
  std::string s = "—";
  if (e.ref) {
    s = md_escape(e.ref->mean_text);
    if (!e.ref->error_text.empty()) s += " ± " + md_escape(e.ref->error_text);
    if (e.ref->bold) s = "**" + s + "**";
  }
  if (e.code_ref) {
    // The reference code's value beside the paper's, with ours over the same splits.
    s += "<br>code: " + md_escape(e.code_ref->mean_text);
    if (!e.code_ref->error_text.empty()) s += " ± " + md_escape(e.code_ref->error_text);
    if (!e.code_ref->splits.empty()) s += " (split " + splits_text(e.code_ref->splits) + ")";
    if (e.code_agree == "yes") s += " ✓";
    if (e.code_agree == "no") s += " ✗";
  }
  return s;
}

std::string md_convention_text(Convention c) {
  switch (c) {
    case Convention::se:
      return "Mean ± one standard error over splits.";
    case Convention::sd:
      return "Mean ± standard deviation over splits (the report's convention).";
    case Convention::paired2se:
      return "Errors are two standard errors of the paired difference (by split) to the best "
             "method of the row, which carries none, as in the paper.";
  }
  return "";
}

}  // namespace

std::string metric_title(const std::string& m) {
  if (m == "elbo") return "ELBO per datapoint";
  if (m == "elbo_diff") return "ELBO difference per datapoint";
  if (m == "test_ll") return "test log-likelihood";
  if (m == "test_rmse") return "test RMSE";
  if (m == "test_acc_pct") return "test accuracy (%)";
  if (m == "test_acc") return "test accuracy";
  if (m == "epoch_time_s") return "epoch time (s)";
  if (m == "elbo_total") return "ELBO (sum over the points)";
  if (m == "elbo_tail_total") return "ELBO (sum), mean over the last tenth of training (ours only)";
  if (const char l = layer_of_var_at_0(m)) return fmt::format("Var[f{}(0)]", l);
  return m;
}

namespace {

// Which row keys a table prints before its columns: the metric (when it has several), the
// kernel and the depth (when its spec names them); the dataset always.
struct RowKeys {
  bool metric = false, kernel = false, depth = false;
  explicit RowKeys(const TableSpec& s)
      : metric(s.metrics.size() > 1),
        kernel(std::find(s.row_keys.begin(), s.row_keys.end(), "kernel") != s.row_keys.end()),
        depth(std::find(s.row_keys.begin(), s.row_keys.end(), "depth") != s.row_keys.end()) {}
  /// The header of the key columns, the metric's named `metric_header`.
  std::vector<std::string> header(const std::string& metric_header) const {
    std::vector<std::string> h;
    if (metric) h.push_back(metric_header);
    if (kernel) h.push_back("kernel");
    h.push_back("dataset");
    if (depth) h.push_back("depth");
    return h;
  }
};

}  // namespace

// Whether an entry of the table has a result left out (damaged or stale), for the legend.
bool any_left_out(const Table& t) {
  for (const auto& row : t.rows)
    for (const auto& e : row.entries)
      if (e.status == "damaged" || e.status == "stale") return true;
  return false;
}

// Whether an entry of the table has a mean and also failed splits, for the legend.
bool any_partly_failed(const Table& t) {
  for (const auto& row : t.rows)
    for (const auto& e : row.entries)
      if (e.mean && e.n_failed > 0) return true;
  return false;
}

const char* const kPartlyFailedText =
    " j failed: j of the splits not done failed (their run directories' error.json say why); "
    "the mean is over the splits done.";

const char* const kLeftOutText =
    " damaged k/n, stale k/n: results left out (malformed or modified since dkp wrote them; made "
    "from other data than the data now present), which `dkp grid status` names.";

// A table of a grid of one's own (family generic, no reference): no paper's columns.
bool no_paper(const Table& t) {
  if (!t.spec.paper.empty()) return false;
  for (const auto& row : t.rows)
    for (const auto& e : row.entries)
      if (e.ref || e.code_ref) return false;
  return true;
}

std::string to_latex(const Table& t) {
  const auto& s = t.spec;
  const RowKeys rk(s);
  const std::vector<std::string> keys = rk.header("");
  const size_t nkeys = keys.size();
  const size_t ncols = s.columns.size();

  std::string o;
  o += "% Generated by dkp tables. Do not edit.\n";
  o += "\\documentclass[10pt]{article}\n";
  o += "\\usepackage[a4paper,landscape,margin=1.2cm]{geometry}\n";
  o += "\\usepackage{booktabs}\n\\usepackage{amssymb}\n\\usepackage{graphicx}\n";
  o += "\\pagestyle{empty}\n\\begin{document}\n";
  o += "\\noindent\\textbf{" + latex_escape(s.title) + "}";
  if (t.profile != "full") o += " \\textbf{[profile " + latex_escape(t.profile) + "]}";
  o += "\\par\\smallskip\n\\noindent{\\small ";
  o += convention_text(s.convention) + bold_text(s.bold);
  const bool paperless = no_paper(t);
  if (paperless) {
    o += " Superscript $k/n$: only $k$ of $n$ splits done; \\textit{missing}, \\textit{running}, "
         "\\textit{failed}: no result yet.";
  } else {
    o += " Each method shows ours (left) and the paper's printed value (right). "
         "\\checkmark: agreement with the paper, $\\times$: disagreement, by the rules of "
         "results/README.md (rules of agreement)";
  }
  if (!paperless) {
    bool spread = false;
    const auto used = rules_used(t, spread);
    if (!used.empty()) {
      o += ", here:";
      for (size_t i = 0; i < used.size(); ++i) o += (i ? ", " : " ") + used[i].first;
    }
    o += "; no mark: not comparable (no rule applies); superscript $k/n$: only $k$ of $n$ splits "
         "done; \\textit{missing}, \\textit{running}, \\textit{failed}: no result yet.";
    if (spread) o += " $\\updownarrow$: ours scatters more than the paper's (spread check).";
    if (any_unexplained(t)) {
      o += " $\\times^{?}$: a disagreement that no row of results/explanations.csv explains "
           "(none names it, or its sign or size is outside the row's).";
    }
  }
  if (any_partly_failed(t)) o += latex_escape(kPartlyFailedText);
  if (any_left_out(t)) o += latex_escape(kLeftOutText);
  if (!t.notes.empty()) o += " " + latex_escape(t.notes);
  o += "}\\par\n\\begin{center}\n\\footnotesize\n";
  const bool wide = ncols > 4;
  if (wide) o += "\\resizebox{\\linewidth}{!}{%\n";
  o += "\\begin{tabular}{" + std::string(nkeys, 'l');
  for (size_t i = 0; i < ncols; ++i) o += paperless ? "c" : "cc";
  o += "}\n\\toprule\n";
  std::string h1, h2, rules;
  for (size_t i = 0; i < keys.size(); ++i) {
    h1 += (i ? " & " : "") + keys[i];
    h2 += (i ? " & " : "");
  }
  for (size_t i = 0; i < ncols; ++i) {
    if (paperless) {
      h1 += " & " + latex_escape(s.columns[i].label);
      continue;
    }
    h1 += " & \\multicolumn{2}{c}{" + latex_escape(s.columns[i].label) + "}";
    h2 += " & ours & paper";
    const size_t first = nkeys + 2 * i + 1;
    rules += fmt::format("\\cmidrule(lr){{{}-{}}}", first, first + 1);
  }
  if (paperless) {
    o += h1 + " \\\\\n\\midrule\n";
  } else {
    o += h1 + " \\\\\n" + rules + "\n" + h2 + " \\\\\n\\midrule\n";
  }
  std::string prev_metric, prev_kernel, prev_dataset;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const Row& row = t.rows[r];
    const bool new_metric = r == 0 || row.metric != prev_metric;
    const bool new_kernel = new_metric || row.kernel != prev_kernel;
    const bool new_dataset = new_kernel || row.dataset != prev_dataset;
    if (r > 0 && (new_metric || (rk.kernel && new_kernel))) o += "\\midrule\n";
    std::vector<std::string> cells;
    if (rk.metric) cells.push_back(new_metric ? metric_label(row.metric) : "");
    if (rk.kernel) cells.push_back(new_kernel ? kernel_label(row.kernel) : "");
    cells.push_back(new_dataset || !rk.depth ? latex_escape(row.dataset) : "");
    if (rk.depth) cells.push_back(std::to_string(row.depth));
    for (const auto& e : row.entries) {
      cells.push_back(ours_cell(t, e, row.metric));
      if (!paperless) cells.push_back(paper_cell(e));
    }
    for (size_t i = 0; i < cells.size(); ++i) o += (i ? " & " : "") + cells[i];
    o += " \\\\\n";
    prev_metric = row.metric;
    prev_kernel = row.kernel;
    prev_dataset = row.dataset;
  }
  if (t.rows.empty()) {
    o += fmt::format("\\multicolumn{{{}}}{{c}}{{\\textit{{no cells}}}} \\\\\n",
                     nkeys + (paperless ? 1 : 2) * ncols);
  }
  o += "\\bottomrule\n\\end{tabular}";
  if (wide) o += "}";
  o += "\n\\end{center}\n\\end{document}\n";
  return o;
}

std::string to_csv(const Table& t) {
  const auto& s = t.spec;
  std::string o =
      "table,profile,paper,paper_table,metric,kernel,dataset,depth,column,model,inference,"
      "posterior,inducing,n_expected,n_done,n_failed,n_running,status,ours_mean,ours_error,"
      "ours_error_kind,ours_se,ours_best,ours_bold,paper_mean,paper_error,paper_error_kind,"
      "paper_se,paper_bold,agree,code_mean,code_error,code_splits,code_ours,code_agree,rule,"
      "tolerance,compared_ours,compared_paper,compared_to,sign_flip,spread_ratio,spread_limit,"
      "wider_spread,explained\n";
  for (const auto& row : t.rows) {
    for (const auto& e : row.entries) {
      const ColumnSpec& c = s.columns[e.col];
      std::string model = c.sel.model, inference = c.sel.inference, posterior = c.sel.posterior;
      if (c.minus) posterior += "-" + c.minus->posterior;
      std::vector<std::string> f = {
          s.name,
          t.profile,
          s.paper,
          e.ref ? e.ref->table : s.paper_table,
          row.metric,
          row.kernel,
          row.dataset,
          e.depth ? std::to_string(e.depth) : "",
          c.label,
          model,
          inference,
          posterior,
          c.sel.inducing ? std::to_string(c.sel.inducing) : "",
          std::to_string(e.n_expected),
          std::to_string(e.n_done),
          std::to_string(e.n_failed),
          std::to_string(e.n_running),
          e.status,
          num_or_empty(e.mean),
          num_or_empty(e.shown_error),
          e.shown_error_kind,
          num_or_empty(e.se),
          e.best ? "1" : "0",
          e.bold ? "1" : "0",
          e.ref ? e.ref->mean_text : "",
          e.ref ? e.ref->error_text : "",
          e.ref ? e.ref->error_kind : "",
          e.ref ? fmt::format("{}", e.ref_se) : "",
          e.ref ? (e.ref->bold ? "1" : "0") : "",
          e.agree,
          e.code_ref ? e.code_ref->mean_text : "",
          e.code_ref ? e.code_ref->error_text : "",
          e.code_ref ? splits_text(e.code_ref->splits) : "",
          num_or_empty(e.code_ours),
          e.code_agree,
          e.rule,
          num_or_empty(e.tolerance),
          num_or_empty(e.compared_ours),
          num_or_empty(e.compared_paper),
          e.compared_to,
          e.sign_flip ? "1" : "0",
          num_or_empty(e.spread_ratio),
          num_or_empty(e.spread_limit),
          e.wider_spread ? "1" : "0",
          // A disagreement of a table with explanations attached: explained or not.
          !t.explanations_attached || e.agree != "no" || !e.mean || !e.ref ? ""
          : e.explanation.empty()                                          ? "no"
                                                                           : "yes",
      };
      for (size_t i = 0; i < f.size(); ++i) {
        if (i) o += ',';
        o += csv_field(f[i]);
      }
      o += "\n";
    }
  }
  return o;
}

std::string to_markdown(const Table& t) {
  const auto& s = t.spec;
  const RowKeys rk(s);

  std::string o = "<!-- Generated by dkp tables. Do not edit. -->\n\n";
  o += "**" + md_escape(s.title);
  if (t.profile != "full") o += " [profile " + md_escape(t.profile) + "]";
  o += "**\n\n";

  const bool paperless = no_paper(t);
  std::vector<std::string> head = rk.header("metric"), align;
  align.assign(head.size(), ":--");
  for (const auto& c : s.columns) {
    head.push_back(md_escape(c.label));
    align.push_back("--:");
    if (paperless) continue;
    head.push_back(md_escape(c.label) + " (paper)");
    align.push_back("--:");
  }
  auto line = [](const std::vector<std::string>& cells) {
    std::string l = "|";
    for (const auto& c : cells) l += " " + c + " |";
    return l + "\n";
  };
  o += line(head);
  o += line(align);
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    if (rk.metric) cells.push_back(md_escape(metric_title(row.metric)));
    if (rk.kernel) cells.push_back(md_escape(row.kernel));
    cells.push_back(md_escape(row.dataset));
    if (rk.depth) cells.push_back(std::to_string(row.depth));
    for (const auto& e : row.entries) {
      cells.push_back(md_ours_cell(t, e, row.metric));
      if (!paperless) cells.push_back(md_paper_cell(e));
    }
    o += line(cells);
  }
  if (t.rows.empty()) o += "\n*No cells.*\n";

  o += '\n';
  o += md_convention_text(s.convention);
  if (s.bold == BoldRule::best) {
    o += paperless ? " Bold: best mean of the row."
                   : " Bold: best mean of the row (ours), as in the paper.";
  }
  if (s.bold == BoldRule::significant) {
    o += " Bold: best mean of the row when better than every other method by more than two "
         "standard errors of the paired difference (ours), as in the paper.";
  }
  if (paperless) {
    o += " (k/n): only k of n splits done; *missing*, *running*, *failed*: no result yet.";
  } else {
    o += " Each method shows ours, then the paper's printed value. ✓: agreement with the paper; "
         "✗: disagreement; no mark: not comparable (no rule applies: the paper prints no value, "
         "or the rule lacks what it needs); (k/n): only k of n splits done; *missing*, "
         "*running*, *failed*: no result yet.";
  }
  if (any_partly_failed(t)) o += kPartlyFailedText;
  if (any_left_out(t)) o += kLeftOutText;
  if (!t.spec.ours_only.empty()) {
    o += " Rows marked \"(ours only)\": a quantity the paper does not print, shown for our own "
         "analysis; they get no verdict and are not counted on the scoreboard.";
  }
  bool spread = false;
  const auto used = rules_used(t, spread);
  if (!used.empty()) {
    o += " [Rules of agreement](../README.md#rules-of-agreement) used here:";
    for (const auto& [name, text] : used) o += " *" + name + "*: " + text + ";";
    o.back() = '.';
  }
  if (spread) {
    o += " ↕: " + agreement_rules().back().second + ".";
  }
  if (any_unexplained(t)) {
    o += " ✗ unexplained: a disagreement that no row of results/explanations.csv explains (none "
         "names it, or its sign or size is outside the row's; "
         "[disagreements](../README.md#disagreements)).";
  }
  if (!t.run_sd_note.empty()) o += " Single runs: " + md_escape(t.run_sd_note) + ".";
  bool code = false;
  for (const auto& row : t.rows)
    for (const auto& e : row.entries) code = code || e.code_ref.has_value();
  if (code) {
    o += " *code*: the public reference code's own value where we ran it "
         "(results/reference/code/), on the splits named, its ✓ or ✗ comparing ours on the "
         "same splits within 2 √(se² + se_code²) (se_code its printed error).";
  }
  o += "\n";
  if (!t.notes.empty()) {
    o += "\n";
    o += md_escape(t.notes);
    o += "\n";
  }
  return o;
}

}  // namespace dkp::report
