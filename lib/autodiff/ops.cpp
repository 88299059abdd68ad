#include "autodiff/ops.hpp"

#include <cblas.h>

#include <algorithm>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::autodiff {

namespace {

bool is_scalar(const Var& v) {
  return v.val().n_elem == 1;
}

void check_same_or_scalar(const Var& a, const Var& b, const char* op) {
  if (a.n_rows() == b.n_rows() && a.n_cols() == b.n_cols()) return;
  if (is_scalar(a) || is_scalar(b)) return;
  throw Error(fmt::format("autodiff::{}: shapes {}x{} and {}x{} differ", op, a.n_rows(), a.n_cols(),
                          b.n_rows(), b.n_cols()));
}

// Adds sign * g (g the adjoint of the broadcast result) into v's adjoint: as is when the shapes
// match, summed to a scalar when v was the broadcast 1x1 operand.
void accumulate_reduced(const Var& v, const arma::mat& g, double sign) {
  if (!v.needs_grad()) return;
  if (v.val().n_rows == g.n_rows && v.val().n_cols == g.n_cols) {
    if (sign == 1.0)
      accumulate(v, g);
    else
      accumulate(v, sign * g);
  } else {
    accumulate_fill(v, sign * arma::accu(g));
  }
}

// C = op(A) op(B) (beta = 0, C allocated without initialisation) or C += op(A) op(B) (beta = 1),
// straight through dgemm: no temporary for the product and no zero fill of a fresh adjoint.
void gemm_into(arma::mat& C, bool add, const arma::mat& A, bool ta, const arma::mat& B, bool tb) {
  const arma::uword m = ta ? A.n_cols : A.n_rows, k = ta ? A.n_rows : A.n_cols;
  const arma::uword n = tb ? B.n_rows : B.n_cols;
  if (!add) C.set_size(m, n);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!add) C.zeros();
    return;
  }
  cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m),
              int(n), int(k), 1.0, A.memptr(), int(std::max<arma::uword>(1, A.n_rows)), B.memptr(),
              int(std::max<arma::uword>(1, B.n_rows)), add ? 1.0 : 0.0, C.memptr(),
              int(std::max<arma::uword>(1, C.n_rows)));
}

// Square adjoints of at least this size whose diagonal alone is used (Node::adj_diag_only) get
// only their diagonal blocks, kDiagBlock to 2 kDiagBlock - 1 wide, from accumulate_product:
// below it the saving is small. With an inner dimension of at least kDiagBlock, this keeps every
// dgemm call on OpenBLAS's ordinary blocked path (m n k above its small-matrix kernels' 100^3),
// where each entry of the product is the same sum, in the same order and the same K-blocking
// (which depends on k alone), whatever the m x n extent of the call: the diagonal is the full
// product's to the last bit (checked for every transpose combination and beta with the
// Cooperlake, SkylakeX, Haswell and Zen kernels, and by tests/distributions/gradient_test.cpp).
constexpr arma::uword kDiagOnlyMin = 512;
constexpr arma::uword kDiagBlock = 128;

// v's adjoint += op(A) op(B), allocating it on first use.
void accumulate_product(const Var& v, const arma::mat& A, bool ta, const arma::mat& B, bool tb) {
  if (!v.needs_grad()) return;
  Node* n = v.node();
  const arma::uword m = ta ? A.n_cols : A.n_rows, k = ta ? A.n_rows : A.n_cols;
  if (n->adj_diag_only && m >= kDiagOnlyMin && k >= kDiagBlock && n->val.n_rows == m &&
      n->val.n_cols == m) {
    // Only the diagonal blocks of op(A) op(B): 2 m kDiagBlock k flops instead of 2 m^2 k (the
    // DIWP's N0 x N0 Bartlett factor in its log prior: 58 -> 2.4 GFlop on CIFAR-10). The rest of
    // the adjoint is left zero or as it was.
    const bool add = n->has_adj();
    if (!add) n->adj.zeros(m, m);
    for (arma::uword j0 = 0, w = 0; j0 < m; j0 += w) {
      // The last block takes the remainder (no block narrower than kDiagBlock).
      w = m - j0 < 2 * kDiagBlock ? m - j0 : kDiagBlock;
      // Rows j0.. of op(A) and columns j0.. of op(B).
      const double* a = ta ? A.colptr(j0) : A.memptr() + j0;
      const double* b = tb ? B.memptr() + j0 : B.colptr(j0);
      cblas_dgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                  int(w), int(w), int(k), 1.0, a, int(A.n_rows), b, int(B.n_rows), add ? 1.0 : 0.0,
                  n->adj.colptr(j0) + j0, int(m));
    }
    return;
  }
  gemm_into(n->adj, n->has_adj(), A, ta, B, tb);
}

}  // namespace

