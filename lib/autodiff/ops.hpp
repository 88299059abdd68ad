// Differentiable operations on Vars. Each op computes its value with Armadillo/BLAS and records
// one backward closure. Shapes are checked; a mismatch throws dkp::Error naming the op.
// Binary elementwise ops broadcast a 1x1 operand against a matrix.
#pragma once

#include "autodiff/tape.hpp"

namespace dkp::autodiff {

// ---- arithmetic -------------------------------------------------------------------------------
Var add(const Var& a, const Var& b);
Var sub(const Var& a, const Var& b);
Var neg(const Var& a);
Var scale(const Var& a, double c);       ///< c * a
Var add_scalar(const Var& a, double c);  ///< a + c (elementwise)
Var mul(const Var& a, const Var& b);     ///< elementwise (Hadamard) product
Var div(const Var& a, const Var& b);     ///< elementwise quotient

inline Var operator+(const Var& a, const Var& b) {
  return add(a, b);
}
inline Var operator-(const Var& a, const Var& b) {
  return sub(a, b);
}
inline Var operator-(const Var& a) {
  return neg(a);
}
inline Var operator*(double c, const Var& a) {
  return scale(a, c);
}
inline Var operator*(const Var& a, double c) {
  return scale(a, c);
}
inline Var operator+(const Var& a, double c) {
  return add_scalar(a, c);
}
inline Var operator-(const Var& a, double c) {
  return add_scalar(a, -c);
}

// ---- products ---------------------------------------------------------------------------------
/// op(A) * op(B) where op transposes when the flag is set.
Var matmul(const Var& a, const Var& b, bool trans_a = false, bool trans_b = false);
Var transpose(const Var& a);

// ---- reductions -------------------------------------------------------------------------------
Var sum(const Var& a);    ///< 1x1 sum of all elements
Var mean(const Var& a);   ///< 1x1 mean of all elements
Var trace(const Var& a);  ///< 1x1 trace of a square matrix

// ---- elementwise functions ----------------------------------------------------------------------
Var exp(const Var& a);
Var log(const Var& a);
Var square(const Var& a);
Var sqrt(const Var& a);

}  // namespace dkp::autodiff
