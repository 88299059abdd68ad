// libdkp_blas_count.so: counts the floating-point operations, calls and seconds of the BLAS and
// LAPACK routines dkp calls, for `dkp bench model --flops` (which loads it with LD_PRELOAD and
// reads the totals through platform/blas_count.hpp). Each routine here takes the place of the
// library's by symbol interposition, adds its nominal flop count to process-wide totals and
// forwards to the real routine (dlsym RTLD_NEXT). Only the outermost routine of a thread counts:
// a LAPACK routine that calls BLAS through the exported symbols is counted once, as itself.
// The totals are kept for all routines together and for each routine (symbol) apart.
//
// Nominal counts (multiply-add = 2 flops, the usual LAPACK working-note convention):
//   gemm 2mnk; trsm, trmm m^2 n (left) or m n^2 (right); syrk n^2 k; syr2k 2 n^2 k;
//   symm 2 m^2 n (left) or 2 m n^2 (right); gemv, ger 2mn; symv 2n^2; trsv, trmv n^2;
//   potrf n^3 / 3; potri 2 n^3 / 3; trtri n^3 / 3; potrs 2 n^2 r; trtrs n^2 r; sygst n^3;
//   getrf 2 n^3 / 3 (square); getri 4 n^3 / 3; getrs 2 n^2 r.
// Routines not listed (eigen and singular value decompositions: initialisation only) are not
// counted.
#include <cblas.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

// The routines counted, in the order of their definitions below; each has its own totals. One
// list makes both the enumerators (k_<symbol>) and the names.
// clang-format off
#define DKP_BLAS_ROUTINES(X)                                                                    \
  X(cblas_dgemm) X(cblas_dtrsm) X(cblas_dtrmm) X(cblas_dsyrk) X(cblas_dsyr2k) X(cblas_dsymm)   \
  X(cblas_dgemv) X(dgemm_) X(dgemv_) X(dsyrk_) X(dtrsm_) X(dtrmm_) X(dpotrf_) X(dpotri_)        \
  X(dtrtri_) X(dpotrs_) X(dtrtrs_) X(dgetrf_) X(dgetri_) X(dgetrs_) X(dsygst_)
// clang-format on
#define DKP_ENUMERATOR(name) k_##name,
#define DKP_NAME(name) #name,
enum Routine : int { DKP_BLAS_ROUTINES(DKP_ENUMERATOR) kRoutines };
constexpr const char* kNames[] = {DKP_BLAS_ROUTINES(DKP_NAME)};
#undef DKP_ENUMERATOR
#undef DKP_NAME

struct Totals {
  std::atomic<std::uint64_t> calls{0}, flops{0}, nanoseconds{0};
};
Totals g_total, g_routine[kRoutines];
thread_local int t_depth = 0;

// The next definition of `name` after this library's (the BLAS or LAPACK one).
template <class F>
F next(F& cache, const char* name) {
  if (cache == nullptr) {
    cache = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
    if (cache == nullptr) {
      std::fprintf(stderr, "libdkp_blas_count: no '%s' to forward to\n", name);
      std::abort();
    }
  }
  return cache;
}

// Runs `call`, counting it (with `flops`) unless another counted routine of this thread is
// already running.
template <class Call>
void counted(Routine routine, double flops, Call&& call) {
  if (t_depth > 0) {
    call();
    return;
  }
  ++t_depth;
  const auto t0 = std::chrono::steady_clock::now();
  call();
  const auto t1 = std::chrono::steady_clock::now();
  --t_depth;
  const auto flop = std::uint64_t(flops + 0.5);
  const auto ns =
      std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  for (Totals* t : {&g_total, &g_routine[routine]}) {
    t->calls.fetch_add(1, std::memory_order_relaxed);
    t->flops.fetch_add(flop, std::memory_order_relaxed);
    t->nanoseconds.fetch_add(ns, std::memory_order_relaxed);
  }
}

void read(const Totals& t, std::uint64_t* calls, std::uint64_t* flops, std::uint64_t* ns) {
  *calls = t.calls.load(std::memory_order_relaxed);
  *flops = t.flops.load(std::memory_order_relaxed);
  *ns = t.nanoseconds.load(std::memory_order_relaxed);
}

double d(int n) {
  return double(n);
}
double d(const int* n) {
  return double(*n);
}
bool left(CBLAS_SIDE s) {
  return s == CblasLeft;
}
bool left(const char* s) {
  return *s == 'L' || *s == 'l';
}

