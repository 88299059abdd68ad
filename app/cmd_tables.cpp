// dkp tables FILE|DIR: aggregate result.json files into the papers' tables (LaTeX, CSV and
// Markdown), each cell beside the paper's printed value; with --summary, a Markdown page over all
// the tables of the call (scoreboard, disagreements, figures of ours against the papers') and,
// beside it, claims.md: the papers' claims (--claims) tested on the tables' cells.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli.hpp"
#include "data_fingerprints.hpp"
#include "experiments/grid.hpp"
#include "experiments/provenance.hpp"
#include "experiments/store.hpp"
#include "experiments/tables_job.hpp"
#include "report/claims.hpp"
#include "report/reference.hpp"
#include "report/stability.hpp"
#include "report/summary.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace dkp::cli {

int cmd_tables(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  namespace ex = dkp::experiments;
  po::options_description desc = common_options();
  desc.add_options()("input", po::value<std::string>(),
                     "a grid file, a directory of grid files, or a results root holding grid "
                     "snapshots (written by dkp grid plan/run)")(
      "out", po::value<std::string>()->default_value("results/tables"), "output directory")(
      "profile", po::value<std::string>()->default_value("full"),
      "profile of grid files (snapshots carry their own)")(
      "results", po::value<std::string>()->default_value("results/runs"),
      "results root for grid files")("reference",
                                     po::value<std::string>()->default_value("results/reference"),
                                     "directory of the papers' reference CSVs")(
      "summary", po::value<std::string>(),
      "also write a Markdown page over all the tables written (scoreboard, disagreements, "
      "figures) to FILE, its figures to FILE's directory/figures/")(
      "explanations", po::value<std::string>()->default_value("results/explanations.csv"),
      "CSV of explanations of disagreements, shown in the tables and on the --summary page "
      "(table,metric,dataset,depth,kernel,column,sign,min_abs,max_abs,note,link); the default "
      "file may be absent (every disagreement is then unexplained), one named must exist")(
      "claims", po::value<std::string>()->default_value("results/reference/claims.yaml"),
      "the papers' claims for --summary, tested on the tables' cells and written to claims.md "
      "beside FILE (the default file absent: no claims page)")(
      "splits", po::value<uint64_t>(),
      "read only the cells of splits 0 .. N-1 of every dataset: the tables, verdicts and claims "
      "as they stood with N splits (write them to another --out)");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_or_help(args, desc, pos, vm,
                     "dkp tables FILE|DIR [--out DIR] [--profile P] [--results DIR] "
                     "[--reference DIR] [--summary FILE] [--explanations FILE] [--claims FILE] "
                     "[--splits N]")) {
    return kExitOk;
  }
  if (!vm.count("input")) throw UsageError("missing grid file or directory");
  const fs::path input = vm["input"].as<std::string>();
  const fs::path results = vm["results"].as<std::string>();
  const fs::path ref_dir = vm["reference"].as<std::string>();

  std::vector<std::pair<ex::Grid, fs::path>> grids;  // grid, results root
  std::set<size_t> extra;  // indices into grids of the profiles marked `tables: true`
  std::error_code ec;
  // Grid files read their results from --results: a mistyped one is an error, not empty tables.
  auto check_results = [&]() {
    if (!fs::is_directory(results, ec)) {
      throw ConfigError(fmt::format("--results {}: no such directory", results.string()));
    }
  };
  bool many = false;  // a directory of grids: only a store without a cell of any grid is an error
  if (fs::is_directory(input, ec)) {
    many = true;
    // A directory stands for all the paper tables: the CI smoke grid (name: smoke) is left out.
    auto is_smoke = [](const ex::Grid& g) {
      if (g.name != "smoke") return false;
      spdlog::info("{}: the smoke grid, skipped (name it as the input to tabulate it)",
                   g.file.string());
      return true;
    };
    for (auto& g : ex::load_grid_snapshots(input)) {
      if (!is_smoke(g)) grids.emplace_back(std::move(g), input);
    }
    if (grids.empty()) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(input, ec)) {
        if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") {
          files.push_back(e.path());
        }
      }
      std::sort(files.begin(), files.end());
      if (!files.empty()) check_results();
      const std::string profile = vm["profile"].as<std::string>();
      for (const auto& f : files) {
        ex::Grid g = ex::load_grid(f, profile, fs::path(vm["data"].as<std::string>()));
        if (is_smoke(g)) continue;
        // Beside the paper protocols (profile full), the profiles a grid marks `tables: true`.
        std::vector<std::string> more;
        if (profile == "full") more = g.tabulated_profiles;
        grids.emplace_back(std::move(g), results);
        for (const auto& p : more) {
          if (p == profile) continue;
          extra.insert(grids.size());
          grids.emplace_back(ex::load_grid(f, p, fs::path(vm["data"].as<std::string>())), results);
        }
      }
    }
    if (grids.empty()) {
      throw ConfigError(
          fmt::format("{}: no grid snapshots (<grid>/snapshot-<profile>.yaml, "
                      "written by dkp grid plan/run) and no grid files",
                      input.string()));
    }
  } else if (fs::exists(input, ec)) {
    grids.emplace_back(ex::load_grid(input, vm["profile"].as<std::string>(),
                                     fs::path(vm["data"].as<std::string>())),
                       results);
    check_results();
  } else {
    throw ConfigError(fmt::format("{}: no such file or directory", input.string()));
  }

  if (vm.count("splits")) {
    for (auto& g : grids) ex::keep_splits_below(g.first, vm["splits"].as<uint64_t>());
  }

  const auto refs = report::load_reference_dir(ref_dir);
  if (refs.empty()) {
    spdlog::warn("no reference values in '{}': the paper columns stay empty (see --reference)",
                 ref_dir.string());
  }
  // Read before anything is written: a malformed file leaves the outputs as they were.
  std::vector<report::Explanation> explanations;
  {
    const fs::path file = vm["explanations"].as<std::string>();
    if (!fs::exists(file, ec)) {
      if (!vm["explanations"].defaulted()) {
        throw ConfigError(fmt::format("--explanations {}: no such file", file.string()));
      }
      spdlog::info("no explanations file '{}': every disagreement is unexplained", file.string());
    }
    explanations = report::load_explanations(file);
  }
  std::optional<std::vector<report::Claim>> claims;
  if (vm.count("summary")) {
    const fs::path file = vm["claims"].as<std::string>();
    if (fs::exists(file, ec)) {
      claims = report::load_claims(file);
    } else if (!vm["claims"].defaulted()) {
      throw ConfigError(fmt::format("--claims {}: no such file", file.string()));
    } else {
      spdlog::info("no claims file '{}': no claims page", file.string());
    }
  }
  // Results made from other data than the data now present are left out (stale).
  auto fingerprints = data_fingerprints(vm["data"].as<std::string>());
  ex::StatusOptions status;
  if (fingerprints) status.data = &*fingerprints;
  // Every table is made before any is written: a store without a cell of the grid (a mistyped
  // --results) leaves the outputs as they were.
  struct GridTables {
    const ex::Grid* grid;
    fs::path root;
    std::vector<report::Table> tables;
    ex::StoreCheck check;
  };
  std::vector<GridTables> made;
  size_t present = 0;
  // The tables of grids[i] (`grid`: it or a copy cut to fewer splits), marked extra for the
  // profiles tabulated beside the papers' protocols, which write only the tables they plan cells
  // in.
  auto tables_of = [&](const ex::Grid& grid, size_t i, ex::StoreCheck* check) {
    auto tables = ex::grid_tables(grid, grids[i].second, refs, status, check);
    const bool is_extra = extra.count(i) > 0;
    for (auto& t : tables) t.extra = is_extra;
    if (is_extra) std::erase_if(tables, [](const report::Table& t) { return t.rows.empty(); });
    return tables;
  };
  for (size_t i = 0; i < grids.size(); ++i) {
    const auto& [grid, root] = grids[i];
    GridTables g{&grid, root, {}, {}};
    g.tables = tables_of(grid, i, &g.check);
    present += g.check.present;
    if (g.check.present == 0) {
      const std::string none = fmt::format("no cell of grid {} (profile {}) under {}", grid.name,
                                           grid.profile, (root / grid.name).string());
      if (!many) throw Error(none + ": is --results right?");
      std::cout << fmt::format("note: {} yet: its tables are empty\n", none);
    }
    for (const auto& c : g.check.stale) {
      spdlog::warn("grid {}: {} {} left out of the tables: {}", grid.name, c.hash, c.label,
                   c.detail);
    }
    made.push_back(std::move(g));
  }
  // A directory of a results root that no grid names is not read: say so, so that a stray or
  // misnamed grid directory is not mistaken for cells that count.
  {
    std::set<fs::path> roots;
    std::set<std::string> names;
    for (const auto& [grid, root] : grids) {
      roots.insert(root);
      names.insert(grid.name);
    }
    for (const auto& root : roots) {
      std::error_code ec;
      for (const auto& d : fs::directory_iterator(root, ec)) {
        const std::string name = d.path().filename().string();
        if (!d.is_directory(ec) || names.count(name) || name.starts_with(".")) continue;
        spdlog::warn("{} is no grid's directory (the grids read: {}): its cells are not read",
                     d.path().string(), fmt::join(names, ", "));
      }
    }
  }
  if (many && present == 0) {
    throw Error(fmt::format("no cell of any of the {} grids under {}: is --results right?",
                            grids.size(), grids.front().second.string()));
  }
  // Seed replicates give the single runs their run-to-run sd, and the tables are judged again.
  {
    std::vector<report::Table> joined;
    for (const auto& g : made) joined.insert(joined.end(), g.tables.begin(), g.tables.end());
    report::apply_replicates(joined);
    // The tables mark the disagreements no explanation covers: attached before they are written.
    report::attach_explanations(joined, explanations);
    size_t k = 0;
    for (auto& g : made)
      for (auto& t : g.tables) t = std::move(joined[k++]);
  }
  // The claims are evaluated before anything is written: a claim naming a column or row that is
  // not its table's leaves the outputs as they were.
  std::optional<std::vector<report::ClaimResult>> claim_results;
  if (claims) {
    std::vector<report::Table> tables;
    for (const auto& g : made) tables.insert(tables.end(), g.tables.begin(), g.tables.end());
    claim_results = report::evaluate_claims(*claims, tables);
  }
  // The page also judges every entry again on its first few splits (report::verdict_stability),
  // unless the call itself reads only some.
  std::optional<report::VerdictStability> stability;
  if (vm.count("summary") && !vm.count("splits")) {
    std::vector<report::Table> few, all;
    for (size_t i = 0; i < grids.size(); ++i) {
      ex::Grid g = grids[i].first;
      ex::keep_splits_below(g, report::kFewSplits);
      for (auto& t : tables_of(g, i, nullptr)) few.push_back(std::move(t));
    }
    // Judged as the page's tables are (explanations change no verdict, so none are attached).
    report::apply_replicates(few);
    for (const auto& g : made) all.insert(all.end(), g.tables.begin(), g.tables.end());
    stability = report::verdict_stability(few, all, report::kFewSplits);
    if (claims) {
      stability->claims_few =
          report::claim_counts_text(report::count_claims(report::evaluate_claims(*claims, few)));
    }
  }
  const fs::path out = vm["out"].as<std::string>();
  std::vector<report::Table> all_tables;
  size_t damaged = 0;
  for (const auto& g : made) {
    const auto& tables = g.tables;
    ex::write_tables(tables, out);
    all_tables.insert(all_tables.end(), tables.begin(), tables.end());
    for (const auto& t : tables) {
      int entries = 0, agree = 0, disagree = 0, unexplained = 0;
      for (const auto& r : t.rows) {
        for (const auto& e : r.entries) {
          ++entries;
          agree += e.agree == "yes";
          disagree += e.agree == "no";
          unexplained += report::is_unexplained(t, e);
        }
      }
      std::cout << fmt::format(
          "{}: {} rows, {} cells ({} incomplete; agree {}, disagree {}, unexplained {})\n",
          (out / (t.spec.name + ".tex")).string(), t.rows.size(), entries, t.incomplete(), agree,
          disagree, unexplained);
    }
    damaged += g.check.damaged.size();
    if (!g.check.damaged.empty()) {
      std::cerr << fmt::format(
          "dkp tables: grid {} (profile {}) has {} damaged cell{} (left out of its tables):\n",
          g.grid->name, g.grid->profile, g.check.damaged.size(),
          g.check.damaged.size() == 1 ? "" : "s");
      for (const auto& c : g.check.damaged) {
        std::cerr << fmt::format(
            "  {} {}: {}\n    to recompute it: dkp grid run {}{} --results {} "
            "--force --cell {}\n",
            c.hash, c.label, c.detail, g.grid->file.string(),
            g.grid->profile == "full" ? "" : " --profile " + g.grid->profile, g.root.string(),
            c.hash);
      }
    }
  }
  if (vm.count("summary")) {
    const fs::path page = vm["summary"].as<std::string>();
    const fs::path dir = page.parent_path().empty() ? fs::path(".") : page.parent_path();
    // The tables' directory relative to the page's, for its links ("tables/").
    const fs::path rel = fs::absolute(out).lexically_normal().lexically_relative(
        fs::absolute(dir).lexically_normal());
    report::SummaryLinks links;
    links.tables = rel.empty() || rel == "." ? std::string() : rel.generic_string() + "/";
    if (rel.empty()) {
      spdlog::warn("no relative path from '{}' to '{}': the page links to bare table file names",
                   dir.string(), out.string());
    }
    for (const auto& [stem, svg] : report::summary_figures(all_tables)) {
      util::write_file_atomic(dir / "figures" / (stem + ".svg"), svg);
    }
    if (claim_results) {
      const fs::path claims_page = dir / links.claims;
      util::write_file_atomic(claims_page, report::claims_markdown(*claim_results, links.tables,
                                                                   page.filename().string()));
      std::cout << fmt::format("{}: the papers' claims: {}\n", claims_page.string(),
                               report::claim_counts_text(report::count_claims(*claim_results)));
    }
    // The store's cells by provenance (clean commit, modified tree, verified), when every grid
    // reads one results root.
    std::optional<report::ProvenanceCounts> provenance;
    if (std::all_of(made.begin(), made.end(),
                    [&](const GridTables& g) { return g.root == made.front().root; })) {
      provenance = ex::count_store_provenance(made.front().root);
    }
    util::write_file_atomic(
        page, report::summary_markdown(
                  all_tables, explanations, links, claim_results ? &*claim_results : nullptr,
                  provenance ? &*provenance : nullptr, stability ? &*stability : nullptr));
    std::cout << fmt::format("{}: {}\n", page.string(), report::scoreboard_line(all_tables));
    // Rows that explain nothing now: left over from entries that agree since or whose sign or
    // size left the row's range, or written ahead of splits still to come. Said on stderr
    // (make tables keeps stdout in a log), not an error: remove or correct them.
    const auto unused = report::unused_explanations(all_tables, explanations);
    if (!unused.empty()) {
      std::cerr << fmt::format(
          "note: {} of {} explanation rows explain no disagreement of these tables:\n",
          unused.size(), explanations.size());
    }
    for (const report::Explanation* x : unused) {
      std::cerr << fmt::format("  {}: {}\n", x->source, x->note);
    }
  }
  return damaged ? kExitError : kExitOk;
}

}  // namespace dkp::cli
