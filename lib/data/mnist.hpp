// The image classification datasets: MNIST in the original IDX format, gzip-compressed
// (<root>/mnist/*-idx?-ubyte.gz), Rectangle-Images (Larochelle et al. 2007; the DSVI report's
// binary task) in its .amat text format (<root>/rectangles/rectangles_im_{train,test}.amat, one
// image per line: 784 pixel values in [0, 1], then the label 0 or 1; not in the shared data:
// data-scripts/fetch_rectangles.sh installs it), and CIFAR-10 in its binary format
// (data/cifar10.hpp; not in the shared data: data-scripts/fetch_cifar10.sh installs it).
#pragma once

#include <armadillo>
#include <filesystem>
#include <string>

#include "data/standardise.hpp"

namespace dkp::data {

struct ImageSet {
  arma::mat X;        ///< images x pixels, scaled to [0, 1]
  arma::uvec labels;  ///< class labels
  size_t rows = 0, cols = 0;
  size_t channels = 1;  ///< colour planes, each rows x cols features in turn (CIFAR-10: R, G, B)
};

/// Reads a gzip IDX3 image file and its IDX1 label file; checks magic numbers and counts.
ImageSet read_idx_pair(const std::filesystem::path& images, const std::filesystem::path& labels);

struct Mnist {
  ImageSet train;  ///< 60000 images
  ImageSet test;   ///< 10000 images
};

/// Loads the four MNIST files from <root>/mnist.
Mnist load_mnist(const std::filesystem::path& root);

/// The four files' SHA-256 combined (a run manifest's data_sha256).
std::string mnist_sha256(const std::filesystem::path& root);

/// Reads one .amat file of 28 x 28 images: every line 784 pixels in [0, 1] and a label in
/// 0 .. classes - 1; throws DataError naming the file and line otherwise.
ImageSet read_amat_images(const std::filesystem::path& path, size_t classes);

/// Loads Rectangle-Images from <root>/rectangles (12000 training and 50000 test images in the
/// original; any counts are accepted).
Mnist load_rectangles(const std::filesystem::path& root);

/// The image dataset `name` ("mnist", "rectangles" or "cifar10") from the data root, and its
/// files' SHA-256 combined; throws ConfigError for another name.
Mnist load_images(const std::filesystem::path& root, const std::string& name);
std::string images_sha256(const std::filesystem::path& root, const std::string& name);

/// An image dataset as a run's train/test split (dataset "mnist"; the caller renames it): for
/// MNIST the 60000 training and 10000 test images with pixels in [0, 1] (x_stats the identity),
/// as the DSVI reference code feeds them, or with `standard` minus the mean of all training
/// pixels over their standard deviation (N - 1; 0.1307 and 0.3081 on MNIST, PyTorch's usual
/// normalisation; x_stats holds them for every pixel); the labels as y (y_mean 0, y_std 1). An
/// image set of several channels (CIFAR-10) is standardised per channel, each plane with the mean
/// and standard deviation of that channel's training pixels (PyTorch's usual CIFAR-10
/// normalisation; one channel is the MNIST case). The pixels are then multiplied by `scale` (`dkp
/// run --pixel-scale`), which x_stats includes (its std divided by it); a scale that is not
/// positive and finite is a ConfigError. `m` is taken by value: a temporary's pixels are moved,
/// not copied (CIFAR-10's are 1.5 GB).
RegressionSplit image_split(Mnist m, bool standard = false, double scale = 1.0);

/// True when `dataset` is optional data (not in the shared data: Rectangle-Images and CIFAR-10,
/// which data-scripts/fetch_<dataset>.sh installs) and its folder is absent from `root`. A required
/// dataset is never "optional and missing": its absence is an error where it is loaded.
bool optional_dataset_missing(const std::filesystem::path& root, const std::string& dataset);
/// What dkp says of such a dataset: "not installed (optional: data-scripts/fetch_<dataset>.sh)".
std::string not_installed_note(const std::string& dataset);

/// Number of classes of a dataset name: 10 for "mnist" and "cifar10", 2 for "rectangles", 0
/// (regression) for anything else.
size_t dataset_classes(const std::string& dataset);

/// The image (classification) datasets' names, "mnist, cifar10, rectangles", as error messages
/// list them.
std::string image_dataset_names();

}  // namespace dkp::data