// Binary elementwise ops: a 1x1 operand is used as a scalar (never materialised as a matrix), and
// its adjoint is the sum of the elementwise adjoint contributions.

Var add(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "add");
  arma::mat v;
  if (a.n_rows() == b.n_rows() && a.n_cols() == b.n_cols())
    v = a.val() + b.val();
  else if (is_scalar(a))
    v = a.val()[0] + b.val();
  else
    v = a.val() + b.val()[0];
  return a.tape().record(std::move(v), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      accumulate_reduced(a, out->adj, 1.0);
      accumulate_reduced(b, out->adj, 1.0);
    };
  });
}

Var sub(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "sub");
  arma::mat v;
  if (a.n_rows() == b.n_rows() && a.n_cols() == b.n_cols())
    v = a.val() - b.val();
  else if (is_scalar(a))
    v = a.val()[0] - b.val();
  else
    v = a.val() - b.val()[0];
  return a.tape().record(std::move(v), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      accumulate_reduced(a, out->adj, 1.0);
      accumulate_reduced(b, out->adj, -1.0);
    };
  });
}

Var neg(const Var& a) {
  return a.tape().record(-a.val(), {a},
                         [a](Node* out) { return [a, out] { accumulate(a, -out->adj); }; });
}

Var scale(const Var& a, double c) {
  return a.tape().record(
      c * a.val(), {a}, [a, c](Node* out) { return [a, c, out] { accumulate(a, c * out->adj); }; });
}

Var add_scalar(const Var& a, double c) {
  return a.tape().record(a.val() + c, {a},
                         [a](Node* out) { return [a, out] { accumulate(a, out->adj); }; });
}

Var mul(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "mul");
  if (a.n_rows() == b.n_rows() && a.n_cols() == b.n_cols()) {
    return a.tape().record(a.val() % b.val(), {a, b}, [a, b](Node* out) {
      return [a, b, out] {
        accumulate(a, out->adj % b.val());
        accumulate(b, out->adj % a.val());
      };
    });
  }
  // One operand s is 1x1: out = s m, d/dm = s G, d/ds = <G, m>.
  const bool a_scalar = is_scalar(a);
  const Var s = a_scalar ? a : b, m = a_scalar ? b : a;
  return a.tape().record(s.val()[0] * m.val(), {a, b}, [s, m](Node* out) {
    return [s, m, out] {
      if (m.needs_grad()) accumulate(m, s.val()[0] * out->adj);
      if (s.needs_grad()) accumulate_fill(s, arma::dot(out->adj, m.val()));
    };
  });
}

Var div(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "div");
  if (a.n_rows() == b.n_rows() && a.n_cols() == b.n_cols()) {
    return a.tape().record(a.val() / b.val(), {a, b}, [a, b](Node* out) {
      return [a, b, out] {
        // d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b
        const arma::mat gb = out->adj / b.val();
        if (b.needs_grad()) accumulate(b, -gb % out->val);
        accumulate(a, gb);
      };
    });
  }
  if (is_scalar(b)) {  // out = a / c: da = G / c, dc = -<G, out> / c
    return a.tape().record(a.val() / b.val()[0], {a, b}, [a, b](Node* out) {
      return [a, b, out] {
        const double c = b.val()[0];
        if (a.needs_grad()) accumulate(a, out->adj / c);
        if (b.needs_grad()) accumulate_fill(b, -arma::dot(out->adj, out->val) / c);
      };
    });
  }
  // out = c / b: dc = sum(G / b), db = -(G / b) % out
  return a.tape().record(a.val()[0] / b.val(), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      const arma::mat gb = out->adj / b.val();
      if (a.needs_grad()) accumulate_fill(a, arma::accu(gb));
      if (b.needs_grad()) accumulate(b, -gb % out->val);
    };
  });
}

