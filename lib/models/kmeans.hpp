// k-means initialisation of inducing inputs (report section 4: "pseudo-point locations were
// initialised using the k-means clustering algorithm"; notes/reference-implementations.md section
// 5b: the reference code calls scipy's kmeans2(X, M, minit='points')).
//
// What scipy's kmeans2(X, k, iter=10, minit='points') does, and what this does:
//   - initial centres: k data points drawn at random without replacement (here: in the order of a
//     random permutation from the given stream, skipping rows equal to a row already chosen, so
//     the centres are distinct even when the data have duplicate rows);
//   - `iterations` Lloyd steps (scipy: exactly iter = 10, no convergence test; here the loop also
//     stops early at a fixed point, which gives the same result);
//   - a centre whose cluster becomes empty keeps its previous position (scipy's missing='warn').
// When k is at least the number of distinct rows there is nothing to cluster: the distinct rows
// are returned (fewer than k; the caller decides what to do, e.g. SGP with M = 500 on boston).
#pragma once

#include <armadillo>

#include "random/stream.hpp"

namespace dkp::models {

struct KMeansResult {
  arma::mat centres;      ///< k' x D, k' = min(k, number of distinct rows)
  arma::uvec assignment;  ///< cluster of every row of X
  size_t iterations = 0;  ///< Lloyd steps run
};

/// k-means with 'points' initialisation (see above). Distances are computed in chunks of rows so
/// that memory stays O(chunk k) for large N.
/// @throws dkp::Error for k = 0, an empty X or non-finite entries
KMeansResult kmeans(const arma::mat& X, size_t k, random::Stream& rng, size_t iterations = 10);

/// Initial inducing inputs for `model` (its name in messages): the k-means centres of X with k = M;
/// when X has fewer than M distinct rows, those rows (with a warning naming the reduced M).
/// @throws dkp::ConfigError for M = 0 or an empty X
arma::mat kmeans_inducing(const arma::mat& X, size_t M, random::Stream& rng, size_t iterations,
                          const char* model);

/// Number of distinct rows of X (exact comparison).
size_t count_distinct_rows(const arma::mat& X);

}  // namespace dkp::models