// Counts `flops` for `routine` and calls its next definition with `args`.
template <class F, class... Args>
void forward(F& cache, Routine routine, double flops, Args... args) {
  counted(routine, flops, [&] { next(cache, kNames[routine])(args...); });
}

// Nominal flops of a triangular product or solve with an m x n right-hand side.
template <class Side, class Int>
double tri_flops(Side side, Int m, Int n) {
  return left(side) ? d(m) * d(m) * d(n) : d(m) * d(n) * d(n);
}

}  // namespace

extern "C" {

/// Totals since the process started (all threads).
void dkp_blas_count_read(std::uint64_t* calls, std::uint64_t* flops, std::uint64_t* nanoseconds) {
  read(g_total, calls, flops, nanoseconds);
}

/// The totals of routine i (0 <= i < kRoutines) and its name, or nullptr past the last routine.
const char* dkp_blas_count_routine(int i, std::uint64_t* calls, std::uint64_t* flops,
                                   std::uint64_t* nanoseconds) {
  if (i < 0 || i >= kRoutines) return nullptr;
  read(g_routine[i], calls, flops, nanoseconds);
  return kNames[i];
}

// ---- CBLAS ----
void cblas_dgemm(CBLAS_ORDER o, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n,
                 blasint k, double al, const double* a, blasint la, const double* b, blasint lb,
                 double be, double* c, blasint lc) {
  static decltype(&cblas_dgemm) f = nullptr;
  forward(f, k_cblas_dgemm, 2 * d(m) * d(n) * d(k), o, ta, tb, m, n, k, al, a, la, b, lb, be, c,
          lc);
}
void cblas_dtrsm(CBLAS_ORDER o, CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG dg,
                 blasint m, blasint n, double al, const double* a, blasint la, double* b,
                 blasint lb) {
  static decltype(&cblas_dtrsm) f = nullptr;
  forward(f, k_cblas_dtrsm, tri_flops(s, m, n), o, s, u, t, dg, m, n, al, a, la, b, lb);
}
void cblas_dtrmm(CBLAS_ORDER o, CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG dg,
                 blasint m, blasint n, double al, const double* a, blasint la, double* b,
                 blasint lb) {
  static decltype(&cblas_dtrmm) f = nullptr;
  forward(f, k_cblas_dtrmm, tri_flops(s, m, n), o, s, u, t, dg, m, n, al, a, la, b, lb);
}
void cblas_dsyrk(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, blasint n, blasint k, double al,
                 const double* a, blasint la, double be, double* c, blasint lc) {
  static decltype(&cblas_dsyrk) f = nullptr;
  forward(f, k_cblas_dsyrk, d(n) * d(n) * d(k), o, u, t, n, k, al, a, la, be, c, lc);
}
void cblas_dsyr2k(CBLAS_ORDER o, CBLAS_UPLO u, CBLAS_TRANSPOSE t, blasint n, blasint k, double al,
                  const double* a, blasint la, const double* b, blasint lb, double be, double* c,
                  blasint lc) {
  static decltype(&cblas_dsyr2k) f = nullptr;
  forward(f, k_cblas_dsyr2k, 2 * d(n) * d(n) * d(k), o, u, t, n, k, al, a, la, b, lb, be, c, lc);
}
void cblas_dsymm(CBLAS_ORDER o, CBLAS_SIDE s, CBLAS_UPLO u, blasint m, blasint n, double al,
                 const double* a, blasint la, const double* b, blasint lb, double be, double* c,
                 blasint lc) {
  static decltype(&cblas_dsymm) f = nullptr;
  forward(f, k_cblas_dsymm, left(s) ? 2 * d(m) * d(m) * d(n) : 2 * d(m) * d(n) * d(n), o, s, u, m,
          n, al, a, la, b, lb, be, c, lc);
}
void cblas_dgemv(CBLAS_ORDER o, CBLAS_TRANSPOSE t, blasint m, blasint n, double al, const double* a,
                 blasint la, const double* x, blasint ix, double be, double* y, blasint iy) {
  static decltype(&cblas_dgemv) f = nullptr;
  forward(f, k_cblas_dgemv, 2 * d(m) * d(n), o, t, m, n, al, a, la, x, ix, be, y, iy);
}

// ---- Fortran BLAS (Armadillo's calls) ----
using fint = int;
void dgemm_(const char* ta, const char* tb, const fint* m, const fint* n, const fint* k,
            const double* al, const double* a, const fint* la, const double* b, const fint* lb,
            const double* be, double* c, const fint* lc) {
  static decltype(&dgemm_) f = nullptr;
  forward(f, k_dgemm_, 2 * d(m) * d(n) * d(k), ta, tb, m, n, k, al, a, la, b, lb, be, c, lc);
}
void dgemv_(const char* t, const fint* m, const fint* n, const double* al, const double* a,
            const fint* la, const double* x, const fint* ix, const double* be, double* y,
            const fint* iy) {
  static decltype(&dgemv_) f = nullptr;
  forward(f, k_dgemv_, 2 * d(m) * d(n), t, m, n, al, a, la, x, ix, be, y, iy);
}
void dsyrk_(const char* u, const char* t, const fint* n, const fint* k, const double* al,
            const double* a, const fint* la, const double* be, double* c, const fint* lc) {
  static decltype(&dsyrk_) f = nullptr;
  forward(f, k_dsyrk_, d(n) * d(n) * d(k), u, t, n, k, al, a, la, be, c, lc);
}
void dtrsm_(const char* s, const char* u, const char* t, const char* dg, const fint* m,
            const fint* n, const double* al, const double* a, const fint* la, double* b,
            const fint* lb) {
  static decltype(&dtrsm_) f = nullptr;
  forward(f, k_dtrsm_, tri_flops(s, m, n), s, u, t, dg, m, n, al, a, la, b, lb);
}
void dtrmm_(const char* s, const char* u, const char* t, const char* dg, const fint* m,
            const fint* n, const double* al, const double* a, const fint* la, double* b,
            const fint* lb) {
  static decltype(&dtrmm_) f = nullptr;
  forward(f, k_dtrmm_, tri_flops(s, m, n), s, u, t, dg, m, n, al, a, la, b, lb);
}

// ---- LAPACK ----
void dpotrf_(const char* u, const fint* n, double* a, const fint* la, fint* info) {
  static decltype(&dpotrf_) f = nullptr;
  forward(f, k_dpotrf_, d(n) * d(n) * d(n) / 3, u, n, a, la, info);
}
void dpotri_(const char* u, const fint* n, double* a, const fint* la, fint* info) {
  static decltype(&dpotri_) f = nullptr;
  forward(f, k_dpotri_, 2 * d(n) * d(n) * d(n) / 3, u, n, a, la, info);
}
void dtrtri_(const char* u, const char* dg, const fint* n, double* a, const fint* la, fint* info) {
  static decltype(&dtrtri_) f = nullptr;
  forward(f, k_dtrtri_, d(n) * d(n) * d(n) / 3, u, dg, n, a, la, info);
}
void dpotrs_(const char* u, const fint* n, const fint* r, const double* a, const fint* la,
             double* b, const fint* lb, fint* info) {
  static decltype(&dpotrs_) f = nullptr;
  forward(f, k_dpotrs_, 2 * d(n) * d(n) * d(r), u, n, r, a, la, b, lb, info);
}
void dtrtrs_(const char* u, const char* t, const char* dg, const fint* n, const fint* r,
             const double* a, const fint* la, double* b, const fint* lb, fint* info) {
  static decltype(&dtrtrs_) f = nullptr;
  forward(f, k_dtrtrs_, d(n) * d(n) * d(r), u, t, dg, n, r, a, la, b, lb, info);
}
void dgetrf_(const fint* m, const fint* n, double* a, const fint* la, fint* ipiv, fint* info) {
  static decltype(&dgetrf_) f = nullptr;
  forward(f, k_dgetrf_, 2 * d(n) * d(n) * d(n) / 3, m, n, a, la, ipiv, info);
}
void dgetri_(const fint* n, double* a, const fint* la, const fint* ipiv, double* w, const fint* lw,
             fint* info) {
  static decltype(&dgetri_) f = nullptr;
  // A workspace query (lwork = -1) computes nothing.
  forward(f, k_dgetri_, *lw == -1 ? 0.0 : 4 * d(n) * d(n) * d(n) / 3, n, a, la, ipiv, w, lw, info);
}
void dgetrs_(const char* t, const fint* n, const fint* r, const double* a, const fint* la,
             const fint* ipiv, double* b, const fint* lb, fint* info) {
  static decltype(&dgetrs_) f = nullptr;
  forward(f, k_dgetrs_, 2 * d(n) * d(n) * d(r), t, n, r, a, la, ipiv, b, lb, info);
}
void dsygst_(const fint* it, const char* u, const fint* n, double* a, const fint* la,
             const double* b, const fint* lb, fint* info) {
  static decltype(&dsygst_) f = nullptr;
  forward(f, k_dsygst_, d(n) * d(n) * d(n), it, u, n, a, la, b, lb, info);
}

}  // extern "C"
