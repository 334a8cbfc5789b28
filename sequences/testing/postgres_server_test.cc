// scripts/pg-scratch, as the tests' PostgresServer and the ctest fixture run
// it: what it leaves behind when a start fails half-way.
#include "testing/postgres_server.h"

#include <glob.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "child_process.h"
#include "temp_dir.h"

extern char** environ;

namespace snowid::sequences::testing {
namespace {

using namespace std::chrono_literals;

// The server binaries pg-scratch uses: $SNOWID_PG_BINDIR, else the highest
// /usr/lib/postgresql/*/bin. Empty if there is none.
std::string server_bindir() {
  if (const char* env = std::getenv("SNOWID_PG_BINDIR"); env != nullptr && *env != '\0') {
    return env;
  }
  glob_t found{};
  std::string best;
  if (::glob("/usr/lib/postgresql/*/bin", 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) {
      if (best.empty() || ::strverscmp(best.c_str(), found.gl_pathv[i]) < 0) {
        best = found.gl_pathv[i];
      }
    }
  }
  ::globfree(&found);
  return best;
}

// This process's environment with `extra` ("NAME=value") added last.
std::vector<std::string> environment_with(const std::string& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.push_back(extra);
  return env;
}

test_support::ProcessResult pg_scratch(const std::string& command, const std::string& dir,
                                       const std::vector<std::string>& env) {
  test_support::SpawnRequest request;
  request.argv = {pg_scratch_script(), command, dir};
  request.env = env;
  return test_support::run_to_completion(request, 120s);
}

// A start that fails once the server is up (here createdb, refused by a
// stand-in) must stop that server: the callers remove the directory of a
// failed start, and a server running on a deleted data directory would be
// left for ever.
TEST(PgScratchTest, StartThatFailsAfterTheServerCameUpStopsIt) {
  const std::string real = server_bindir();
  ASSERT_FALSE(real.empty()) << "no PostgreSQL server binaries";
  test_support::TempDir bin("snowid-fake-pg-bin");
  ASSERT_FALSE(bin.path().empty());
  // As root the server's tools run as the postgres user, who must reach them.
  ASSERT_EQ(::chmod(bin.path().c_str(), 0755), 0);
  for (const char* tool : {"initdb", "pg_ctl"}) {
    ASSERT_EQ(::symlink((real + "/" + tool).c_str(), bin.file(tool).c_str()), 0) << tool;
  }
  {
    std::ofstream createdb(bin.file("createdb"));
    createdb << "#!/bin/sh\necho 'createdb: refused by the test' >&2\nexit 1\n";
  }
  ASSERT_EQ(::chmod(bin.file("createdb").c_str(), 0755), 0);

  test_support::TempDir dir("snowid-pg");
  ASSERT_FALSE(dir.path().empty());
  const std::vector<std::string> env = environment_with("SNOWID_PG_BINDIR=" + bin.path());
  const test_support::ProcessResult started = pg_scratch("start", dir.path(), env);
  EXPECT_EQ(started.exit_code, 1) << started.err;
  EXPECT_NE(started.err.find("createdb failed"), std::string::npos) << started.err;
  EXPECT_EQ(started.out, "") << "no conninfo for a server that is not usable";

  const test_support::ProcessResult status = pg_scratch("status", dir.path(), env);
  EXPECT_EQ(status.exit_code, 3) << "a server was left running: " << status.out;
  if (status.exit_code == 0) (void)pg_scratch("stop", dir.path(), env);
}

}  // namespace
}  // namespace snowid::sequences::testing
