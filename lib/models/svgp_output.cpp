#include "models/svgp_output.hpp"

#include <utility>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "layers/svgp.hpp"
#include "likelihoods/probit.hpp"
#include "likelihoods/robustmax.hpp"

namespace dkp::models {

namespace {
constexpr const char* kNoise = "likelihood.variance";
}  // namespace

void SvgpOutput::add_parameters(ParamMap& params, double noise_variance) const {
  if (classes_ > 0) return;
  params[kNoise] = arma::mat(1, 1, arma::fill::value(layers::positive_inverse(noise_variance)));
}

std::string SvgpOutput::words() const {
  if (classes_ == 0) return "Gaussian likelihood";
  if (kind() == likelihoods::ClassLikelihood::Probit) return "Bernoulli-probit likelihood";
  return fmt::format("robust-max likelihood over {} classes", classes_);
}

autodiff::Var SvgpOutput::expected_loglik(const VarMap& params, const autodiff::Var& mean,
                                          const autodiff::Var& var, const arma::vec& y) const {
  if (classes_ == 0) {
    return layers::gaussian_expected_loglik(mean, var, y, layers::positive(get(params, kNoise)));
  }
  const arma::uvec labels = likelihoods::class_labels(y, classes_);
  autodiff::Var sum;
  if (kind() == likelihoods::ClassLikelihood::Probit) {
    sum = likelihoods::probit_ell_sum(mean, var, labels, likelihoods::Probit{});
  } else {
    likelihoods::RobustMax rm;
    rm.classes = classes_;
    sum = likelihoods::robustmax_ell_sum(mean, var, labels, rm);
  }
  return autodiff::scale(sum, 1.0 / double(y.n_elem));
}

double SvgpOutput::predictive_noise(const VarMap& vars) const {
  return classes_ > 0 ? 0.0 : layers::positive(get(vars, kNoise)).scalar();
}

RegistryEntry svgp_output_entry(std::string posterior, std::string summary) {
  RegistryEntry e = make_entry(std::move(posterior), std::move(summary));
  e.kernels = {"se"};
  e.classifies_with = {"se"};
  e.classification_likelihood = "robust-max";
  return e;
}

void set_initial_kernel(const ModelSpec& spec, double& lengthscale, double& variance) {
  if (spec.options.is_set(opt::kInitLengthscale))
    lengthscale = spec.options.number(opt::kInitLengthscale);
  if (spec.options.is_set(opt::kInitVariance)) variance = spec.options.number(opt::kInitVariance);
}

}  // namespace dkp::models
