#include "state_dir.h"

#include <gtest/gtest.h>

namespace snowid::host {
namespace {

TEST(StateDir, AGivenDirectoryWinsThenTheVariableThenXdgThenHome) {
  MapEnvironment env;
  env.variables = {
      {"SNOWID_STATE_DIR", "/srv/ids"}, {"XDG_STATE_HOME", "/xdg"}, {"HOME", "/home/u"}};
  EXPECT_EQ(find_state_dir("/given", env, StateDirFallback::kNone).value(), "/given");
  EXPECT_EQ(find_state_dir("", env, StateDirFallback::kNone).value(), "/srv/ids");
  env.variables.erase("SNOWID_STATE_DIR");
  EXPECT_EQ(find_state_dir("", env, StateDirFallback::kNone).value(), "/xdg/snowid");
  env.variables.erase("XDG_STATE_HOME");
  EXPECT_EQ(find_state_dir("", env, StateDirFallback::kNone).value(),
            "/home/u/.local/state/snowid");
}

TEST(StateDir, EmptyVariablesAndARelativeXdgDirectoryCountAsUnset) {
  MapEnvironment env;
  env.variables = {{"SNOWID_STATE_DIR", ""}, {"XDG_STATE_HOME", "relative"}, {"HOME", "/h"}};
  EXPECT_EQ(find_state_dir("", env, StateDirFallback::kNone).value(), "/h/.local/state/snowid");
}

TEST(StateDir, OnlyAServiceFallsBackToTheSystemDirectoryAndOnlyAsRoot) {
  MapEnvironment root;
  root.user = 0;
  EXPECT_EQ(default_state_dir(root, StateDirFallback::kSystemForRoot).value(), "/var/lib/snowid");
  const Result<std::string> tool = default_state_dir(root, StateDirFallback::kNone);
  ASSERT_FALSE(tool.is_ok()) << "a tool run by hand never writes system state unasked";
  EXPECT_EQ(tool.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(tool.status().message().find("--state-dir"), std::string::npos);

  MapEnvironment user;  // uid 1000, no variables
  EXPECT_FALSE(default_state_dir(user, StateDirFallback::kSystemForRoot).is_ok());
}

}  // namespace
}  // namespace snowid::host
