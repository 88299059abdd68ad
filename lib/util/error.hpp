// Error types shared by the library. Every error the user can cause (bad input, bad data,
// bad configuration) is a dkp::Error with a message that names what was wrong and where;
// the CLI turns it into a one-line message and a non-zero exit code.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace dkp {

/// Base class of all errors raised deliberately by dkp.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Malformed or missing input data (files, rows, indices).
class DataError : public Error {
 public:
  using Error::Error;
};

/// Invalid configuration (CLI options, YAML keys and values).
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// A feature that is declared but not implemented yet.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

/// `message` safe to print on a terminal: its control bytes (all but newline and tab; escape
/// sequences included) and the bytes that are not UTF-8 text written as \xNN, since an error may
/// quote bytes of a damaged file.
std::string printable_message(std::string_view message);

}  // namespace dkp
