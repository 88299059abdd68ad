// Differentiable shape operations: blocks, concatenation, diagonals, triangles, row/column
// broadcasting (for kernels), repetition, row/column sums, reshaping, and the piecewise-linear
// max(x, 0) and clamp. Index arguments follow Armadillo (inclusive ranges, 0-based).
// Shape errors throw dkp::Error naming the op.
#pragma once

#include <vector>

#include "autodiff/tape.hpp"

namespace dkp::autodiff {

// ---- blocks -------------------------------------------------------------------------------------
/// a(r1..r2, c1..c2), inclusive bounds as arma::submat.
Var submat(const Var& a, arma::uword r1, arma::uword c1, arma::uword r2, arma::uword c2);
/// Rows first..last (inclusive).
Var rows(const Var& a, arma::uword first, arma::uword last);
/// Columns first..last (inclusive).
Var cols(const Var& a, arma::uword first, arma::uword last);
/// Rows a(idx[0]), a(idx[1]), ... (gather; repeated indices accumulate their gradients).
Var select_rows(const Var& a, const arma::uvec& idx);

// ---- concatenation
// --------------------------------------------------------------------------------
/// [a, b] (same number of rows).
Var join_horiz(const Var& a, const Var& b);
/// [a; b] (same number of columns).
Var join_vert(const Var& a, const Var& b);
/// [x0, x1, ...] in one node (all on the same tape, same number of rows; at least one).
Var join_horiz(const std::vector<Var>& xs);
/// [x0; x1; ...] in one node (same number of columns; at least one).
Var join_vert(const std::vector<Var>& xs);
/// [A, B; C, D] (A, B same rows; C, D same rows; A, C same columns; B, D same columns).
Var block2x2(const Var& A, const Var& B, const Var& C, const Var& D);

// ---- diagonals and triangles
// -------------------------------------------------------------------------
/// Main diagonal as a column vector (min(rows, cols) x 1).
Var diag(const Var& a);
/// Square diagonal matrix from a row or column vector.
Var diagmat(const Var& v);
/// Lower triangle of a square matrix: entries (i, j) with j - i <= k kept, others zero
/// (k = 0: with the diagonal, k = -1: strictly lower), as arma::trimatl(X, k).
Var tril(const Var& a, int k = 0);
/// Upper triangle of a square matrix: entries with j - i >= k kept (arma::trimatu(X, k)).
Var triu(const Var& a, int k = 0);

// ---- broadcasting (a is n x m; row is 1 x m; col is n x 1)
// --------------------------------------------
Var add_each_row(const Var& a, const Var& row);  ///< a.each_row() + row
Var mul_each_row(const Var& a, const Var& row);  ///< a.each_row() % row
Var div_each_row(const Var& a, const Var& row);  ///< a.each_row() / row
Var add_each_col(const Var& a, const Var& col);  ///< a.each_col() + col
Var mul_each_col(const Var& a, const Var& col);  ///< a.each_col() % col
Var div_each_col(const Var& a, const Var& col);  ///< a.each_col() / col
/// mean + noise.each_col() % sd in one op, for a constant noise draw (n x m) and a column of
/// standard deviations sd (n x 1): a Gaussian sample with per-row scales. Adjoints: mean's is
/// the output's, sd's is rowsum(adjoint % noise).
Var add_scaled_noise(const Var& mean, arma::mat noise, const Var& sd);
/// arma::repmat(a, r, c): a tiled r times vertically and c times horizontally.
Var repmat(const Var& a, arma::uword r, arma::uword c);

// ---- reductions along one dimension
// -------------------------------------------------------------------
Var row_sums(const Var& a);  ///< n x 1, sum over each row (arma::sum(a, 1))
Var col_sums(const Var& a);  ///< 1 x m, sum over each column (arma::sum(a, 0))
/// m x 1, sum of squares of each column (arma::sum(arma::square(a), 0).t()), in one pass.
Var col_sumsq(const Var& a);

// ---- reshaping
// ----------------------------------------------------------------------------------------
/// Same elements in column-major order, shape r x c (r * c must equal the element count).
Var reshape(const Var& a, arma::uword r, arma::uword c);
/// Column vector of all elements in column-major order.
Var vectorise(const Var& a);

// ---- piecewise linear
// ---------------------------------------------------------------------------------
/// max(x, 0) elementwise; the gradient is 1 where x > 0 and 0 elsewhere (0 at x = 0).
Var relu(const Var& a);
/// min(max(x, lo), hi) elementwise (lo <= hi); the gradient is 1 where lo <= x <= hi, else 0.
Var clamp(const Var& a, double lo, double hi);

}  // namespace dkp::autodiff
