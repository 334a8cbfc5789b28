// Black-box tests of leasing in `snowid next` (no --host, --region,
// SNOWID_REGION, --follow, etcd settings) and of `snowid workers list|fence`,
// all on the file registry in temporary state directories.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "snowid/id_text.h"
#include "snowid/layout.h"
#include "snowid/time.h"

namespace snowid::cli::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Issued {
  std::uint64_t id = 0;
  WorkerId worker;
  WallTime time;
};

Issued decode(const std::string& line) {
  Issued out;
  Result<std::uint64_t> id = parse_id(line);
  EXPECT_TRUE(id.is_ok()) << "not an id: \"" << line << "\"";
  if (!id.is_ok()) return out;
  Result<DecodedId> d = Layout::snowid_default().decode(id.value());
  EXPECT_TRUE(d.is_ok());
  if (!d.is_ok()) return out;
  out.id = id.value();
  out.worker = {static_cast<std::uint32_t>(d->values[1]), static_cast<std::uint32_t>(d->values[2])};
  out.time = d->time;
  return out;
}

std::vector<Issued> decode_all(const std::string& out) {
  std::vector<Issued> ids;
  for (const std::string& line : lines_of(out)) ids.push_back(decode(line));
  return ids;
}

std::string worker_text(WorkerId w) {
  return std::to_string(w.region) + "/" + std::to_string(w.host);
}

// `snowid next --follow` on the state directory, with `extra` arguments.
CliRun follow_run(const TempDir& state, std::vector<std::string> extra = {}) {
  CliRun run;
  run.args = {"next", "--follow", "--state-dir", state.path()};
  run.args.insert(run.args.end(), extra.begin(), extra.end());
  return run;
}

// Asks a follower for one id and decodes it.
Issued request_one(CliProcess& p) {
  EXPECT_TRUE(p.write("\n"));
  const std::optional<std::string> line = p.read_line(seconds(20));
  EXPECT_TRUE(line.has_value()) << "no id; stderr: " << p.err();
  return line ? decode(*line) : Issued{};
}

// The `workers list --json` records, or fails the test.
nlohmann::json list_json(const TempDir& state, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"workers", "list", "--json", "--state-dir", state.path()};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << r.out;
  return doc.is_discarded() ? nlohmann::json::array() : doc["workers"];
}

// The JSON record of `w`, or null.
nlohmann::json record_of(const nlohmann::json& workers, WorkerId w) {
  for (const nlohmann::json& r : workers) {
    if (r["region"] == w.region && r["host"] == w.host) return r;
  }
  return nullptr;
}

// A loopback port on which nothing listens.
int unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// ---- next without --host ----

