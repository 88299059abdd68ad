#include "models/kmeans.hpp"

#include <cstring>
#include <string>
#include <unordered_set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "util/error.hpp"

namespace dkp::models {

namespace {

// Bytes of a row (with -0 folded onto +0) as a hashable key.
std::string row_key(const arma::mat& X, arma::uword i) {
  std::string key(X.n_cols * sizeof(double), '\0');
  for (arma::uword j = 0; j < X.n_cols; ++j) {
    const double v = X.at(i, j) + 0.0;
    std::memcpy(key.data() + j * sizeof(double), &v, sizeof(double));
  }
  return key;
}

constexpr arma::uword kChunk = 4096;

// Nearest centre of every row, in chunks of rows: ||x||^2 - 2 x c^T + ||c||^2.
arma::uvec assign(const arma::mat& X, const arma::mat& C) {
  arma::uvec a(X.n_rows);
  const arma::rowvec c2 = arma::sum(arma::square(C), 1).t();
  for (arma::uword s = 0; s < X.n_rows; s += kChunk) {
    const arma::uword e = std::min<arma::uword>(X.n_rows, s + kChunk) - 1;
    arma::mat D = -2.0 * X.rows(s, e) * C.t();
    D.each_row() += c2;  // ||x||^2 is the same for every centre
    for (arma::uword i = 0; i < D.n_rows; ++i) a[s + i] = D.row(i).index_min();
  }
  return a;
}

}  // namespace

size_t count_distinct_rows(const arma::mat& X) {
  std::unordered_set<std::string> seen;
  for (arma::uword i = 0; i < X.n_rows; ++i) seen.insert(row_key(X, i));
  return seen.size();
}

KMeansResult kmeans(const arma::mat& X, size_t k, random::Stream& rng, size_t iterations) {
  if (k == 0) throw Error("kmeans: k = 0 centres requested");
  if (X.n_rows == 0 || X.n_cols == 0) {
    throw Error(fmt::format("kmeans: empty data ({}x{})", X.n_rows, X.n_cols));
  }
  if (!X.is_finite()) throw Error("kmeans: the data have NaN or infinite entries");

  // 'points' initialisation: distinct rows in random order.
  const arma::uvec perm = random::permutation(rng, X.n_rows);
  std::unordered_set<std::string> seen;
  std::vector<arma::uword> picked;
  picked.reserve(k);
  for (arma::uword i = 0; i < perm.n_elem && picked.size() < k; ++i) {
    if (seen.insert(row_key(X, perm[i])).second) picked.push_back(perm[i]);
  }
  KMeansResult r;
  r.centres = X.rows(arma::uvec(picked));
  if (picked.size() < k) {
    // Every distinct row is a centre: nothing left to cluster.
    r.assignment = assign(X, r.centres);
    return r;
  }

  r.assignment = assign(X, r.centres);
  for (size_t it = 0; it < iterations; ++it) {
    arma::mat sums(r.centres.n_rows, X.n_cols, arma::fill::zeros);
    arma::uvec counts(r.centres.n_rows, arma::fill::zeros);
    for (arma::uword i = 0; i < X.n_rows; ++i) {
      sums.row(r.assignment[i]) += X.row(i);
      ++counts[r.assignment[i]];
    }
    for (arma::uword c = 0; c < r.centres.n_rows; ++c) {
      if (counts[c] > 0) r.centres.row(c) = sums.row(c) / double(counts[c]);
    }
    ++r.iterations;
    arma::uvec next = assign(X, r.centres);
    const bool fixed = arma::all(next == r.assignment);
    r.assignment = std::move(next);
    if (fixed) break;
  }
  return r;
}

arma::mat kmeans_inducing(const arma::mat& X, size_t M, random::Stream& rng, size_t iterations,
                          const char* model) {
  if (M == 0) throw ConfigError(fmt::format("{}: 0 inducing points requested", model));
  if (X.n_rows == 0 || X.n_cols == 0) {
    throw ConfigError(fmt::format("{}: empty training inputs", model));
  }
  KMeansResult km = kmeans(X, M, rng, iterations);
  if (km.centres.n_rows < M) {
    spdlog::warn(
        "{}: {} inducing points requested but the training inputs have only {} distinct rows; "
        "using those rows as inducing inputs (M = {})",
        model, M, km.centres.n_rows, km.centres.n_rows);
  }
  return std::move(km.centres);
}

}  // namespace dkp::models
