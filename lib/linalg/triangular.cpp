#include "linalg/triangular.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"

namespace dkp::linalg {

namespace {

// Largest diagonal block inverted explicitly at the leaves of the recursion.
constexpr int kMaxLeaf = 32;
// Right-hand sides solved at a time (columns for left solves, rows for right ones). Measured on
// the kin8nm GI-DGP step (100 x 100 factors, 7,373 right-hand sides): 128, 256 and 512 give
// 225, 220-230 and 227 ms against 238 without panels; boston's 455 is unchanged.
constexpr int kPanel = 256;
// Fewer right-hand sides than this are solved by dtrsm (solve_into).
constexpr int kMinBlockedRhs = 8;

// Whether the rows x cols block at p (column-major, leading dimension ld) is all zeros. Returns
// at the first nonzero, so a dense block costs one read; a zero block is read once, which is
// what the work skipped because of it (a solve or a product of that block) reads anyway.
//
// Skipping work on zero blocks is exact: a dgemm update with a zero factor adds (+-)0 to each
// entry, which leaves every entry as it was (up to the sign of entries that are themselves
// zero), and a triangular solve of a zero right-hand side is zero. Triangular right-hand sides
// make such blocks (the DIWP's L_q^{-1} sqrt(delta) I, and the adjoint of a triangular factor
// from a triangular operand: about half of each such solve or product on N0 = 3072).
bool all_zero(const double* p, arma::uword rows, arma::uword cols, arma::uword ld) {
  for (arma::uword j = 0; j < cols; ++j) {
    const double* c = p + j * ld;
    for (arma::uword i = 0; i < rows; ++i) {
      if (c[i] != 0.0) return false;
    }
  }
  return true;
}

// The explicit inverses of the diagonal blocks of at most `leaf` rows that solve_rec ends in
// (by substitution), computed once per solve and shared by all column panels. Leaves are found by
// the same halving as solve_rec's and stored by their first row.
struct LeafInverses {
  std::vector<double> buf;         // leaf inverses, n x n each, back to back
  std::vector<std::ptrdiff_t> at;  // at[first row] = offset into buf
};

// The largest leaf for a solve with m right-hand sides. Measured leaf sizes (100 x 100 factor):
// 32 is best for wide right-hand sides, 8-16 for a dozen columns.
int leaf_size(arma::uword m) {
  return m >= 64 ? kMaxLeaf : 16;
}

void invert_leaves(const double* T, int ldt, int n, int first, bool lower, int leaf,
                   LeafInverses& out) {
  if (n <= leaf) {
    const std::ptrdiff_t off = std::ptrdiff_t(out.buf.size());
    out.buf.resize(out.buf.size() + std::size_t(n) * std::size_t(n), 0.0);
    // T X = I by substitution, a row of X at a time: row k is scaled by 1 / T_kk, then its
    // multiples are taken off the rows still to come, one column of X at a time (unit stride in
    // T and X, no dependence between successive updates). At these sizes (n <= 32) this is far
    // faster than dtrtri, whose unblocked form makes one dtrmv call per column.
    double* X = out.buf.data() + off;
    double rdiag[kMaxLeaf];
    for (int k = 0; k < n; ++k) {
      rdiag[k] = 1.0 / T[k + std::ptrdiff_t(k) * ldt];
      X[k + std::ptrdiff_t(k) * n] = 1.0;
    }
    for (int step = 0; step < n; ++step) {
      const int k = lower ? step : n - 1 - step;
      const int j0 = lower ? 0 : k, j1 = lower ? k + 1 : n;  // row k's nonzero columns
      const int i0 = lower ? k + 1 : 0, i1 = lower ? n : k;  // rows still to come
      const double* Tk = T + std::ptrdiff_t(k) * ldt;
      for (int j = j0; j < j1; ++j) {
        double* Xj = X + std::ptrdiff_t(j) * n;
        const double xkj = Xj[k] * rdiag[k];
        Xj[k] = xkj;
        for (int i = i0; i < i1; ++i) Xj[i] -= Tk[i] * xkj;
      }
    }
    out.at[std::size_t(first)] = off;
    return;
  }
  const int h = n / 2;
  invert_leaves(T, ldt, h, first, lower, leaf, out);
  invert_leaves(T + h + std::ptrdiff_t(h) * ldt, ldt, n - h, first + h, lower, leaf, out);
}

// op(T) X = B (left) or X op(T) = B (right) for the n x n triangle at T (leading dimension ldt),
// overwriting B (leading dimension ldb; m is B's other dimension). The triangle is split in
// halves, one half is solved recursively, the other half's right-hand side is updated with one
// dgemm, and blocks of at most `leaf` rows are solved by multiplying with their explicit inverse
// (LeafInverses; dtrmm on the right-hand side). OpenBLAS 0.3.21's dtrsm runs at about 12 GFlop/s
// on these shapes against about 50 for its dgemm and dtrmm; this form is 2.5-3x faster
// (100 x 100 factor, 455 columns: 136 against 379 us; 13 columns: 9 against 14 us).
void solve_rec(const double* T, int ldt, int n, int first, double* B, int ldb, int m, bool lower,
               bool trans, bool left, int leaf, const LeafInverses& leaves) {
  if (n <= leaf) {
    const double* inv = leaves.buf.data() + leaves.at[std::size_t(first)];
    const int rows = left ? n : m, cols = left ? m : n;
    cblas_dtrmm(CblasColMajor, left ? CblasLeft : CblasRight, lower ? CblasLower : CblasUpper,
                trans ? CblasTrans : CblasNoTrans, CblasNonUnit, rows, cols, 1.0, inv, n, B, ldb);
    return;
  }
  const int h = n / 2, r = n - h;
  const double* T11 = T;
  const double* T22 = T + h + std::ptrdiff_t(h) * ldt;
  // The stored off-diagonal block (T21 when lower, T12 when upper); op(T)'s off-diagonal block
  // is op(Toff) in both cases.
  const double* Toff = lower ? T + h : T + std::ptrdiff_t(h) * ldt;
  const CBLAS_TRANSPOSE top = trans ? CblasTrans : CblasNoTrans;
  const bool eff_lower = lower != trans;  // op(T) is lower triangular
  auto rec = [&](const double* Tk, int nk, int fk, double* Bk) {
    solve_rec(Tk, ldt, nk, fk, Bk, ldb, m, lower, trans, left, leaf, leaves);
  };
  // The half solved first is skipped with its update of the other half when its right-hand side
  // is zero (then so is its solution, and the update subtracts zero; see all_zero).
  if (left) {
    double* B1 = B;
    double* B2 = B + h;
    if (eff_lower) {  // X1 = A11^{-1} B1;  B2 -= A21 X1;  X2 = A22^{-1} B2
      if (!all_zero(B1, arma::uword(h), arma::uword(m), arma::uword(ldb))) {
        rec(T11, h, first, B1);
        cblas_dgemm(CblasColMajor, top, CblasNoTrans, r, m, h, -1.0, Toff, ldt, B1, ldb, 1.0, B2,
                    ldb);
      }
      rec(T22, r, first + h, B2);
    } else {  // X2 = A22^{-1} B2;  B1 -= A12 X2;  X1 = A11^{-1} B1
      if (!all_zero(B2, arma::uword(r), arma::uword(m), arma::uword(ldb))) {
        rec(T22, r, first + h, B2);
        cblas_dgemm(CblasColMajor, top, CblasNoTrans, h, m, r, -1.0, Toff, ldt, B2, ldb, 1.0, B1,
                    ldb);
      }
      rec(T11, h, first, B1);
    }
  } else {
    double* B1 = B;
    double* B2 = B + std::ptrdiff_t(h) * ldb;
    if (eff_lower) {  // X2 = B2 A22^{-1};  B1 -= X2 A21;  X1 = B1 A11^{-1}
      if (!all_zero(B2, arma::uword(m), arma::uword(r), arma::uword(ldb))) {
        rec(T22, r, first + h, B2);
        cblas_dgemm(CblasColMajor, CblasNoTrans, top, m, h, r, -1.0, B2, ldb, Toff, ldt, 1.0, B1,
                    ldb);
      }
      rec(T11, h, first, B1);
    } else {  // X1 = B1 A11^{-1};  B2 -= X1 A12;  X2 = B2 A22^{-1}
      if (!all_zero(B1, arma::uword(m), arma::uword(h), arma::uword(ldb))) {
        rec(T11, h, first, B1);
        cblas_dgemm(CblasColMajor, CblasNoTrans, top, m, r, h, -1.0, B1, ldb, Toff, ldt, 1.0, B2,
                    ldb);
      }
      rec(T22, r, first + h, B2);
    }
  }
}

}  // namespace

struct TriLeaves {
  arma::uword n = 0;
  int leaf = 0;
  bool lower = true;
  LeafInverses inverses;
};

namespace {

TriLeaves compute_leaves(const arma::mat& T, bool lower, int leaf) {
  TriLeaves t;
  t.n = T.n_rows;
  t.leaf = leaf;
  t.lower = lower;
  t.inverses.at.assign(T.n_rows, -1);
  t.inverses.buf.reserve(std::size_t(T.n_rows) * std::size_t(leaf));
  invert_leaves(T.memptr(), int(T.n_rows), int(T.n_rows), 0, lower, leaf, t.inverses);
  return t;
}

// op(T) X = B or X op(T) = B into X, with B = src (same shape as X) copied in panel by panel
// when src is not null (each panel is copied just before it is solved, while it stays in
// cache), or B = X's own contents when src is null. `given`, when not null and made for this
// triangle and leaf size, supplies the leaf inverses (otherwise they are computed here).
void solve_into(const arma::mat& T, const double* src, arma::mat& B, Uplo uplo, bool trans,
                Side side, const PanelFn* fill = nullptr, const PanelFn* done = nullptr,
                const TriLeaves* given = nullptr) {
  if (T.n_rows != T.n_cols) {
    throw Error(fmt::format("linalg::tri_solve: triangular factor is {}x{}, not square", T.n_rows,
                            T.n_cols));
  }
  const arma::uword n = T.n_rows;
  const bool left = side == Side::Left;
  if ((left ? B.n_rows : B.n_cols) != n) {
    throw Error(fmt::format("linalg::tri_solve: {} side: {}x{} factor and {}x{} right-hand side",
                            left ? "left" : "right", n, n, B.n_rows, B.n_cols));
  }
  for (arma::uword i = 0; i < n; ++i) {
    const double d = T.at(i, i);
    if (d == 0.0 || !std::isfinite(d)) {
      throw Error(
          fmt::format("linalg::tri_solve: singular triangular factor ({}x{}, diagonal "
                      "entry {} is {})",
                      n, n, i, d));
    }
  }
  if (B.n_elem == 0) return;
  constexpr auto kMax = arma::uword(std::numeric_limits<int>::max());
  if (B.n_rows > kMax || B.n_cols > kMax) {
    throw Error("linalg::tri_solve: matrix too large for 32-bit BLAS");
  }
  const int m = int(left ? B.n_cols : B.n_rows);
  if (m < kMinBlockedRhs) {
    if (src != nullptr) std::copy(src, src + B.n_elem, B.memptr());
    if (fill != nullptr) (*fill)(0, arma::uword(m), B.memptr());
    // A handful of right-hand sides: dtrsm's substitution is faster (measured, n = 5-100: 0.1-4.7
    // us against 0.2-5.8 for the blocked form; the blocked form wins from about 8 on).
    cblas_dtrsm(CblasColMajor, left ? CblasLeft : CblasRight,
                uplo == Uplo::Lower ? CblasLower : CblasUpper, trans ? CblasTrans : CblasNoTrans,
                CblasNonUnit, int(B.n_rows), int(B.n_cols), 1.0, T.memptr(), int(n), B.memptr(),
                int(B.n_rows));
    if (done != nullptr) (*done)(0, arma::uword(m), B.memptr());
    return;
  }
  const int leaf = leaf_size(arma::uword(m));
  const bool lower = uplo == Uplo::Lower;
  const bool reuse =
      given != nullptr && given->n == n && given->leaf == leaf && given->lower == lower;
  TriLeaves own;
  if (!reuse) own = compute_leaves(T, lower, leaf);
  const LeafInverses& leaves = reuse ? given->inverses : own.inverses;
  // Many right-hand sides (a large batch: 7,373 on kin8nm) are solved in panels of kPanel, each
  // through the whole recursion while it is in cache: one pass over B instead of one per level,
  // and the dgemm updates pack panels from cache.
  const int ldb = int(B.n_rows);
  for (int c0 = 0; c0 < m; c0 += kPanel) {
    const int w = std::min(kPanel, m - c0);
    double* Bp = left ? B.memptr() + std::ptrdiff_t(c0) * ldb : B.memptr() + c0;
    if (src != nullptr) {
      if (left) {  // columns c0 .. c0 + w - 1: contiguous
        const double* from = src + std::ptrdiff_t(c0) * ldb;
        std::copy(from, from + std::size_t(w) * B.n_rows, Bp);
      } else {  // rows c0 .. c0 + w - 1 of every column
        for (arma::uword j = 0; j < B.n_cols; ++j) {
          const double* from = src + std::ptrdiff_t(j) * ldb + c0;
          std::copy(from, from + w, Bp + std::ptrdiff_t(j) * ldb);
        }
      }
    }
    if (fill != nullptr) (*fill)(arma::uword(c0), arma::uword(w), Bp);
    solve_rec(T.memptr(), int(n), int(n), 0, Bp, ldb, w, lower, trans, left, leaf, leaves);
    if (done != nullptr) (*done)(arma::uword(c0), arma::uword(w), Bp);
  }
}

}  // namespace

void tri_solve_inplace(const arma::mat& T, arma::mat& B, Uplo uplo, bool trans, Side side,
                       const TriLeaves* leaves) {
  solve_into(T, nullptr, B, uplo, trans, side, nullptr, nullptr, leaves);
}

std::shared_ptr<const TriLeaves> tri_leaves(const arma::mat& T, Uplo uplo, arma::uword m) {
  if (m < kMinBlockedRhs || T.n_rows != T.n_cols) return nullptr;
  return std::make_shared<const TriLeaves>(compute_leaves(T, uplo == Uplo::Lower, leaf_size(m)));
}

void tri_solve_panels(const arma::mat& T, arma::mat& X, Uplo uplo, bool trans, const PanelFn& fill,
                      const PanelFn& done, const TriLeaves* leaves) {
  solve_into(T, nullptr, X, uplo, trans, Side::Left, &fill, &done, leaves);
}

arma::mat tri_solve(const arma::mat& T, const arma::mat& B, Uplo uplo, bool trans, Side side,
                    const TriLeaves* leaves) {
  arma::mat X(B.n_rows, B.n_cols, arma::fill::none);
  solve_into(T, B.memptr(), X, uplo, trans, side, nullptr, nullptr, leaves);
  return X;
}

arma::mat tri_solve(const arma::mat& T, arma::mat&& B, Uplo uplo, bool trans, Side side) {
  arma::mat X = std::move(B);
  solve_into(T, nullptr, X, uplo, trans, side);
  return X;
}

void add_tri_product(arma::mat& C, Uplo uplo, const arma::mat& P, const arma::mat& Q, bool trans,
                     double alpha, bool diagonal_blocks_only) {
  const arma::uword n = trans ? P.n_cols : P.n_rows, k = trans ? P.n_rows : P.n_cols;
  if (Q.n_rows != P.n_rows || Q.n_cols != P.n_cols || C.n_rows != n || C.n_cols != n) {
    throw Error(fmt::format("linalg::add_tri_product: C {}x{}, P {}x{}, Q {}x{}", C.n_rows,
                            C.n_cols, P.n_rows, P.n_cols, Q.n_rows, Q.n_cols));
  }
  if (n == 0) return;
  if (k == 0) return;
  const int ni = int(n), ld = int(trans ? k : n);
  const CBLAS_TRANSPOSE ta = trans ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = trans ? CblasNoTrans : CblasTrans;
  constexpr arma::uword kBlock = 32;
  arma::mat D(kBlock, kBlock);
  // A long inner dimension (a large batch: 7,373 on kin8nm) in chunks of kChunk, so that each
  // chunk of P and Q is read from memory once and the dgemm calls of its blocks pack it from
  // cache (one pass over P and Q instead of one per block column).
  constexpr arma::uword kChunk = 512;
  for (arma::uword l0 = 0; l0 < k; l0 += kChunk) {
    const int kc = int(std::min(kChunk, k - l0));
    // Element (i, l0) of op(P), op(P) = P (n x k) or P^T: P + i + l0 n (no trans, leading
    // dimension n) or P + i k + l0 (trans, leading dimension k).
    auto at = [&](const arma::mat& M, arma::uword i0) {
      return M.memptr() + (trans ? i0 * k + l0 : i0 + l0 * n);
    };
    // Rows i0 .. i0 + r - 1 of op(M)'s chunk are zero (see all_zero: their products add zero).
    auto zero_rows = [&](const arma::mat& M, arma::uword i0, arma::uword r) {
      return trans ? all_zero(at(M, i0), arma::uword(kc), r, k)
                   : all_zero(at(M, i0), r, arma::uword(kc), n);
    };
    for (arma::uword j0 = 0; j0 < n; j0 += kBlock) {
      const arma::uword w = std::min(kBlock, n - j0), j1 = j0 + w;
      // A zero chunk of Q's block (a triangular Q: the chunks past the diagonal) adds nothing.
      if (zero_rows(Q, j0, w)) continue;
      // Off-diagonal part of block column j0..j1: rows j1..n (lower) or 0..j0 (upper).
      const arma::uword r0 = uplo == Uplo::Lower ? j1 : 0, r1 = uplo == Uplo::Lower ? n : j0;
      if (r1 > r0 && !diagonal_blocks_only && !zero_rows(P, r0, r1 - r0)) {
        cblas_dgemm(CblasColMajor, ta, tb, int(r1 - r0), int(w), kc, alpha, at(P, r0), ld,
                    at(Q, j0), ld, 1.0, C.colptr(j0) + r0, ni);
      }
      // Diagonal block, then its triangle.
      cblas_dgemm(CblasColMajor, ta, tb, int(w), int(w), kc, alpha, at(P, j0), ld, at(Q, j0), ld,
                  0.0, D.memptr(), int(kBlock));
      for (arma::uword j = 0; j < w; ++j) {
        const arma::uword i_begin = uplo == Uplo::Lower ? j : 0;
        const arma::uword i_end = uplo == Uplo::Lower ? w : j + 1;
        for (arma::uword i = i_begin; i < i_end; ++i) C(j0 + i, j0 + j) += D(i, j);
      }
    }
  }
}

arma::mat tri_inverse(const arma::mat& T, Uplo uplo) {
  if (T.n_rows != T.n_cols) {
    throw Error(fmt::format("linalg::tri_inverse: {}x{} matrix is not square", T.n_rows, T.n_cols));
  }
  arma::mat X = uplo == Uplo::Lower ? arma::mat(arma::trimatl(T)) : arma::mat(arma::trimatu(T));
  arma::blas_int n = arma::blas_int(X.n_rows);
  if (n == 0) return X;
  char u = uplo == Uplo::Lower ? 'L' : 'U', d = 'N';
  arma::blas_int info = 0;
  // LAPACK's dtrtri through Armadillo's own declaration (with the Fortran string lengths), which
  // every compiler sees: a second declaration of our own conflicts with it under clang.
  arma::lapack::trtri(&u, &d, &n, X.memptr(), &n, &info);
  if (info != 0) {
    throw Error(fmt::format("linalg::tri_inverse: {}x{} triangle is singular (dtrtri info {})", n,
                            n, info));
  }
  return X;
}

namespace {
// Column-block width of lower_t_times_lower and tril_times_lower_t: wide enough for dgemm's and
// dtrmm's full speed, narrow enough that the zero triangles skipped are most of the total.
constexpr arma::uword kTriTriBlock = 256;
}  // namespace

arma::mat lower_t_times_lower(const arma::mat& A, const arma::mat& B) {
  const arma::uword n = A.n_rows;
  if (A.n_cols != n || B.n_rows != n || B.n_cols != n) {
    throw Error(fmt::format("linalg::lower_t_times_lower: A {}x{}, B {}x{}", A.n_rows, A.n_cols,
                            B.n_rows, B.n_cols));
  }
  arma::mat M(n, n);
  // Block column J = j0 .. j0 + w - 1 of A^T B: B(k, J) is zero for k < j0, so
  //   M(0:j0, J)  = A(j0:n, 0:j0)^T B(j0:n, J)   (dense part of A: one dgemm),
  //   M(j0:n, J)  = A(j0:n, j0:n)^T B(j0:n, J)   (A's upper-triangular transpose: one dtrmm),
  // 2 j0 (n - j0) w + (n - j0)^2 w flops, 2 n^3 / 3 in all.
  for (arma::uword j0 = 0; j0 < n; j0 += kTriTriBlock) {
    const arma::uword w = std::min(kTriTriBlock, n - j0), r = n - j0;
    // M(j0:n, J) <- B(j0:n, J) with B's strict upper triangle read as zero.
    for (arma::uword j = j0; j < j0 + w; ++j) {
      double* m = M.colptr(j);
      const double* b = B.colptr(j);
      for (arma::uword i = j0; i < j; ++i) m[i] = 0.0;
      std::copy(b + j, b + n, m + j);
    }
    double* Mj = M.colptr(j0) + j0;
    if (j0 > 0) {
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, int(j0), int(w), int(r), 1.0,
                  A.memptr() + j0, int(n), Mj, int(n), 0.0, M.colptr(j0), int(n));
    }
    cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit, int(r), int(w), 1.0,
                A.colptr(j0) + j0, int(n), Mj, int(n));
  }
  return M;
}

