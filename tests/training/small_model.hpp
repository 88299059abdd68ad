// The training suites' small model: a depth-2 global-inducing DGP with 6 inducing points on 30
// noisy points of sin(2 x_1) in 2-d, data and initial values from the given seeds.
#pragma once

#include <cstdint>
#include <memory>

#include "models/gi_dgp.hpp"
#include "random/stream.hpp"

namespace dkp::test {

struct SmallGiDgp {
  arma::mat X;
  arma::vec y;
  std::unique_ptr<models::GiDgp> model;
  SmallGiDgp(uint64_t data_seed, uint64_t init_seed) {
    random::Stream s(data_seed);
    X = random::normal_matrix(s, 30, 2);
    y = arma::sin(2.0 * X.col(0)) + 0.1 * random::normal_matrix(s, 30, 1);
    models::GiDgpConfig cfg;
    cfg.depth = 2;
    cfg.inducing = 6;
    random::Stream init(init_seed);
    model = std::make_unique<models::GiDgp>(cfg, X, y, init);
  }
};

}  // namespace dkp::test
