#include "linalg/columns.hpp"

namespace dkp::linalg {

void col_sumsq(const double* a, arma::uword rows, arma::uword cols, double* out) {
  arma::uword j = 0;
  for (; j + 4 <= cols; j += 4) {
    const double* a0 = a + j * rows;
    const double* a1 = a0 + rows;
    const double* a2 = a1 + rows;
    const double* a3 = a2 + rows;
    double q0 = 0.0, q1 = 0.0, q2 = 0.0, q3 = 0.0;
    for (arma::uword i = 0; i < rows; ++i) {
      q0 += a0[i] * a0[i];
      q1 += a1[i] * a1[i];
      q2 += a2[i] * a2[i];
      q3 += a3[i] * a3[i];
    }
    out[j] = q0;
    out[j + 1] = q1;
    out[j + 2] = q2;
    out[j + 3] = q3;
  }
  for (; j < cols; ++j) {
    const double* c = a + j * rows;
    double q = 0.0;
    for (arma::uword i = 0; i < rows; ++i) q += c[i] * c[i];
    out[j] = q;
  }
}

}  // namespace dkp::linalg