arma::mat tril_times_lower_t(const arma::mat& S, const arma::mat& B) {
  const arma::uword n = S.n_rows;
  if (S.n_cols != n || B.n_rows != n || B.n_cols != n) {
    throw Error(fmt::format("linalg::tril_times_lower_t: S {}x{}, B {}x{}", S.n_rows, S.n_cols,
                            B.n_rows, B.n_cols));
  }
  const arma::mat Bl = arma::trimatl(B);
  arma::mat C(n, n);
  // (S B^T)(:, j) = S(:, 0:j+1) B(j, 0:j+1)^T, so block column J = j0 .. j1 - 1 of the lower
  // triangle is C(j0:n, J) = S(j0:n, 0:j1) B(J, 0:j1)^T: one dgemm of 2 (n - j0) j1 w flops,
  // n^3 / 3 in all. The strict upper triangle of each diagonal block is then zeroed.
  for (arma::uword j0 = 0; j0 < n; j0 += kTriTriBlock) {
    const arma::uword w = std::min(kTriTriBlock, n - j0), j1 = j0 + w;
    for (arma::uword j = j0; j < j1; ++j) std::fill(C.colptr(j), C.colptr(j) + j0, 0.0);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, int(n - j0), int(w), int(j1), 1.0,
                S.memptr() + j0, int(n), Bl.memptr() + j0, int(n), 0.0, C.colptr(j0) + j0, int(n));
    for (arma::uword j = j0 + 1; j < j1; ++j) std::fill(C.colptr(j) + j0, C.colptr(j) + j, 0.0);
  }
  return C;
}

}  // namespace dkp::linalg
