// The subcommands. Each add_*_command registers its options on `root` and
// returns what to run once the command line parsed; the function returns the
// process exit code (diagnostics.h) and reports its own errors.
//
// Arguments after the first "--" are operands that are never read as
// options (e.g. `snowid decode -- -5`). main splits them off before CLI11
// parses the rest, because CLI11 does not pass "--" through reliably once a
// positional option already has a value.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace snowid::cli {

using Operands = std::vector<std::string>;

struct Command {
  CLI::App* app = nullptr;
  std::function<int(const Operands&)> run;
  bool takes_operands = false;  // false: operands are a usage error
};

Command add_next_command(CLI::App& root);
Command add_decode_command(CLI::App& root);
Command add_encode_command(CLI::App& root);
Command add_layout_command(CLI::App& root);
Command add_bounds_command(CLI::App& root);
Command add_workers_command(CLI::App& root);
Command add_sequences_command(CLI::App& root);
#ifdef SNOWID_CLI_PUBLIC_ID
Command add_public_id_command(CLI::App& root);
#endif
#ifdef SNOWID_CLI_SKEW
Command add_skew_command(CLI::App& root);
#endif

}  // namespace snowid::cli
