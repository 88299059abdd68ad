#include "report/stability.hpp"

#include <map>
#include <tuple>

namespace dkp::report {

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string, int, std::string>;

Key key_of(const Table& t, const Row& r, const Entry& e) {
  return {t.spec.name, r.metric, r.kernel, r.dataset, r.depth, e.column};
}

bool judged(const Entry& e) {
  return e.agree == "yes" || e.agree == "no";
}

}  // namespace

VerdictStability verdict_stability(const std::vector<Table>& few, const std::vector<Table>& all,
                                   int few_splits) {
  std::map<Key, const Entry*> by_key;
  for (const auto& t : few) {
    if (t.extra) continue;
    for (const auto& r : t.rows)
      for (const auto& e : r.entries) by_key[key_of(t, r, e)] = &e;
  }
  VerdictStability out;
  out.few_splits = few_splits;
  for (const auto& t : all) {
    if (t.extra) continue;
    for (const auto& r : t.rows) {
      for (const auto& e : r.entries) {
        const auto it = by_key.find(key_of(t, r, e));
        if (it == by_key.end()) continue;
        const Entry& f = *it->second;
        if (e.n_done <= f.n_done || !judged(e) || !judged(f)) continue;
        ++out.compared;
        if (e.agree == f.agree) continue;
        (f.agree == "yes" ? out.agree_to_disagree : out.disagree_to_agree) += 1;
        // The table's spec and the row's keys, for formatting: not their other rows and entries.
        VerdictChange c;
        c.table.spec = t.spec;
        c.row = {r.metric, r.kernel, r.dataset, r.depth, {}};
        c.few = f;
        c.all = e;
        out.changes.push_back(std::move(c));
      }
    }
  }
  return out;
}

}  // namespace dkp::report