Var matmul(const Var& a, const Var& b, bool trans_a, bool trans_b) {
  const arma::uword inner_a = trans_a ? a.n_rows() : a.n_cols();
  const arma::uword inner_b = trans_b ? b.n_cols() : b.n_rows();
  if (inner_a != inner_b) {
    throw Error(fmt::format("autodiff::matmul: inner dimensions differ ({}x{}{} times {}x{}{})",
                            a.n_rows(), a.n_cols(), trans_a ? "^T" : "", b.n_rows(), b.n_cols(),
                            trans_b ? "^T" : ""));
  }
  arma::mat v;
  gemm_into(v, false, a.val(), trans_a, b.val(), trans_b);
  return a.tape().record(std::move(v), {a, b}, [a, b, trans_a, trans_b](Node* out) {
    return [a, b, trans_a, trans_b, out] {
      const arma::mat& G = out->adj;
      const arma::mat& A = a.val();
      const arma::mat& B = b.val();
      // C = op(A) op(B); dL/dop(A) = G op(B)^T, dL/dop(B) = op(A)^T G.
      if (!trans_a)
        accumulate_product(a, G, false, B, !trans_b);  // G op(B)^T
      else
        accumulate_product(a, B, trans_b, G, true);  // (G op(B)^T)^T = op(B) G^T
      if (!trans_b)
        accumulate_product(b, A, !trans_a, G, false);  // op(A)^T G
      else
        accumulate_product(b, G, true, A, trans_a);  // (op(A)^T G)^T = G^T op(A)
    };
  });
}

Var transpose(const Var& a) {
  return a.tape().record(a.val().t(), {a},
                         [a](Node* out) { return [a, out] { accumulate(a, out->adj.t()); }; });
}

Var sum(const Var& a) {
  return a.tape().record(arma::mat(1, 1, arma::fill::value(arma::accu(a.val()))), {a},
                         [a](Node* out) { return [a, out] { accumulate_fill(a, out->adj[0]); }; });
}

Var mean(const Var& a) {
  const double n = static_cast<double>(a.val().n_elem);
  return a.tape().record(
      arma::mat(1, 1, arma::fill::value(arma::accu(a.val()) / n)), {a},
      [a, n](Node* out) { return [a, n, out] { accumulate_fill(a, out->adj[0] / n); }; });
}

Var trace(const Var& a) {
  if (a.n_rows() != a.n_cols()) {
    throw Error(fmt::format("autodiff::trace: {}x{} is not square", a.n_rows(), a.n_cols()));
  }
  return a.tape().record(
      arma::mat(1, 1, arma::fill::value(arma::trace(a.val()))), {a},
      [a](Node* out) { return [a, out] { a.node()->adj_ref().diag() += out->adj[0]; }; });
}

Var exp(const Var& a) {
  return a.tape().record(arma::exp(a.val()), {a}, [a](Node* out) {
    return [a, out] { accumulate(a, out->adj % out->val); };
  });
}

Var log(const Var& a) {
  return a.tape().record(arma::log(a.val()), {a}, [a](Node* out) {
    return [a, out] { accumulate(a, out->adj / a.val()); };
  });
}

Var square(const Var& a) {
  return a.tape().record(arma::square(a.val()), {a}, [a](Node* out) {
    return [a, out] { accumulate(a, 2.0 * out->adj % a.val()); };
  });
}

Var sqrt(const Var& a) {
  return a.tape().record(arma::sqrt(a.val()), {a}, [a](Node* out) {
    return [a, out] { accumulate(a, 0.5 * out->adj / out->val); };
  });
}

}  // namespace dkp::autodiff
