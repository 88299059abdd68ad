// The model options' flags of `dkp run` and `dkp bench model`, from their declarations
// (models/options.hpp): one flag per option, its help and default from the table.
#include <fmt/format.h>

#include "cli.hpp"
#include "models/options.hpp"
#include "util/error.hpp"

namespace dkp::cli {

void add_model_options(po::options_description& desc) {
  for (const auto& d : models::option_table()) {
    const std::string name = d.flag().substr(2);
    switch (d.type) {
      case models::OptionType::Switch:
        desc.add_options()(name.c_str(), po::bool_switch(), d.help.c_str());
        break;
      case models::OptionType::Number:
        desc.add_options()(
            name.c_str(),
            po::value<double>()->default_value(std::stod(d.default_value), d.default_value),
            d.help.c_str());
        break;
      case models::OptionType::Choice:
        desc.add_options()(name.c_str(), po::value<std::string>()->default_value(d.default_value),
                           d.help.c_str());
        break;
    }
  }
}

models::OptionValues model_options_of(const po::variables_map& vm) {
  models::OptionValues values;
  for (const auto& d : models::option_table()) {
    const std::string name = d.flag().substr(2);
    if (!vm.count(name)) continue;
    const auto& v = vm[name].value();
    if (const auto* b = boost::any_cast<bool>(&v)) {
      values.set_switch(d.name, *b);
    } else if (const auto* x = boost::any_cast<double>(&v)) {
      values.set_number(d.name, *x);
    } else {
      values.set(d.name, boost::any_cast<std::string>(v), d.flag());
    }
  }
  return values;
}

}  // namespace dkp::cli
