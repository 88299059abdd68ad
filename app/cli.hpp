// The dkp command-line front end: a table of subcommands over Boost.Program_options.
// Exit codes: 0 success, 1 runtime error (bad data, failed run), 2 usage error
// (unknown subcommand or option, invalid value), 3 not implemented yet, 75 busy (`dkp run`: another
// process holds the run directory's lock), 130 interrupted (SIGINT/SIGTERM).
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "models/options.hpp"

namespace dkp::cli {

namespace po = boost::program_options;

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotImplemented = 3;
/// `dkp run`: another process holds the lock of --out (platform::DirLock, run.lock), so this one
/// did not start; nothing was read or written. The grid runner counts such a cell as "running
/// elsewhere". 75 is EX_TEMPFAIL of <sysexits.h>: try again later.
inline constexpr int kExitBusy = 75;
/// A run stopped by SIGINT/SIGTERM (it left a checkpoint to resume): 128 + SIGINT, as a shell.
inline constexpr int kExitInterrupted = 130;

/// Thrown for usage errors; main prints "dkp: <message>" and exits 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Options every subcommand accepts: --help, --log-level, --quiet, --data.
po::options_description common_options();

/// Parses `args` strictly against `desc` (plus positionals); unknown options are UsageErrors.
/// Applies --log-level / --quiet. Returns false when --help was printed (caller returns 0).
bool parse_or_help(const std::vector<std::string>& args, const po::options_description& desc,
                   const po::positional_options_description& pos, po::variables_map& vm,
                   const std::string& usage_line);

/// The --blas-threads value of `vm` (dkp run, grid run/verify/plan, bench model): at least 1, or
/// a UsageError.
int blas_threads_option(const po::variables_map& vm);

/// The model options' flags (models/options.hpp), one per declared option, added to `desc`
/// (app/model_options.cpp).
void add_model_options(po::options_description& desc);
/// The model options `vm` holds (given or default) after add_model_options; ConfigError for a
/// value the option does not take.
models::OptionValues model_options_of(const po::variables_map& vm);

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

int cmd_run(const std::vector<std::string>& args);
int cmd_predict(const std::vector<std::string>& args);
int cmd_params(const std::vector<std::string>& args);
int cmd_grid(const std::vector<std::string>& args);
int cmd_tables(const std::vector<std::string>& args);
int cmd_data(const std::vector<std::string>& args);
int cmd_bench(const std::vector<std::string>& args);
int cmd_toy(const std::vector<std::string>& args);

}  // namespace dkp::cli
