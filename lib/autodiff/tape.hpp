// Reverse-mode automatic differentiation over matrices (DESIGN.md section 4).
//
// A Tape records nodes; each node holds a value (arma::mat), an adjoint of the same shape
// (allocated lazily, only for nodes that need a gradient) and a backward closure that adds the
// node's adjoint contribution to its inputs' adjoints. This is the "var of matrix" design of Stan
// Math: one closure per matrix operation, so the tape overhead is small next to BLAS/LAPACK.
// Scalars are 1x1 nodes. There is no global tape: every Var points at the Tape that owns it.
//
// Usage:
//   Tape tape;
//   Var x = tape.variable(x0);           // leaf with gradient
//   Var y = sum(square(x));              // ops in autodiff/ops.hpp
//   tape.backward(y);                    // y must be 1x1
//   arma::mat g = x.grad();              // dy/dx, same shape as x
//   tape.clear();                        // ready for the next evaluation
#pragma once

#include <armadillo>
#include <deque>
#include <functional>
#include <string>
#include <utility>

#include "linalg/chol.hpp"

namespace dkp::autodiff {

class Tape;

/// One recorded value. Owned by a Tape (addresses are stable until clear()).
struct Node {
  arma::mat val;
  arma::mat adj;                   ///< empty until something propagates into it
  std::function<void()> backward;  ///< empty for leaves and constants
  bool needs_grad = false;
  /// Set by the op that made this node when its backward closure reads only the diagonal of the
  /// adjoint (distributions::bartlett_assemble with a constant strict lower triangle: only
  /// c = diag(T)^2 carries a gradient). Ops consuming the node may then leave the adjoint's
  /// off-diagonal entries incomplete and skip the work that only feeds them (the DIWP's
  /// N0 x N0 Bartlett factor: tri_solve's and matmul's adjoints of T, about 80 GFlop a step on
  /// CIFAR-10). The diagonal must be exactly what the full adjoint would have (to the last bit
  /// for matmul and tri_solve; sq_norm_tri_t_inv and times_iw_factor compute it directly as row
  /// or column sums, the same value up to round-off).
  bool adj_diag_only = false;

  /// Adjoint, zero-initialised on first use.
  arma::mat& adj_ref() {
    if (adj.n_elem != val.n_elem || adj.n_rows != val.n_rows) adj.zeros(val.n_rows, val.n_cols);
    return adj;
  }
  bool has_adj() const { return adj.n_elem == val.n_elem && adj.n_rows == val.n_rows; }
};

/// Handle to a node on a tape. Cheap to copy.
class Var {
 public:
  Var() = default;
  Var(Tape* tape, Node* node) : tape_(tape), node_(node) {}

  const arma::mat& val() const { return node_->val; }
  double scalar() const;  ///< value of a 1x1 node; throws otherwise
  arma::uword n_rows() const { return node_->val.n_rows; }
  arma::uword n_cols() const { return node_->val.n_cols; }
  bool needs_grad() const { return node_->needs_grad; }
  /// Gradient after Tape::backward (zeros if nothing reached this node).
  arma::mat grad() const;

  Tape& tape() const { return *tape_; }
  Node* node() const { return node_; }
  bool valid() const { return node_ != nullptr; }

 private:
  Tape* tape_ = nullptr;
  Node* node_ = nullptr;
};

class Tape {
 public:
  Tape() = default;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  /// A leaf whose gradient is wanted.
  Var variable(arma::mat value);
  /// A leaf without gradient (data, noise draws).
  Var constant(arma::mat value);
  Var constant(double value) { return constant(arma::mat(1, 1, arma::fill::value(value))); }

