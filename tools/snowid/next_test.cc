// Black-box tests of `snowid next`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "snowid/id_text.h"
#include "snowid/layout.h"
#include "snowid/time.h"

namespace snowid::cli::testing {
namespace {

std::vector<std::uint64_t> ids_of(const CliResult& r) {
  std::vector<std::uint64_t> ids;
  for (const std::string& line : lines_of(r.out)) {
    Result<std::uint64_t> id = parse_id(line);
    EXPECT_TRUE(id.is_ok()) << "not an id: " << line;
    if (id.is_ok()) ids.push_back(id.value());
  }
  return ids;
}

std::vector<std::uint64_t> next_ids(const TempDir& state, int n, int region, int host) {
  const CliResult r = run_cli({"next", "-n", std::to_string(n), "--region", std::to_string(region),
                               "--host", std::to_string(host), "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return ids_of(r);
}

std::string fence_text(std::int64_t unix_ms) {
  return "snowid-fence 1 " + std::to_string(unix_ms) + "\n";
}

std::int64_t now_ms() { return unix_ms(system_clock().wall_now()); }

TEST(Next, PrintsDistinctIncreasingIdsThatDecodeToTheGivenWorker) {
  TempDir state;
  const std::vector<std::uint64_t> ids = next_ids(state, 1000, 2, 17);
  ASSERT_EQ(ids.size(), 1000u);
  const Layout& layout = Layout::snowid_default();
  const std::int64_t before = now_ms();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(ids[i - 1], ids[i]) << "at " << i;
    }
    Result<DecodedId> d = layout.decode(ids[i]);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(d->values[1], 2u) << "region of " << ids[i];
    EXPECT_EQ(d->values[2], 17u) << "host of " << ids[i];
    // Issued just now, not at some stale or future time.
    EXPECT_LE(unix_ms(d->time), before + 1000);
    EXPECT_GE(unix_ms(d->time), before - 60'000);
  }
}

TEST(Next, PrintsOneIdByDefault) {
  TempDir state;
  const CliResult r = run_cli({"next", "--host", "1", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ids_of(r).size(), 1u);
}

TEST(Next, IdsPrintedAreAcceptedByDecodeWithTheWorkerGiven) {
  TempDir state;
  const std::vector<std::uint64_t> ids = next_ids(state, 3, 1, 200);
  ASSERT_EQ(ids.size(), 3u);
  for (std::uint64_t id : ids) {
    const CliResult r = run_cli({"decode", std::to_string(id)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(" region=1 host=200 "), std::string::npos) << r.out;
  }
}

TEST(Next, SecondRunIssuesOnlyIdsAboveTheFirstRun) {
  TempDir state;
  const std::vector<std::uint64_t> first = next_ids(state, 5000, 0, 9);
  const std::vector<std::uint64_t> second = next_ids(state, 5000, 0, 9);
  ASSERT_EQ(first.size(), 5000u);
  ASSERT_EQ(second.size(), 5000u);
  EXPECT_GT(second.front(), first.back());
}

TEST(Next, LargeCountsAreUniqueAndIncreasing) {
  TempDir state;
  const std::vector<std::uint64_t> ids = next_ids(state, 200'000, 3, 255);
  ASSERT_EQ(ids.size(), 200'000u);
  for (std::size_t i = 1; i < ids.size(); ++i) ASSERT_LT(ids[i - 1], ids[i]) << "at " << i;
}

TEST(Next, RecordsTheExactLastTickSoAQuickRestartDoesNotWaitForTheWindow) {
  TempDir state;
  const std::vector<std::uint64_t> first = next_ids(state, 10, 0, 4);
  ASSERT_FALSE(first.empty());
  // The fence holds the last issued tick, not a tick a window ahead.
  const std::string fence = state.read("fence-r0-h4");
  const std::int64_t fence_ms = std::stoll(fence.substr(fence.rfind(' ') + 1));
  const Result<DecodedId> last = Layout::snowid_default().decode(first.back());
  ASSERT_TRUE(last.is_ok());
  EXPECT_EQ(fence_ms, unix_ms(last->time)) << fence;

  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::uint64_t> second = next_ids(state, 1, 0, 4);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(second.size(), 1u);
  EXPECT_GT(second.front(), first.back());
  // Waiting out a window-ahead fence would take about a second.
  EXPECT_LT(took, std::chrono::milliseconds(700));
}

TEST(Next, WaitsOutAFenceLeftSlightlyAheadByAnUncleanStop) {
  TempDir state;
  const std::int64_t fence_ms = now_ms() + 500;
  state.write("fence-r0-h6", fence_text(fence_ms));
  const std::vector<std::uint64_t> ids = next_ids(state, 3, 0, 6);
  ASSERT_EQ(ids.size(), 3u);
  const Result<DecodedId> first = Layout::snowid_default().decode(ids.front());
  ASSERT_TRUE(first.is_ok());
  EXPECT_GT(unix_ms(first->time), fence_ms);
}

TEST(Next, RefusesWhenTheClockIsFarBehindTheStoredFence) {
  TempDir state;
  state.write("fence-r0-h7", fence_text(now_ms() + 3'600'000));
  const CliResult r = run_cli({"next", "--host", "7", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("FAILED_PRECONDITION"), std::string::npos) << r.err;
}

TEST(Next, CorruptFenceFileFailsClearlyAndPrintsNoIds) {
  TempDir state;
  state.write("fence-r0-h5", "this is not a fence\n");
  const CliResult r = run_cli({"next", "-n", "10", "--host", "5", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("DATA_LOSS"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(state.file("fence-r0-h5")), std::string::npos) << r.err;
  // The corrupt file is left for the operator to inspect.
  EXPECT_EQ(state.read("fence-r0-h5"), "this is not a fence\n");
}

TEST(Next, ConcurrentRunsOfOneWorkerNeverIssueTheSameId) {
  TempDir state;
  const std::vector<std::string> args = {"next", "-n",          "20000",     "--host",
                                         "8",    "--state-dir", state.path()};
  auto a = std::async(std::launch::async, [&] { return run_cli(args); });
  auto b = std::async(std::launch::async, [&] { return run_cli(args); });
  const CliResult ra = a.get();
  const CliResult rb = b.get();
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  std::set<std::uint64_t> all;
  for (std::uint64_t id : ids_of(ra)) all.insert(id);
  for (std::uint64_t id : ids_of(rb)) all.insert(id);
  EXPECT_EQ(all.size(), 40'000u);
}

TEST(Next, StateDirComesFromSnowidStateDirThenXdgStateHomeThenHome) {
  TempDir root;
  const std::string explicit_dir = root.path() + "/explicit";
  const std::string xdg = root.path() + "/xdg";
  const std::string home = root.path() + "/home";

  CliRun run;
  run.args = {"next", "--host", "3"};
  run.env = {{"SNOWID_STATE_DIR", explicit_dir}, {"XDG_STATE_HOME", xdg}, {"HOME", home}};
  ASSERT_EQ(run_cli(run).exit_code, 0);
  struct stat st {};
  EXPECT_EQ(::stat((explicit_dir + "/fence-r0-h3").c_str(), &st), 0);

  run.env = {{"XDG_STATE_HOME", xdg}, {"HOME", home}};
  ASSERT_EQ(run_cli(run).exit_code, 0);
  EXPECT_EQ(::stat((xdg + "/snowid/fence-r0-h3").c_str(), &st), 0);

  run.env = {{"HOME", home}};
  const CliResult r = run_cli(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dir = home + "/.local/state/snowid";
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(::stat((dir + "/fence-r0-h3").c_str(), &st), 0);
}

TEST(Next, FailsClearlyWithoutAnyStateDirectory) {
  CliRun run;
  run.args = {"next", "--host", "3"};
  const CliResult r = run_cli(run);  // no HOME, no SNOWID_STATE_DIR, no XDG_STATE_HOME
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("--state-dir"), std::string::npos) << r.err;
}

TEST(Next, EmptyStateDirIsRefusedRatherThanReplacedByTheDefault) {
  TempDir home;
  CliRun run;
  run.args = {"next", "--host", "1", "--state-dir", ""};
  run.env = {{"HOME", home.path()}};
  const CliResult r = run_cli(run);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  struct stat st {};
  EXPECT_NE(::stat((home.path() + "/.local").c_str(), &st), 0);
}

TEST(Next, StateDirThatIsAFileFailsWithoutIds) {
  TempDir root;
  const std::string file = root.write("not-a-dir", "x");
  const CliResult r = run_cli({"next", "--host", "1", "--state-dir", file + "/sub"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
}

TEST(Next, RefusesBadCountsAndWorkers) {
  TempDir state;
  const std::vector<std::vector<std::string>> cases = {
      {"-n", "0", "--host", "1"},
      {"-n", "1000001", "--host", "1"},
      {"-n", "ten", "--host", "1"},
      {"-n", "-1", "--host", "1"},
      {"--host", "256"},
      {"--host", "-1"},
      {"--host", "1x"},
      {"--region", "4", "--host", "1"},
      {"--host", "99999999999999999999"},
      {"--host", ""},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"next", "--state-dir", state.path()};
    args.insert(args.end(), c.begin(), c.end());
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(c) << " " << r.err;
    EXPECT_EQ(r.out, "") << ::testing::PrintToString(c);
    EXPECT_TRUE(is_one_line_error(r.err)) << ::testing::PrintToString(c) << " " << r.err;
  }
}

TEST(Next, RefusesADecodeOnlyLayout) {
  TempDir state;
  const CliResult r =
      run_cli({"next", "--host", "1", "--layout", "discord", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("decode-only"), std::string::npos) << r.err;
}

TEST(Next, UsesTheEraOfAHistoryThatIsInEffectNow) {
  TempDir dir;
  const std::string file = dir.write("history.json", R"({"history": [
    {"cutover": "2026-01-01T00:00:00Z", "layout": "snowid"},
    {"cutover": "2026-06-01T00:00:00Z", "layout": {
      "name": "wide_hosts", "epoch": "2026-01-01T00:00:00Z",
      "fields": [{"name": "time", "role": "time", "width": 41},
                 {"name": "region", "role": "region", "width": 1},
                 {"name": "host", "role": "host", "width": 9},
                 {"name": "sequence", "role": "sequence", "width": 12}]}}]})");
  const CliResult r =
      run_cli({"next", "--host", "300", "--layout", file, "--state-dir", dir.path() + "/state"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::uint64_t> ids = ids_of(r);
  ASSERT_EQ(ids.size(), 1u);
  const CliResult d = run_cli({"decode", "--layout", file, std::to_string(ids.front())});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_NE(d.out.find(" layout=wide_hosts "), std::string::npos) << d.out;
  EXPECT_NE(d.out.find(" region=0 host=300 "), std::string::npos) << d.out;
}

// Two pods on one host, each with the file registry in its own state
// directory, would both take worker 0/0: under an orchestrator the registry
// must be chosen.
TEST(Next, RefusesTheFileRegistryUnderAnOrchestratorUnlessChosen) {
  TempDir state;
  const CliResult refused = run_cli({.args = {"next", "--state-dir", state.path()},
                                     .env = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(refused.out, "") << "no id";
  EXPECT_NE(refused.err.find("KUBERNETES_SERVICE_HOST is set"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--registry file"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(state.path() + "/workers")) << "no lease was taken";

  for (const auto& run :
       {CliRun{.args = {"next", "--registry", "file", "--state-dir", state.path()},
       .env = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}},
        CliRun{.args = {"next", "--state-dir", state.path()},
        .env = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"SNOWID_REGISTRY", "file"}}}}) {
    const CliResult chosen = run_cli(run);
    EXPECT_EQ(chosen.exit_code, 0) << chosen.err;
    EXPECT_EQ(ids_of(chosen).size(), 1u);
  }
}

TEST(Next, AnEmptyEtcdSettingIsRefusedNotTakenForTheFileRegistry) {
  TempDir state;
  for (const auto& run : {CliRun{.args = {"next", "--etcd", "", "--state-dir", state.path()}},
                          CliRun{.args = {"next", "--etcd", "  ", "--state-dir", state.path()}},
                          CliRun{.args = {"next", "--state-dir", state.path()},
                          .env = {{"SNOWID_ETCD_ENDPOINTS", ""}}},
                          CliRun{.args = {"next", "--state-dir", state.path()},
                          .env = {{"SNOWID_ETCD_ENDPOINTS", " "}}}}) {
    const CliResult r = run_cli(run);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("is empty"), std::string::npos) << r.err;
  }
  const CliResult both = run_cli({"next", "--registry", "etcd", "--state-dir", state.path()});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("no etcd endpoints"), std::string::npos) << both.err;
  const CliResult bad = run_cli({"next", "--registry", "consul", "--state-dir", state.path()});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(state.path() + "/workers")) << "no lease was taken";
}

}  // namespace
}  // namespace snowid::cli::testing
