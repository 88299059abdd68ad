#include "autodiff/tape.hpp"

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::autodiff {

double Var::scalar() const {
  if (node_->val.n_elem != 1) {
    throw Error(fmt::format("autodiff: scalar() on a {}x{} value", n_rows(), n_cols()));
  }
  return node_->val[0];
}

arma::mat Var::grad() const {
  if (node_->has_adj()) return node_->adj;
  return arma::zeros(n_rows(), n_cols());
}

Var Tape::variable(arma::mat value) {
  Node& n = nodes_.emplace_back();
  n.val = std::move(value);
  n.needs_grad = true;
  return Var(this, &n);
}

Var Tape::constant(arma::mat value) {
  Node& n = nodes_.emplace_back();
  n.val = std::move(value);
  n.needs_grad = false;
  return Var(this, &n);
}

void Tape::backward(const Var& output) {
  if (output.val().n_elem != 1) {
    throw Error(fmt::format("autodiff: backward() from a {}x{} value needs a seed", output.n_rows(),
                            output.n_cols()));
  }
  backward(output, arma::ones(1, 1));
}

void Tape::backward(const Var& output, const arma::mat& seed) {
  if (output.node()->val.n_rows != seed.n_rows || output.node()->val.n_cols != seed.n_cols) {
    throw Error("autodiff: backward seed shape differs from the output");
  }
  for (auto& n : nodes_) n.adj.reset();
  if (!output.needs_grad()) return;
  output.node()->adj_ref() = seed;
  // Walk back from the output; nodes recorded after it cannot contribute.
  auto it = nodes_.rbegin();
  while (it != nodes_.rend() && &*it != output.node()) ++it;
  for (; it != nodes_.rend(); ++it) {
    if (it->backward && it->has_adj()) it->backward();
  }
}

}  // namespace dkp::autodiff
