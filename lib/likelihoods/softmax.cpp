#include "likelihoods/softmax.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::likelihoods {

arma::mat softmax_rows(const arma::mat& F) {
  arma::mat P = F.each_col() - arma::max(F, 1);
  P = arma::exp(P);
  P.each_col() /= arma::sum(P, 1);
  return P;
}

autodiff::Var log_softmax_pick_sum(const autodiff::Var& F, const arma::uvec& y) {
  const arma::mat& f = F.val();
  if (y.n_elem != f.n_rows) {
    throw Error(
        fmt::format("softmax likelihood: {} labels for {} rows of logits", y.n_elem, f.n_rows));
  }
  if (f.n_rows > 0 && y.max() >= f.n_cols) {
    throw Error(fmt::format("softmax likelihood: label {} for {} classes", y.max(), f.n_cols));
  }
  const arma::vec mx = arma::max(f, 1);
  const arma::vec lse = mx + arma::log(arma::sum(arma::exp(f.each_col() - mx), 1));
  double value = 0.0;
  for (arma::uword n = 0; n < f.n_rows; ++n) value += f(n, y[n]) - lse[n];
  return F.tape().record(arma::mat(1, 1, arma::fill::value(value)), {F},
                         [F, y](autodiff::Node* out) {
                           return [F, y, out] {
                             arma::mat g = -softmax_rows(F.val());
                             for (arma::uword n = 0; n < g.n_rows; ++n) g(n, y[n]) += 1.0;
                             g *= out->adj(0, 0);
                             autodiff::accumulate(F, std::move(g));
                           };
                         });
}

}  // namespace dkp::likelihoods
