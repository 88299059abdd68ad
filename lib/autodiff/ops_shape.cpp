#include "autodiff/ops_shape.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "linalg/columns.hpp"
#include "util/error.hpp"

namespace dkp::autodiff {

namespace {

std::string shape(const Var& v) {
  return fmt::format("{}x{}", v.n_rows(), v.n_cols());
}

bool is_vector(const Var& v) {
  return v.n_rows() == 1 || v.n_cols() == 1;
}

void check_row(const Var& a, const Var& row, const char* op) {
  if (row.n_rows() != 1 || row.n_cols() != a.n_cols()) {
    throw Error(fmt::format("autodiff::{}: row vector is {}, expected 1x{} for a {} matrix", op,
                            shape(row), a.n_cols(), shape(a)));
  }
}

void check_col(const Var& a, const Var& col, const char* op) {
  if (col.n_cols() != 1 || col.n_rows() != a.n_rows()) {
    throw Error(fmt::format("autodiff::{}: column vector is {}, expected {}x1 for a {} matrix", op,
                            shape(col), a.n_rows(), shape(a)));
  }
}

void check_square(const Var& a, const char* op) {
  if (a.n_rows() != a.n_cols()) {
    throw Error(fmt::format("autodiff::{}: {} matrix is not square", op, shape(a)));
  }
}

// One input standing for all of `xs` in Tape::record's needs-gradient test.
Var representative(const std::vector<Var>& xs) {
  for (const Var& x : xs)
    if (x.needs_grad()) return x;
  return xs.front();
}

}  // namespace

// ---- blocks
// ---------------------------------------------------------------------------------------

Var submat(const Var& a, arma::uword r1, arma::uword c1, arma::uword r2, arma::uword c2) {
  if (r1 > r2 || c1 > c2 || r2 >= a.n_rows() || c2 >= a.n_cols()) {
    throw Error(
        fmt::format("autodiff::submat: rows {}..{}, cols {}..{} out of range for a {} "
                    "matrix",
                    r1, r2, c1, c2, shape(a)));
  }
  return a.tape().record(a.val().submat(r1, c1, r2, c2), {a}, [a, r1, c1, r2, c2](Node* out) {
    return [a, r1, c1, r2, c2, out] { a.node()->adj_ref().submat(r1, c1, r2, c2) += out->adj; };
  });
}

Var rows(const Var& a, arma::uword first, arma::uword last) {
  if (first > last || last >= a.n_rows()) {
    throw Error(fmt::format("autodiff::rows: rows {}..{} out of range for a {} matrix", first, last,
                            shape(a)));
  }
  return submat(a, first, 0, last, a.n_cols() - 1);
}

Var cols(const Var& a, arma::uword first, arma::uword last) {
  if (first > last || last >= a.n_cols()) {
    throw Error(fmt::format("autodiff::cols: columns {}..{} out of range for a {} matrix", first,
                            last, shape(a)));
  }
  return submat(a, 0, first, a.n_rows() - 1, last);
}

Var select_rows(const Var& a, const arma::uvec& idx) {
  if (!idx.is_empty() && idx.max() >= a.n_rows()) {
    throw Error(fmt::format("autodiff::select_rows: row index {} out of range for a {} matrix",
                            idx.max(), shape(a)));
  }
  return a.tape().record(a.val().rows(idx), {a}, [a, idx](Node* out) {
    return [a, idx, out] {
      arma::mat& g = a.node()->adj_ref();
      for (arma::uword i = 0; i < idx.n_elem; ++i) g.row(idx[i]) += out->adj.row(i);
    };
  });
}

// ---- concatenation
// ----------------------------------------------------------------------------------

Var join_horiz(const Var& a, const Var& b) {
  return join_horiz(std::vector<Var>{a, b});
}

Var join_vert(const Var& a, const Var& b) {
  return join_vert(std::vector<Var>{a, b});
}

Var join_horiz(const std::vector<Var>& xs) {
  if (xs.empty()) throw Error("autodiff::join_horiz: nothing to join");
  arma::uword cols = 0;
  for (const Var& x : xs) {
    if (x.n_rows() != xs.front().n_rows()) {
      throw Error(fmt::format("autodiff::join_horiz: {} and {} have different row counts",
                              shape(xs.front()), shape(x)));
    }
    cols += x.n_cols();
  }
  arma::mat v(xs.front().n_rows(), cols);
  arma::uword c = 0;
  for (const Var& x : xs) {
    if (x.n_cols() > 0) v.cols(c, c + x.n_cols() - 1) = x.val();
    c += x.n_cols();
  }
  return xs.front().tape().record(std::move(v), {representative(xs)}, [xs](Node* out) {
    return [xs, out] {
      arma::uword c = 0;
      for (const Var& x : xs) {
        if (x.needs_grad() && x.n_cols() > 0) {
          x.node()->adj_ref() += out->adj.cols(c, c + x.n_cols() - 1);
        }
        c += x.n_cols();
      }
    };
  });
}

Var join_vert(const std::vector<Var>& xs) {
  if (xs.empty()) throw Error("autodiff::join_vert: nothing to join");
  arma::uword rows = 0;
  for (const Var& x : xs) {
    if (x.n_cols() != xs.front().n_cols()) {
      throw Error(fmt::format("autodiff::join_vert: {} and {} have different column counts",
                              shape(xs.front()), shape(x)));
    }
    rows += x.n_rows();
  }
  arma::mat v(rows, xs.front().n_cols());
  arma::uword r = 0;
  for (const Var& x : xs) {
    if (x.n_rows() > 0) v.rows(r, r + x.n_rows() - 1) = x.val();
    r += x.n_rows();
  }
  return xs.front().tape().record(std::move(v), {representative(xs)}, [xs](Node* out) {
    return [xs, out] {
      arma::uword r = 0;
      for (const Var& x : xs) {
        if (x.needs_grad() && x.n_rows() > 0) {
          x.node()->adj_ref() += out->adj.rows(r, r + x.n_rows() - 1);
        }
        r += x.n_rows();
      }
    };
  });
}

Var block2x2(const Var& A, const Var& B, const Var& C, const Var& D) {
  if (A.n_rows() != B.n_rows() || C.n_rows() != D.n_rows() || A.n_cols() != C.n_cols() ||
      B.n_cols() != D.n_cols()) {
    throw Error(fmt::format("autodiff::block2x2: blocks [{}, {}; {}, {}] do not fit together",
                            shape(A), shape(B), shape(C), shape(D)));
  }
  const arma::uword r = A.n_rows(), c = A.n_cols();
  arma::mat v(r + C.n_rows(), c + B.n_cols());
  auto put = [&v](const Var& x, arma::uword r0, arma::uword c0) {
    if (x.val().n_elem > 0) v.submat(r0, c0, r0 + x.n_rows() - 1, c0 + x.n_cols() - 1) = x.val();
  };
  put(A, 0, 0);
  put(B, 0, c);
  put(C, r, 0);
  put(D, r, c);
  const std::vector<Var> xs{A, B, C, D};
  return A.tape().record(std::move(v), {representative(xs)}, [A, B, C, D, r, c](Node* out) {
    return [A, B, C, D, r, c, out] {
      auto take = [out](const Var& x, arma::uword r0, arma::uword c0) {
        if (x.needs_grad() && x.val().n_elem > 0) {
          x.node()->adj_ref() += out->adj.submat(r0, c0, r0 + x.n_rows() - 1, c0 + x.n_cols() - 1);
        }
      };
      take(A, 0, 0);
      take(B, 0, c);
      take(C, r, 0);
      take(D, r, c);
    };
  });
}

// ---- diagonals and triangles
// ----------------------------------------------------------------------------

Var diag(const Var& a) {
  return a.tape().record(arma::mat(a.val().diag()), {a}, [a](Node* out) {
    return [a, out] { a.node()->adj_ref().diag() += out->adj; };
  });
}

Var diagmat(const Var& v) {
  if (!is_vector(v)) {
    throw Error(fmt::format("autodiff::diagmat: {} is not a vector", shape(v)));
  }
  return v.tape().record(arma::diagmat(arma::vectorise(v.val())), {v}, [v](Node* out) {
    return [v, out] {
      arma::mat& g = v.node()->adj_ref();
      const arma::vec d = out->adj.diag();
      for (arma::uword i = 0; i < d.n_elem; ++i) g[i] += d[i];
    };
  });
}

Var tril(const Var& a, int k) {
  check_square(a, "tril");
  const arma::uword n = a.n_rows();
  // Armadillo requires |k| < n for its k-argument forms; handle the degenerate cases directly.
  if (n == 0) return a.tape().record(a.val(), {a}, [](Node*) { return [] {}; });
  const arma::sword kk = std::clamp<arma::sword>(k, -arma::sword(n), arma::sword(n));
  auto mask = [n, kk](const arma::mat& x) -> arma::mat {
    if (kk >= arma::sword(n) - 1) return x;
    if (kk <= -arma::sword(n)) return arma::zeros(n, n);
    return arma::trimatl(x, kk);
  };
  return a.tape().record(mask(a.val()), {a}, [a, mask](Node* out) {
    return [a, mask, out] { a.node()->adj_ref() += mask(out->adj); };
  });
}

Var triu(const Var& a, int k) {
  check_square(a, "triu");
  const arma::uword n = a.n_rows();
  if (n == 0) return a.tape().record(a.val(), {a}, [](Node*) { return [] {}; });
  const arma::sword kk = std::clamp<arma::sword>(k, -arma::sword(n), arma::sword(n));
  auto mask = [n, kk](const arma::mat& x) -> arma::mat {
    if (kk <= -(arma::sword(n) - 1)) return x;
    if (kk >= arma::sword(n)) return arma::zeros(n, n);
    return arma::trimatu(x, kk);
  };
  return a.tape().record(mask(a.val()), {a}, [a, mask](Node* out) {
    return [a, mask, out] { a.node()->adj_ref() += mask(out->adj); };
  });
}

// ---- broadcasting
// ----------------------------------------------------------------------------------------

Var add_each_row(const Var& a, const Var& row) {
  check_row(a, row, "add_each_row");
  arma::mat v = a.val();
  v.each_row() += row.val();
  return a.tape().record(std::move(v), {a, row}, [a, row](Node* out) {
    return [a, row, out] {
      accumulate(a, out->adj);
      if (row.needs_grad()) row.node()->adj_ref() += arma::sum(out->adj, 0);
    };
  });
}

Var mul_each_row(const Var& a, const Var& row) {
  check_row(a, row, "mul_each_row");
  arma::mat v = a.val();
  v.each_row() %= row.val();
  return a.tape().record(std::move(v), {a, row}, [a, row](Node* out) {
    return [a, row, out] {
      if (a.needs_grad()) {
        arma::mat g = out->adj;
        g.each_row() %= row.val();
        a.node()->adj_ref() += g;
      }
      if (row.needs_grad()) row.node()->adj_ref() += arma::sum(out->adj % a.val(), 0);
    };
  });
}

Var div_each_row(const Var& a, const Var& row) {
  check_row(a, row, "div_each_row");
  arma::mat v = a.val();
  v.each_row() /= row.val();
  return a.tape().record(std::move(v), {a, row}, [a, row](Node* out) {
    return [a, row, out] {
      if (a.needs_grad()) {
        arma::mat g = out->adj;
        g.each_row() /= row.val();
        a.node()->adj_ref() += g;
      }
      // d(a / r)/dr = -(a / r) / r
      if (row.needs_grad()) {
        row.node()->adj_ref() -= arma::sum(out->adj % out->val, 0) / row.val();
      }
    };
  });
}

Var add_each_col(const Var& a, const Var& col) {
  check_col(a, col, "add_each_col");
  arma::mat v = a.val();
  v.each_col() += col.val();
  return a.tape().record(std::move(v), {a, col}, [a, col](Node* out) {
    return [a, col, out] {
      accumulate(a, out->adj);
      if (col.needs_grad()) col.node()->adj_ref() += arma::sum(out->adj, 1);
    };
  });
}

Var mul_each_col(const Var& a, const Var& col) {
  check_col(a, col, "mul_each_col");
  arma::mat v = a.val();
  v.each_col() %= col.val();
  return a.tape().record(std::move(v), {a, col}, [a, col](Node* out) {
    return [a, col, out] {
      if (a.needs_grad()) {
        arma::mat g = out->adj;
        g.each_col() %= col.val();
        a.node()->adj_ref() += g;
      }
      if (col.needs_grad()) col.node()->adj_ref() += arma::sum(out->adj % a.val(), 1);
    };
  });
}

Var add_scaled_noise(const Var& mean, arma::mat noise, const Var& sd) {
  check_col(mean, sd, "add_scaled_noise");
  if (noise.n_rows != mean.n_rows() || noise.n_cols != mean.n_cols()) {
    throw Error(fmt::format("autodiff::add_scaled_noise: mean {}x{}, noise {}x{}", mean.n_rows(),
                            mean.n_cols(), noise.n_rows, noise.n_cols));
  }
  arma::mat v = noise;
  v.each_col() %= sd.val();
  v += mean.val();
  return mean.tape().record(std::move(v), {mean, sd},
                            [mean, sd, noise = std::move(noise)](Node* out) mutable {
                              return [mean, sd, noise = std::move(noise), out] {
                                if (sd.needs_grad()) accumulate(sd, arma::sum(out->adj % noise, 1));
                                accumulate(mean, out->adj);
                              };
                            });
}

Var div_each_col(const Var& a, const Var& col) {
  check_col(a, col, "div_each_col");
  arma::mat v = a.val();
  v.each_col() /= col.val();
  return a.tape().record(std::move(v), {a, col}, [a, col](Node* out) {
    return [a, col, out] {
      if (a.needs_grad()) {
        arma::mat g = out->adj;
        g.each_col() /= col.val();
        a.node()->adj_ref() += g;
      }
      if (col.needs_grad()) {
        col.node()->adj_ref() -= arma::sum(out->adj % out->val, 1) / col.val();
      }
    };
  });
}

Var repmat(const Var& a, arma::uword r, arma::uword c) {
  return a.tape().record(arma::repmat(a.val(), r, c), {a}, [a, r, c](Node* out) {
    return [a, r, c, out] {
      const arma::uword n = a.n_rows(), m = a.n_cols();
      if (n == 0 || m == 0) return;
      arma::mat& g = a.node()->adj_ref();
      for (arma::uword j = 0; j < c; ++j)
        for (arma::uword i = 0; i < r; ++i)
          g += out->adj.submat(i * n, j * m, (i + 1) * n - 1, (j + 1) * m - 1);
    };
  });
}

// ---- reductions along one dimension
// -------------------------------------------------------------------

Var row_sums(const Var& a) {
  return a.tape().record(arma::sum(a.val(), 1), {a}, [a](Node* out) {
    return [a, out] { a.node()->adj_ref().each_col() += arma::vec(out->adj); };
  });
}

Var col_sums(const Var& a) {
  return a.tape().record(arma::sum(a.val(), 0), {a}, [a](Node* out) {
    return [a, out] { a.node()->adj_ref().each_row() += arma::rowvec(out->adj); };
  });
}

// One pass forward and one backward (Abar += 2 A diag(g)), instead of square + col_sums +
// transpose.
Var col_sumsq(const Var& A) {
  const arma::mat& a = A.val();
  arma::mat v(a.n_cols, 1, arma::fill::none);
  linalg::col_sumsq(a.memptr(), a.n_rows, a.n_cols, v.memptr());
  return A.tape().record(std::move(v), {A}, [A](Node* out) {
    return [A, out] {
      Node* n = A.node();
      const arma::mat& a = A.val();
      const bool add = n->has_adj();
      if (!add) n->adj.set_size(a.n_rows, a.n_cols);
      for (arma::uword j = 0; j < a.n_cols; ++j) {
        const double g = 2.0 * out->adj[j];
        const double* c = a.colptr(j);
        double* d = n->adj.colptr(j);
        if (add) {
          for (arma::uword i = 0; i < a.n_rows; ++i) d[i] += g * c[i];
        } else {
          for (arma::uword i = 0; i < a.n_rows; ++i) d[i] = g * c[i];
        }
      }
    };
  });
}

// ---- reshaping
// ------------------------------------------------------------------------------------------

Var reshape(const Var& a, arma::uword r, arma::uword c) {
  if (r * c != a.val().n_elem) {
    throw Error(fmt::format("autodiff::reshape: cannot reshape {} ({} elements) to {}x{}", shape(a),
                            a.val().n_elem, r, c));
  }
  arma::mat v(a.val().memptr(), r, c);  // copy, column-major order kept
  return a.tape().record(std::move(v), {a}, [a](Node* out) {
    return [a, out] {
      a.node()->adj_ref() += arma::mat(out->adj.memptr(), a.n_rows(), a.n_cols(), false, true);
    };
  });
}

Var vectorise(const Var& a) {
  return reshape(a, a.val().n_elem, 1);
}

// ---- piecewise linear
// -----------------------------------------------------------------------------------

Var relu(const Var& a) {
  return a.tape().record(arma::clamp(a.val(), 0.0, arma::datum::inf), {a}, [a](Node* out) {
    return [a, out] { accumulate(a, out->adj % arma::conv_to<arma::mat>::from(a.val() > 0.0)); };
  });
}

Var clamp(const Var& a, double lo, double hi) {
  if (!(lo <= hi)) {
    throw Error(fmt::format("autodiff::clamp: lower bound {} exceeds upper bound {}", lo, hi));
  }
  return a.tape().record(arma::clamp(a.val(), lo, hi), {a}, [a, lo, hi](Node* out) {
    return [a, lo, hi, out] {
      accumulate(a, out->adj % arma::conv_to<arma::mat>::from((a.val() >= lo) % (a.val() <= hi)));
    };
  });
}

}  // namespace dkp::autodiff