  /// Records an op result. `inputs` decide whether the result needs a gradient; when it does,
  /// `make_backward(out)` is called to build the closure (it receives the output node).
  template <class MakeBackward>
  Var record(arma::mat value, std::initializer_list<Var> inputs, MakeBackward&& make_backward) {
    bool needs = false;
    for (const Var& v : inputs) needs = needs || v.needs_grad();
    Node& n = nodes_.emplace_back();
    n.val = std::move(value);
    n.needs_grad = needs;
    if (needs) n.backward = make_backward(&n);
    return Var(this, &n);
  }

  /// Records two results of one op that share a backward closure (a fused op whose adjoint is
  /// cheapest computed for both at once). `make_backward(out1, out2)` builds the closure, stored
  /// on the first node; it runs when either result's adjoint was reached and reads out2->adj only
  /// when out2->has_adj() (the tape resets every adjoint before a reverse pass). The second node,
  /// recorded after the first and so reached first, only makes sure the first's closure runs.
  template <class MakeBackward>
  std::pair<Var, Var> record_pair(arma::mat value1, arma::mat value2,
                                  std::initializer_list<Var> inputs, MakeBackward&& make_backward) {
    bool needs = false;
    for (const Var& v : inputs) needs = needs || v.needs_grad();
    Node& first = nodes_.emplace_back();  // a deque keeps references valid as it grows
    first.val = std::move(value1);
    first.needs_grad = needs;
    Node& second = nodes_.emplace_back();
    second.val = std::move(value2);
    second.needs_grad = needs;
    if (needs) {
      first.backward = make_backward(&first, &second);
      second.backward = [&first] { first.adj_ref(); };
    }
    return {Var(this, &first), Var(this, &second)};
  }

  /// Runs the reverse pass from a 1x1 node (seed adjoint 1, or `seed` for a non-scalar output).
  void backward(const Var& output);
  void backward(const Var& output, const arma::mat& seed);

  /// Drops all nodes; Vars on this tape become invalid.
  void clear() { nodes_.clear(); }
  size_t size() const { return nodes_.size(); }

  /// The Cholesky factorisations of this tape's ops (autodiff/ops_linalg.hpp) that were not given
  /// a CholStats of their own: how many, how many needed jitter and how much (DESIGN.md: runs
  /// count jitter events in their metrics; training/mc.hpp collects them per evaluation).
  linalg::CholStats& chol_stats() { return chol_stats_; }
  const linalg::CholStats& chol_stats() const { return chol_stats_; }

 private:
  std::deque<Node> nodes_;
  linalg::CholStats chol_stats_;
};

/// Adds `g` into the adjoint of `v` if `v` needs a gradient. The first contribution is copied
/// (or moved, or evaluated from an Armadillo expression) into the adjoint instead of being added
/// to a zero-filled one: no memset and one pass less over fresh memory.
inline void accumulate(const Var& v, const arma::mat& g) {
  if (!v.needs_grad()) return;
  Node* n = v.node();
  if (n->has_adj())
    n->adj += g;
  else
    n->adj = g;
}
inline void accumulate(const Var& v, arma::mat&& g) {
  if (!v.needs_grad()) return;
  Node* n = v.node();
  if (n->has_adj())
    n->adj += g;
  else
    n->adj = std::move(g);
}
/// As above for an Armadillo expression (evaluated straight into the adjoint, no temporary).
/// The expression must not read v's own adjoint.
template <class T1>
void accumulate(const Var& v, const arma::Base<double, T1>& g) {
  if (!v.needs_grad()) return;
  Node* n = v.node();
  if (n->has_adj())
    n->adj += g.get_ref();
  else
    n->adj = g.get_ref();
}
/// Adds the constant c to every element of v's adjoint (the adjoint of a broadcast scalar).
inline void accumulate_fill(const Var& v, double c) {
  if (!v.needs_grad()) return;
  Node* n = v.node();
  if (n->has_adj()) {
    n->adj += c;
  } else {
    n->adj.set_size(n->val.n_rows, n->val.n_cols);
    n->adj.fill(c);
  }
}

}  // namespace dkp::autodiff
