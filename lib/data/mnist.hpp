// MNIST in the original IDX format, gzip-compressed (<root>/mnist/*-idx?-ubyte.gz).
#pragma once

#include <armadillo>
#include <filesystem>

namespace dkp::data {

struct ImageSet {
  arma::mat X;        ///< images x pixels, scaled to [0, 1]
  arma::uvec labels;  ///< class labels
  size_t rows = 0, cols = 0;
};

/// Reads a gzip IDX3 image file and its IDX1 label file; checks magic numbers and counts.
ImageSet read_idx_pair(const std::filesystem::path& images, const std::filesystem::path& labels);

struct Mnist {
  ImageSet train;  ///< 60000 images
  ImageSet test;   ///< 10000 images
};

/// Loads the four MNIST files from <root>/mnist.
Mnist load_mnist(const std::filesystem::path& root);

}  // namespace dkp::data
