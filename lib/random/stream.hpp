// Seeded random streams (DESIGN.md section 4, "Randomness is explicit").
//
// A run has one master seed. Every consumer of randomness (data order, initialisation, Monte Carlo
// noise, ...) gets its own `Stream`, derived from the master seed by a purpose string and an index:
//
//     random::Stream run(master_seed);
//     auto init  = run.child("init", 0);
//     auto noise = run.child("mc-noise", step);
//
// A stream wraps boost::random::mt19937_64, and every sampler here uses Boost.Random distributions
// (never std:: distributions, whose algorithms are implementation-defined), so the numbers are
// identical across platforms, compilers and standard libraries. There is no global state: library
// functions take the stream by reference.
#pragma once

#include <armadillo>
#include <boost/random/mersenne_twister.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace dkp::random {

/// 64-bit finaliser of SplitMix64 (Steele, Lea & Flood 2014): a bijective mix with full
/// avalanche, used to turn structured inputs (seed, purpose, index) into well-spread seeds.
uint64_t splitmix64_mix(uint64_t z);

/// FNV-1a 64-bit hash of a string, finalised with splitmix64_mix. Stable across platforms.
uint64_t hash_string(std::string_view s);

/// Seed of the child stream (seed, purpose, index). Distinct purposes or indices give unrelated
/// seeds; the function is pure, so the same triple always gives the same seed.
uint64_t derive_seed(uint64_t seed, std::string_view purpose, uint64_t index);

/// A seeded stream of random numbers over boost::random::mt19937_64.
///
/// The stream remembers the seed it was created from; `child()` derives from that seed (not from
/// the current engine position), so children are the same however many numbers were drawn from the
/// parent. The engine state (position) can be saved to and restored from a string for checkpoints.
class Stream {
 public:
  using Engine = boost::random::mt19937_64;

  /// A stream seeded with `seed` (the engine is seeded with derive_seed(seed, "stream", 0), so that
  /// small consecutive seeds 0, 1, 2 still give unrelated engines).
  explicit Stream(uint64_t seed);

  /// The independent child stream for (purpose, index); see derive_seed. Children can have
  /// children: run.child("split", 3).child("init", 0).
  Stream child(std::string_view purpose, uint64_t index = 0) const;

  /// The seed this stream was created with.
  uint64_t seed() const { return seed_; }

  /// The underlying engine, for use with Boost.Random distributions.
  Engine& engine() { return engine_; }

  /// The next raw 64-bit output of the engine.
  uint64_t next_u64() { return engine_(); }

  /// Serialises seed and engine position to a text string (exact; for checkpoints).
  std::string state() const;

  /// Restores a stream saved by state(). Throws dkp::DataError on a malformed string.
  static Stream from_state(const std::string& text);

  /// Equality of seed and engine position.
  friend bool operator==(const Stream& a, const Stream& b) {
    return a.seed_ == b.seed_ && a.engine_ == b.engine_;
  }

 private:
  uint64_t seed_;
  Engine engine_;
};

/// A uniform draw in [0, 1) (boost::random::uniform_01).
double uniform(Stream& s);

/// A uniform draw in [lo, hi). Requires lo < hi (dkp::Error otherwise).
double uniform(Stream& s, double lo, double hi);

/// A standard normal draw (boost::random::normal_distribution, ziggurat).
double normal(Stream& s);

/// A rows x cols matrix of independent standard normals, filled in column-major order.
arma::mat normal_matrix(Stream& s, arma::uword rows, arma::uword cols);

/// A rows x cols matrix of independent uniforms on [0, 1), filled in column-major order.
arma::mat uniform_matrix(Stream& s, arma::uword rows, arma::uword cols);

/// A uniformly random permutation of 0 .. n-1 (Fisher-Yates with
/// boost::random::uniform_int_distribution).
arma::uvec permutation(Stream& s, arma::uword n);

/// A draw from the standard Gamma(shape, 1) distribution, shape > 0 (dkp::Error otherwise).
///
/// Marsaglia & Tsang (2000) squeeze-rejection for shape >= 1. For shape < 1, as in torch 1.13
/// (notes/reference-implementations.md section 8), a Gamma(shape + 1) draw is boosted by
/// U^(1/shape) with U uniform on (0, 1]; the boost is applied in log space so that tiny shapes do
/// not underflow prematurely. The result is clamped below at the smallest normal double
/// (std::numeric_limits<double>::min(), about 2.2e-308), as torch clamps to its float type's tiny:
/// for shape 0.01 about 0.1% of the mass lies below 1e-300. Use standard_gamma_log when log x is
/// what is needed.
double standard_gamma(Stream& s, double shape);

/// log of a standard Gamma(shape, 1) draw, computed without underflow for tiny shapes. Consumes the
/// same random numbers as standard_gamma, so exp(standard_gamma_log) equals standard_gamma from the
/// same stream position (up to the clamp).
double standard_gamma_log(Stream& s, double shape);

/// A draw from Gamma(shape, rate) (density proportional to x^(shape-1) exp(-rate x)):
/// standard_gamma(shape) / rate. Requires shape > 0 and rate > 0.
double gamma(Stream& s, double shape, double rate);

/// Elementwise Gamma(shape(i), rate(i)) draws in column-major order; shapes and rates must have the
/// same size.
arma::mat gamma_matrix(Stream& s, const arma::mat& shape, const arma::mat& rate);

}  // namespace dkp::random
