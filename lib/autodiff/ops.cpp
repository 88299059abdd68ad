#include "autodiff/ops.hpp"

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

// Reduces a gradient of the broadcast result to the shape of operand v.
arma::mat reduce_to(const Var& v, const arma::mat& g) {
  if (v.val().n_rows == g.n_rows && v.val().n_cols == g.n_cols) return g;
  return arma::mat(1, 1, arma::fill::value(arma::accu(g)));
}

// Elementwise binary op with 1x1 broadcasting: out = f(a, b) on matching shapes.
template <class F>
arma::mat broadcast(const arma::mat& a, const arma::mat& b, F f) {
  if (a.n_rows == b.n_rows && a.n_cols == b.n_cols) return f(a, b);
  if (a.n_elem == 1) return f(arma::mat(b.n_rows, b.n_cols, arma::fill::value(a[0])), b);
  return f(a, arma::mat(a.n_rows, a.n_cols, arma::fill::value(b[0])));
}

}  // namespace

Var add(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "add");
  arma::mat v = broadcast(
      a.val(), b.val(), [](const arma::mat& x, const arma::mat& y) -> arma::mat { return x + y; });
  return a.tape().record(std::move(v), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      accumulate(a, reduce_to(a, out->adj));
      accumulate(b, reduce_to(b, out->adj));
    };
  });
}

Var sub(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "sub");
  arma::mat v = broadcast(
      a.val(), b.val(), [](const arma::mat& x, const arma::mat& y) -> arma::mat { return x - y; });
  return a.tape().record(std::move(v), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      accumulate(a, reduce_to(a, out->adj));
      if (b.needs_grad()) accumulate(b, reduce_to(b, -out->adj));
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
  arma::mat v = broadcast(
      a.val(), b.val(), [](const arma::mat& x, const arma::mat& y) -> arma::mat { return x % y; });
  return a.tape().record(std::move(v), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      if (a.needs_grad()) {
        accumulate(a,
                   reduce_to(a, broadcast(out->adj, b.val(),
                                          [](const arma::mat& g, const arma::mat& y) -> arma::mat {
                                            return g % y;
                                          })));
      }
      if (b.needs_grad()) {
        accumulate(b,
                   reduce_to(b, broadcast(out->adj, a.val(),
                                          [](const arma::mat& g, const arma::mat& x) -> arma::mat {
                                            return g % x;
                                          })));
      }
    };
  });
}

Var div(const Var& a, const Var& b) {
  check_same_or_scalar(a, b, "div");
  arma::mat v = broadcast(
      a.val(), b.val(), [](const arma::mat& x, const arma::mat& y) -> arma::mat { return x / y; });
  return a.tape().record(std::move(v), {a, b}, [a, b](Node* out) {
    return [a, b, out] {
      // d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b
      const arma::mat gb =
          broadcast(out->adj, b.val(),
                    [](const arma::mat& g, const arma::mat& y) -> arma::mat { return g / y; });
      if (a.needs_grad()) accumulate(a, reduce_to(a, gb));
      if (b.needs_grad()) accumulate(b, reduce_to(b, -gb % out->val));
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
  if (!trans_a && !trans_b)
    v = a.val() * b.val();
  else if (trans_a && !trans_b)
    v = a.val().t() * b.val();
  else if (!trans_a && trans_b)
    v = a.val() * b.val().t();
  else
    v = a.val().t() * b.val().t();
  return a.tape().record(std::move(v), {a, b}, [a, b, trans_a, trans_b](Node* out) {
    return [a, b, trans_a, trans_b, out] {
      const arma::mat& G = out->adj;
      const arma::mat& A = a.val();
      const arma::mat& B = b.val();
      // C = op(A) op(B); dL/dop(A) = G op(B)^T, dL/dop(B) = op(A)^T G.
      if (a.needs_grad()) {
        if (!trans_a)
          a.node()->adj_ref() += trans_b ? arma::mat(G * B) : arma::mat(G * B.t());
        else
          a.node()->adj_ref() += trans_b ? arma::mat(B.t() * G.t()) : arma::mat(B * G.t());
      }
      if (b.needs_grad()) {
        if (!trans_b)
          b.node()->adj_ref() += trans_a ? arma::mat(A * G) : arma::mat(A.t() * G);
        else
          b.node()->adj_ref() += trans_a ? arma::mat(G.t() * A.t()) : arma::mat(G.t() * A);
      }
    };
  });
}

Var transpose(const Var& a) {
  return a.tape().record(a.val().t(), {a},
                         [a](Node* out) { return [a, out] { accumulate(a, out->adj.t()); }; });
}

Var sum(const Var& a) {
  return a.tape().record(
      arma::mat(1, 1, arma::fill::value(arma::accu(a.val()))), {a},
      [a](Node* out) { return [a, out] { a.node()->adj_ref() += out->adj[0]; }; });
}

Var mean(const Var& a) {
  const double n = static_cast<double>(a.val().n_elem);
  return a.tape().record(
      arma::mat(1, 1, arma::fill::value(arma::accu(a.val()) / n)), {a},
      [a, n](Node* out) { return [a, n, out] { a.node()->adj_ref() += out->adj[0] / n; }; });
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
