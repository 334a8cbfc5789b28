// Black-box tests of the command line itself: help, version, usage errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_runner.h"

namespace snowid::cli::testing {
namespace {

const std::vector<std::string> kSubcommands = {"next", "decode", "encode", "layout", "bounds"};
// `workers` has subcommands of its own (WorkersSubcommandsHaveHelpAndRefuseUnknownFlags).

TEST(Usage, HelpOnEverySubcommandPrintsUsageAndSucceeds) {
  for (const std::string& sub : kSubcommands) {
    const CliResult r = run_cli({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find("--layout"), std::string::npos) << sub << ": " << r.out;
    EXPECT_EQ(r.err, "") << sub;
  }
  const CliResult top = run_cli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const std::string& sub : kSubcommands) {
    EXPECT_NE(top.out.find(sub), std::string::npos) << top.out;
  }
  EXPECT_NE(top.out.find("workers"), std::string::npos) << top.out;
}

TEST(Usage, VersionPrintsTheVersion) {
  const CliResult r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("snowid ", 0), 0u) << r.out;
}

TEST(Usage, MissingOrUnknownSubcommandIsAOneLineUsageError) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"frobnicate"}, {"--frob"}, {"nxt", "--host", "1"}}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args);
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(is_one_line_error(r.err)) << ::testing::PrintToString(args) << ": " << r.err;
  }
}

TEST(Usage, UnknownFlagOnEverySubcommandIsAOneLineUsageError) {
  for (const std::string& sub : kSubcommands) {
    const CliResult r = run_cli({sub, "--no-such-flag"});
    EXPECT_EQ(r.exit_code, 2) << sub;
    EXPECT_EQ(r.out, "") << sub;
    EXPECT_TRUE(is_one_line_error(r.err)) << sub << ": " << r.err;
    EXPECT_NE(r.err.find("--no-such-flag"), std::string::npos) << sub << ": " << r.err;
  }
}

TEST(Usage, WorkersSubcommandsHaveHelpAndRefuseUnknownFlags) {
  for (const std::string sub : {"list", "fence"}) {
    const CliResult help = run_cli({"workers", sub, "--help"});
    EXPECT_EQ(help.exit_code, 0) << sub << ": " << help.err;
    EXPECT_NE(help.out.find("--layout"), std::string::npos) << sub << ": " << help.out;
    EXPECT_NE(help.out.find("--etcd"), std::string::npos) << sub << ": " << help.out;
    const CliResult bad = run_cli({"workers", sub, "--no-such-flag"});
    EXPECT_EQ(bad.exit_code, 2) << sub;
    EXPECT_EQ(bad.out, "") << sub;
    EXPECT_TRUE(is_one_line_error(bad.err)) << sub << ": " << bad.err;
    EXPECT_NE(bad.err.find("--no-such-flag"), std::string::npos) << sub << ": " << bad.err;
    EXPECT_NE(bad.err.find("snowid workers " + sub + " --help"), std::string::npos) << bad.err;
  }
  const CliResult bare = run_cli({"workers"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(bare.err)) << bare.err;
}

TEST(Usage, ArgumentsAfterDoubleDashAreIdsEvenWhenTheyLookLikeOptions) {
  const CliResult r =
      run_cli({"decode", "--layout", "discord", "175928847299117063", "--", "-7", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("id=175928847299117063 "), std::string::npos) << r.out;
  const std::vector<std::string> err = lines_of(r.err);
  ASSERT_EQ(err.size(), 2u) << r.err;
  EXPECT_NE(err[0].find("\"-7\""), std::string::npos) << err[0];
  EXPECT_NE(err[1].find("\"--json\""), std::string::npos) << err[1];
}

TEST(Usage, CommandsWithoutOperandsRefuseArgumentsAfterDoubleDash) {
  const CliResult r = run_cli({"layout", "--", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
}

TEST(Usage, OptionWithoutItsValueIsAOneLineUsageError) {
  const CliResult r = run_cli({"encode", "--time"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
}

}  // namespace
}  // namespace snowid::cli::testing
