// The snowid administration tool: parses the command line and runs one
// subcommand. Exit status 0 on success, 1 on failure, 2 on bad input or usage
// (diagnostics.h); every error is one line on stderr.
#include <CLI/CLI.hpp>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "diagnostics.h"

#ifndef SNOWID_VERSION
#define SNOWID_VERSION "unknown"
#endif

namespace {

using snowid::cli::Command;

int usage_error(const CLI::ParseError& e, const CLI::App& root,
                const std::vector<Command>& commands) {
  std::string what = e.what();
  if (const auto nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
  std::string help = "snowid --help";
  std::vector<std::string> unknown = root.remaining();
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    // The innermost command given (e.g. "workers list") is the one to ask
    // for help on, and each level may hold unknown arguments.
    std::string name = c.app->get_name();
    const CLI::App* app = c.app;
    for (;;) {
      if (!app->get_allow_extras()) {
        const std::vector<std::string> extra = app->remaining();
        unknown.insert(unknown.begin(), extra.begin(), extra.end());
      }
      const std::vector<CLI::App*> subs = app->get_subcommands();
      if (subs.empty()) break;
      app = subs.front();
      name += " " + app->get_name();
    }
    help = "snowid " + name + " --help";
  }
  // CLI11 checks required options before unexpected ones, but a mistyped
  // option ("--hots 1") is the more useful thing to report.
  if (!unknown.empty()) what = "unknown option or argument \"" + unknown.front() + "\"";
  snowid::cli::print_error(what + "; see " + help);
  return snowid::cli::kExitUsage;
}

int run(int argc, char** argv) {
  // Operands after the first "--" bypass CLI11 (see commands.h).
  std::vector<std::string> args;
  snowid::cli::Operands operands;
  bool after_marker = false;
  for (int i = 1; i < argc; ++i) {
    if (!after_marker && std::string_view(argv[i]) == "--") {
      after_marker = true;
    } else {
      (after_marker ? operands : args).emplace_back(argv[i]);
    }
  }

  CLI::App app("Unique 64-bit time-ordered ids: generate, decode and plan layouts", "snowid");
  app.set_version_flag("--version", "snowid " SNOWID_VERSION);
  app.require_subcommand(1);
  const std::vector<Command> commands = {
      snowid::cli::add_next_command(app),      snowid::cli::add_decode_command(app),
      snowid::cli::add_encode_command(app),    snowid::cli::add_layout_command(app),
      snowid::cli::add_bounds_command(app),    snowid::cli::add_workers_command(app),
      snowid::cli::add_sequences_command(app),
#ifdef SNOWID_CLI_PUBLIC_ID
      snowid::cli::add_public_id_command(app),
#endif
#ifdef SNOWID_CLI_SKEW
      snowid::cli::add_skew_command(app),
#endif
  };
  if (!args.empty() && args.front().rfind("-", 0) != 0) {
    bool known = false;
    // check_name: a command's aliases ("seq") count too.
    for (const Command& c : commands) known = known || c.app->check_name(args.front());
    if (!known) {
      snowid::cli::print_error("unknown command \"" + args.front() +
                               "\" (expected next, workers, sequences, public-id, skew, decode, "
                               "encode, layout or bounds); see "
                               "snowid --help");
      return snowid::cli::kExitUsage;
    }
  }
  try {
    // CLI11 takes the arguments in reverse order.
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0; CLI11 prints them.
    if (e.get_exit_code() == 0) return app.exit(e);
    return usage_error(e, app, commands);
  }
  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    if (!operands.empty() && !c.takes_operands) {
      snowid::cli::print_error("snowid " + c.app->get_name() +
                               " takes no arguments after --; see snowid " + c.app->get_name() +
                               " --help");
      return snowid::cli::kExitUsage;
    }
    return c.run(operands);
  }
  return snowid::cli::kExitUsage;  // unreachable: a subcommand is required
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    snowid::cli::print_error(std::string("internal error: ") + e.what());
  } catch (...) {
    snowid::cli::print_error("internal error");
  }
  return snowid::cli::kExitFailure;
}