TEST(Lease, NextWithoutHostLeasesAnIdAndGivesItBackWithItsLastInstant) {
  TempDir state;
  const CliResult r = run_cli({"next", "-n", "3", "--state-dir", state.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<Issued> ids = decode_all(r.out);
  ASSERT_EQ(ids.size(), 3u);
  for (const Issued& i : ids) EXPECT_EQ(i.worker, ids.front().worker);

  const nlohmann::json rec = record_of(list_json(state), ids.front().worker);
  ASSERT_FALSE(rec.is_null());
  EXPECT_EQ(rec["state"], "free");
  EXPECT_TRUE(rec["holder"].is_null());
  // Released with the exact last instant issued, not the lease's cap ahead.
  EXPECT_EQ(rec["high_water"], format_iso8601(ids.back().time));
  EXPECT_TRUE(rec["released_at"].is_string());
}

TEST(Lease, ConcurrentRunsWithoutHostHoldDifferentIds) {
  TempDir state;
  CliProcess a(follow_run(state));
  const Issued from_a = request_one(a);
  CliProcess b(follow_run(state));
  const Issued from_b = request_one(b);
  // A one-shot run while both hold their ids.
  const CliResult c = run_cli({"next", "-n", "1000", "--state-dir", state.path()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const std::vector<Issued> from_c = decode_all(c.out);
  ASSERT_EQ(from_c.size(), 1000u);

  EXPECT_NE(from_a.worker, from_b.worker);
  EXPECT_NE(from_c.front().worker, from_a.worker);
  EXPECT_NE(from_c.front().worker, from_b.worker);
  EXPECT_EQ(a.finish().exit_code, 0);
  EXPECT_EQ(b.finish().exit_code, 0);
}

TEST(Lease, ManyConcurrentRunsNeverIssueTheSameId) {
  TempDir state;
  std::vector<std::unique_ptr<CliProcess>> runs;
  for (int i = 0; i < 6; ++i) {
    CliRun run;
    run.args = {"next", "-n", "50000", "--state-dir", state.path()};
    runs.push_back(std::make_unique<CliProcess>(run));
  }
  std::set<std::uint64_t> all;
  std::size_t total = 0;
  for (auto& p : runs) {
    const CliResult r = p->finish();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& line : lines_of(r.out)) {
      all.insert(decode(line).id);
      ++total;
    }
  }
  EXPECT_EQ(total, 300'000u);
  EXPECT_EQ(all.size(), total);
}

TEST(Lease, OneRunMoreThanTheBlockHoldsFailsClearlyInsteadOfSharingAnId) {
  TempDir state;
  // Two hosts per region.
  const std::string layout = state.write("tiny.json", R"({
    "name": "tiny", "epoch": "2026-01-01T00:00:00Z",
    "fields": [{"name": "time", "role": "time", "width": 41},
               {"name": "region", "role": "region", "width": 2},
               {"name": "host", "role": "host", "width": 1},
               {"name": "sequence", "role": "sequence", "width": 19}]})");
  CliProcess a(follow_run(state, {"--layout", layout}));
  CliProcess b(follow_run(state, {"--layout", layout}));
  ASSERT_TRUE(a.write("\n") && a.read_line(seconds(20))) << a.err();
  ASSERT_TRUE(b.write("\n") && b.read_line(seconds(20))) << b.err();
  const CliResult third = run_cli({"next", "--layout", layout, "--state-dir", state.path()});
  EXPECT_EQ(third.exit_code, 1);
  EXPECT_EQ(third.out, "");
  EXPECT_TRUE(is_one_line_error(third.err)) << third.err;
  EXPECT_NE(third.err.find("RESOURCE_EXHAUSTED"), std::string::npos) << third.err;
  EXPECT_NE(third.err.find("no free worker id in region 0"), std::string::npos) << third.err;
  // Another region is another block.
  const CliResult other =
      run_cli({"next", "--region", "3", "--layout", layout, "--state-dir", state.path()});
  EXPECT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(a.finish().exit_code, 0);
  EXPECT_EQ(b.finish().exit_code, 0);
}

TEST(Lease, RegionComesFromTheFlagThenSnowidRegion) {
  TempDir state;
  CliRun run;
  run.args = {"next", "--state-dir", state.path()};
  run.env = {{"SNOWID_REGION", "2"}};
  CliResult r = run_cli(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(decode(lines_of(r.out).at(0)).worker.region, 2u);

  run.args = {"next", "--region", "1", "--state-dir", state.path()};
  r = run_cli(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(decode(lines_of(r.out).at(0)).worker.region, 1u);

  // A pinned host takes its region from the environment too.
  run.args = {"next", "--host", "9", "--state-dir", state.path()};
  r = run_cli(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(decode(lines_of(r.out).at(0)).worker, (WorkerId{2, 9}));

  // An empty variable counts as unset.
  run.env = {{"SNOWID_REGION", ""}};
  run.args = {"next", "--state-dir", state.path()};
  r = run_cli(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(decode(lines_of(r.out).at(0)).worker.region, 0u);
}

TEST(Lease, BadRegionsAreUsageErrors) {
  TempDir state;
  const std::vector<std::pair<std::vector<std::string>, std::optional<std::string>>> cases = {
      {{"--region", "4"}, std::nullopt},
      {{"--region", "x"}, std::nullopt},
      {{"--region", ""}, std::nullopt},
      {{"--region", "-1"}, std::nullopt},
      {{}, std::string("4")},
      {{}, std::string("two")},
      {{"--host", "3"}, std::string("9")},
  };
  for (const auto& [extra, env] : cases) {
    CliRun run;
    run.args = {"next", "--state-dir", state.path()};
    run.args.insert(run.args.end(), extra.begin(), extra.end());
    if (env) run.env = {{"SNOWID_REGION", *env}};
    const CliResult r = run_cli(run);
    const std::string what = ::testing::PrintToString(extra) + " SNOWID_REGION=" + env.value_or("");
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
    EXPECT_EQ(r.out, "") << what;
    EXPECT_TRUE(is_one_line_error(r.err)) << what << ": " << r.err;
  }
  const CliResult list = run_cli({"workers", "list", "--region", "4", "--state-dir", state.path()});
  EXPECT_EQ(list.exit_code, 2) << list.err;
  EXPECT_TRUE(is_one_line_error(list.err)) << list.err;
}

TEST(Lease, TwoRunsPinnedToOneIdTakeTurns) {
  TempDir state;
  CliProcess holder(follow_run(state, {"--host", "12"}));
  const Issued first = request_one(holder);
  ASSERT_EQ(first.worker, (WorkerId{0, 12}));
  // While it is held, a pinned run waits (up to 10 s) and starts once the
  // holder has let go.
  CliRun run;
  run.args = {"next", "--host", "12", "--state-dir", state.path()};
  std::optional<CliResult> second;
  std::thread t([&] { second = run_cli(run); });
  std::this_thread::sleep_for(milliseconds(300));  // give it time to find the id taken
  const Issued last = request_one(holder);
  EXPECT_EQ(holder.finish().exit_code, 0);
  t.join();
  ASSERT_TRUE(second.has_value());
  ASSERT_EQ(second->exit_code, 0) << second->err;
  const Issued after = decode(lines_of(second->out).at(0));
  EXPECT_EQ(after.worker, (WorkerId{0, 12}));
  EXPECT_GT(after.id, last.id);
}

TEST(Lease, AKilledHoldersSuccessorOnItsIdWaitsOutItsHighWaterMark) {
  TempDir state;
  CliProcess holder(follow_run(state, {"--host", "3"}));
  const Issued issued = request_one(holder);
  ASSERT_EQ(issued.worker, (WorkerId{0, 3}));
  const nlohmann::json rec = record_of(list_json(state), {0, 3});
  ASSERT_FALSE(rec.is_null());
  ASSERT_EQ(rec["state"], "held");
  const Result<WallTime> mark = parse_iso8601(rec["high_water"].get<std::string>());
  ASSERT_TRUE(mark.is_ok());
  holder.send_signal(SIGKILL);
  EXPECT_EQ(holder.finish().exit_code, 128 + SIGKILL);

  // Another id is free at once.
  const CliResult any = run_cli({"next", "--state-dir", state.path()});
  ASSERT_EQ(any.exit_code, 0) << any.err;
  EXPECT_NE(decode(lines_of(any.out).at(0)).worker, (WorkerId{0, 3}));

  // The same id: only past the mark the killed holder may have issued up to.
  const auto start = std::chrono::steady_clock::now();
  const CliResult same = run_cli({"next", "--host", "3", "--state-dir", state.path()});
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const Issued next = decode(lines_of(same.out).at(0));
  EXPECT_GT(next.time, mark.value());
  EXPECT_GT(next.id, issued.id);
  RecordProperty("successor_wait_ms",
                 static_cast<int>(std::chrono::duration_cast<milliseconds>(waited).count()));
}

// ---- --follow ----

TEST(Follow, AnswersEachRequestLineAndReleasesAtTheEndOfInput) {
  TempDir state;
  CliRun run = follow_run(state);
  run.input = "\n5\n\n";
  const CliResult r = run_cli(run);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Issued> ids = decode_all(r.out);
  ASSERT_EQ(ids.size(), 7u);
  for (std::size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1].id, ids[i].id);
  EXPECT_NE(r.err.find("leased worker " + worker_text(ids.front().worker)), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("released worker"), std::string::npos) << r.err;
  EXPECT_EQ(record_of(list_json(state), ids.front().worker)["state"], "free");
}

TEST(Follow, ABadRequestLineEndsTheRunAsAUsageError) {
  TempDir state;
  CliRun run = follow_run(state);
  run.input = "2\nmany\n3\n";
  const CliResult r = run_cli(run);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines_of(r.out).size(), 2u);
  EXPECT_NE(r.err.find("\"many\""), std::string::npos) << r.err;
}

TEST(Follow, SigtermReleasesTheLease) {
  TempDir state;
  CliProcess p(follow_run(state));
  const Issued issued = request_one(p);
  p.send_signal(SIGTERM);
  const CliResult r = p.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rec = record_of(list_json(state), issued.worker);
  EXPECT_EQ(rec["state"], "free");
  EXPECT_EQ(rec["high_water"], format_iso8601(issued.time));
}

// ---- workers list ----

TEST(Workers, ListOfAFreshStateDirectoryIsEmpty) {
  TempDir state;
  const CliResult r = run_cli({"workers", "list", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;  // the header
  EXPECT_NE(r.out.find("WORKER"), std::string::npos);
  EXPECT_TRUE(list_json(state).empty());
}

TEST(Workers, ListShowsAHeldIdWithItsHolderWhileARunHoldsIt) {
  TempDir state;
  CliProcess holder(follow_run(state, {"--region", "1", "--host", "7"}));
  const Issued issued = request_one(holder);
  ASSERT_EQ(issued.worker, (WorkerId{1, 7}));

  const CliResult table = run_cli({"workers", "list", "--state-dir", state.path()});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const std::vector<std::string> lines = lines_of(table.out);
  ASSERT_EQ(lines.size(), 2u) << table.out;
  const std::string& row = lines[1];
  EXPECT_EQ(row.rfind("1/7 ", 0), 0u) << row;
  EXPECT_NE(row.find(":" + std::to_string(holder.pid()) + " "), std::string::npos) << row;
  EXPECT_NE(row.find("held"), std::string::npos) << row;

  const nlohmann::json rec = record_of(list_json(state, {"--region", "1"}), {1, 7});
  ASSERT_FALSE(rec.is_null());
  EXPECT_EQ(rec["state"], "held");
  EXPECT_EQ(rec["holder"]["pid"], holder.pid());
  // The mark lies ahead of what was issued: the cap of the current lease.
  const Result<WallTime> mark = parse_iso8601(rec["high_water"].get<std::string>());
  ASSERT_TRUE(mark.is_ok());
  EXPECT_GE(mark.value(), issued.time);
  EXPECT_TRUE(list_json(state, {"--region", "0"}).empty());

  EXPECT_EQ(holder.finish().exit_code, 0);
  EXPECT_EQ(record_of(list_json(state), {1, 7})["state"], "free");
}

// ---- workers fence ----

TEST(Workers, FenceStopsARunningHolderWhichThenLeasesAnotherId) {
  TempDir state;
  CliProcess holder(follow_run(state));
  const Issued before = request_one(holder);
  const WorkerId w = before.worker;

  const auto fenced_at = std::chrono::steady_clock::now();
  const CliResult fence = run_cli({"workers", "fence", std::to_string(w.region),
                                   std::to_string(w.host), "--state-dir", state.path()});
  ASSERT_EQ(fence.exit_code, 0) << fence.err;
  EXPECT_NE(fence.out.find("fenced worker " + worker_text(w)), std::string::npos) << fence.out;
  EXPECT_NE(fence.out.find("pid " + std::to_string(holder.pid())), std::string::npos) << fence.out;
  // The holder notices, stops, and leases a fresh id.
  ASSERT_TRUE(holder.wait_for_err("lease lost on worker " + worker_text(w), seconds(5)))
      << holder.err();
  const auto noticed = std::chrono::steady_clock::now() - fenced_at;
  ASSERT_TRUE(holder.wait_for_err("acquired worker", seconds(5))) << holder.err();
  RecordProperty("fence_to_lost_ms",
                 static_cast<int>(std::chrono::duration_cast<milliseconds>(noticed).count()));
  EXPECT_LT(noticed, seconds(1));

  const Issued after = request_one(holder);
  EXPECT_NE(after.worker, w);
  const nlohmann::json workers = list_json(state);
  EXPECT_NE(record_of(workers, w)["state"], "held");
  EXPECT_EQ(record_of(workers, after.worker)["state"], "held");
  EXPECT_EQ(record_of(workers, after.worker)["holder"]["pid"], holder.pid());
  EXPECT_EQ(holder.finish().exit_code, 0);
}

TEST(Workers, FencingAnIdNobodyHoldsFailsWithOneLine) {
  TempDir state;
  const CliResult r = run_cli({"workers", "fence", "0", "5", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  EXPECT_NE(r.err.find("not held"), std::string::npos) << r.err;
}

TEST(Workers, FenceRefusesWorkersOutsideTheLayout) {
  TempDir state;
  for (const std::vector<std::string>& w : std::vector<std::vector<std::string>>{
           {"4", "0"}, {"0", "256"}, {"x", "1"}, {"0", "-1"}, {"0"}}) {
    std::vector<std::string> args = {"workers", "fence", "--state-dir", state.path()};
    args.insert(args.end(), w.begin(), w.end());
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(w) << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(is_one_line_error(r.err)) << r.err;
  }
}

// ---- etcd settings ----

TEST(Etcd, UnreachableEtcdFailsWithOneClearLineAndNoIds) {
  TempDir state;
  const std::string url = "http://127.0.0.1:" + std::to_string(unused_port());
  const CliResult flag = run_cli({"next", "-n", "5", "--etcd", url, "--state-dir", state.path()});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_EQ(flag.out, "");
  EXPECT_TRUE(is_one_line_error(flag.err)) << flag.err;
  EXPECT_NE(flag.err.find("etcd"), std::string::npos) << flag.err;
  EXPECT_NE(flag.err.find(url), std::string::npos) << flag.err;

  CliRun env;
  env.args = {"next", "--state-dir", state.path()};
  env.env = {{"SNOWID_ETCD_ENDPOINTS", url}};
  const CliResult from_env = run_cli(env);
  EXPECT_EQ(from_env.exit_code, 1);
  EXPECT_EQ(from_env.out, "");
  EXPECT_TRUE(is_one_line_error(from_env.err)) << from_env.err;

  for (const std::string sub : {"list", "fence"}) {
    std::vector<std::string> args = {"workers", sub, "--etcd", url};
    if (sub == "fence") args.insert(args.end(), {"0", "1"});
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << sub << ": " << r.err;
    EXPECT_EQ(r.out, "") << sub;
    EXPECT_TRUE(is_one_line_error(r.err)) << sub << ": " << r.err;
  }
  // Nothing was leased from the file registry instead.
  EXPECT_TRUE(list_json(state).empty());
}

TEST(Workers, TheStoreRecordCommandsNeedEtcd) {
  TempDir state;
  for (const char* sub : {"init", "restored"}) {
    const CliResult r = run_cli({"workers", sub, "--state-dir", state.path()});
    EXPECT_EQ(r.exit_code, 1) << sub << ": " << r.err;
    EXPECT_NE(r.err.find("only etcd keeps a store record"), std::string::npos) << r.err;
    EXPECT_TRUE(is_one_line_error(r.err)) << sub << ": " << r.err;
  }
  // And an unreachable etcd is one clear line, as for every command.
  const CliResult r =
      run_cli({"workers", "restored", "--etcd", "http://127.0.0.1:9", "--state-dir", state.path()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cannot reach etcd at http://127.0.0.1:9"), std::string::npos) << r.err;
}

TEST(Etcd, MalformedEndpointsAreUsageErrors) {
  TempDir state;
  for (const std::string endpoints : {"localhost:2379", "ftp://x:1", "http://", "http://a:1,"}) {
    const CliResult r = run_cli({"next", "--etcd", endpoints, "--state-dir", state.path()});
    EXPECT_EQ(r.exit_code, 2) << endpoints << ": " << r.err;
    EXPECT_EQ(r.out, "") << endpoints;
    EXPECT_TRUE(is_one_line_error(r.err)) << endpoints << ": " << r.err;
  }
}

}  // namespace
}  // namespace snowid::cli::testing
