// Black-box tests of `snowid next` and `snowid workers` against a real etcd,
// started by the test on free loopback ports (etcd_cluster.h).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli_runner.h"
#include "snowid/id_text.h"
#include "snowid/layout.h"
#include "testing/etcd_cluster.h"

namespace snowid::cli::testing {
namespace {

using etcd::testing::EtcdCluster;
using std::chrono::milliseconds;
using std::chrono::seconds;

WorkerId worker_of(const std::string& line) {
  Result<std::uint64_t> id = parse_id(line);
  EXPECT_TRUE(id.is_ok()) << "not an id: \"" << line << "\"";
  if (!id.is_ok()) return {};
  Result<DecodedId> d = Layout::snowid_default().decode(id.value());
  if (!d.is_ok()) return {};
  return {static_cast<std::uint32_t>(d->values[1]), static_cast<std::uint32_t>(d->values[2])};
}

std::string worker_text(WorkerId w) {
  return std::to_string(w.region) + "/" + std::to_string(w.host);
}

class EtcdCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<EtcdCluster>> started = EtcdCluster::start();
    ASSERT_TRUE(started.is_ok()) << started.status().to_string();
    cluster_ = std::move(started).value();
    ASSERT_TRUE(cluster_->initialize_namespace("cli").is_ok());
  }

  // Runs with etcd given through SNOWID_ETCD_ENDPOINTS and a private state
  // directory (for the time fences).
  CliRun with_etcd(std::vector<std::string> args) const {
    CliRun run;
    run.args = std::move(args);
    run.args.insert(run.args.end(), {"--state-dir", state_.path(), "--etcd-cluster", "cli"});
    std::string endpoints;
    for (const std::string& e : cluster_->endpoints()) {
      endpoints += (endpoints.empty() ? "" : ",") + e;
    }
    run.env = {{"SNOWID_ETCD_ENDPOINTS", endpoints}};
    return run;
  }

  nlohmann::json list() const {
    const CliResult r = run_cli(with_etcd({"workers", "list", "--json"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out;
    return doc.is_discarded() ? nlohmann::json::array() : doc["workers"];
  }

  static nlohmann::json record_of(const nlohmann::json& workers, WorkerId w) {
    for (const nlohmann::json& r : workers) {
      if (r["region"] == w.region && r["host"] == w.host) return r;
    }
    return nullptr;
  }

  TempDir state_;
  std::unique_ptr<EtcdCluster> cluster_;
};

TEST_F(EtcdCliTest, ConcurrentRunsLeaseDifferentIdsAndListShowsTheirHolders) {
  CliProcess a(with_etcd({"next", "--follow", "--region", "1"}));
  CliProcess b(with_etcd({"next", "--follow", "--region", "1"}));
  ASSERT_TRUE(a.write("\n"));
  ASSERT_TRUE(b.write("\n"));
  const std::optional<std::string> from_a = a.read_line(seconds(30));
  const std::optional<std::string> from_b = b.read_line(seconds(30));
  ASSERT_TRUE(from_a && from_b) << a.err() << b.err();
  const WorkerId wa = worker_of(*from_a), wb = worker_of(*from_b);
  EXPECT_EQ(wa.region, 1u);
  EXPECT_EQ(wb.region, 1u);
  EXPECT_NE(wa, wb);

  const nlohmann::json workers = list();
  for (const auto& [w, pid] : {std::pair{wa, a.pid()}, std::pair{wb, b.pid()}}) {
    const nlohmann::json rec = record_of(workers, w);
    ASSERT_FALSE(rec.is_null()) << worker_text(w) << " not listed: " << workers.dump();
    EXPECT_EQ(rec["state"], "held");
    EXPECT_EQ(rec["holder"]["pid"], pid);
    EXPECT_TRUE(rec["ttl_left_ms"].is_number()) << rec.dump();
  }
  EXPECT_EQ(a.finish().exit_code, 0);
  EXPECT_EQ(b.finish().exit_code, 0);
  // Released: no longer held.
  EXPECT_NE(record_of(list(), wa)["state"], "held");
}

TEST_F(EtcdCliTest, InitDeclaresANewNamespaceOnceAndRestoredMakesTheNextRunWait) {
  // SetUp initialized "cli": a second init changes nothing and says so.
  const CliResult again = run_cli(with_etcd({"workers", "init"}));
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("already has a store record"), std::string::npos) << again.err;
  CliRun other = with_etcd({"workers", "init"});
  other.args.back() = "cli-other";  // the --etcd-cluster value
  const CliResult fresh = run_cli(other);
  EXPECT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_NE(fresh.out.find("initialized the namespace"), std::string::npos) << fresh.out;

  const auto before = std::chrono::system_clock::now();
  const CliResult declared = run_cli(with_etcd({"workers", "restored", "--in-flight-ms", "1500"}));
  ASSERT_EQ(declared.exit_code, 0) << declared.err;
  EXPECT_NE(declared.out.find("every worker id now counts as used until"), std::string::npos)
      << declared.out;
  // The next id comes only once the declared instant is past.
  const CliResult next = run_cli(with_etcd({"next"}));
  ASSERT_EQ(next.exit_code, 0) << next.err;
  const auto after = std::chrono::system_clock::now();
  EXPECT_GE(after - before, std::chrono::milliseconds(1500));

  EXPECT_EQ(run_cli(with_etcd({"workers", "restored", "--in-flight-ms", "soon"})).exit_code, 2);
  EXPECT_EQ(run_cli(with_etcd({"workers", "restored", "--in-flight-ms", "3600001"})).exit_code, 2);
}

TEST_F(EtcdCliTest, FenceFromTheCliStopsTheHolderWhichLeasesAnotherId) {
  CliProcess holder(with_etcd({"next", "--follow"}));
  ASSERT_TRUE(holder.write("\n"));
  const std::optional<std::string> first = holder.read_line(seconds(30));
  ASSERT_TRUE(first) << holder.err();
  const WorkerId w = worker_of(*first);

  const auto start = std::chrono::steady_clock::now();
  const CliResult fence =
      run_cli(with_etcd({"workers", "fence", std::to_string(w.region), std::to_string(w.host)}));
  ASSERT_EQ(fence.exit_code, 0) << fence.err;
  EXPECT_NE(fence.out.find("fenced worker " + worker_text(w)), std::string::npos) << fence.out;
  ASSERT_TRUE(holder.wait_for_err("lease lost on worker " + worker_text(w), seconds(5)))
      << holder.err();
  const auto noticed = std::chrono::steady_clock::now() - start;
  RecordProperty("fence_to_lost_ms",
                 static_cast<int>(std::chrono::duration_cast<milliseconds>(noticed).count()));
  EXPECT_LT(noticed, seconds(1));
  ASSERT_TRUE(holder.wait_for_err("acquired worker", seconds(10))) << holder.err();

  ASSERT_TRUE(holder.write("\n"));
  const std::optional<std::string> after = holder.read_line(seconds(30));
  ASSERT_TRUE(after) << holder.err();
  EXPECT_NE(worker_of(*after), w);
  EXPECT_EQ(holder.finish().exit_code, 0);

  // Fencing it again: nobody holds it.
  const CliResult again =
      run_cli(with_etcd({"workers", "fence", std::to_string(w.region), std::to_string(w.host)}));
  EXPECT_EQ(again.exit_code, 1) << again.err;
  EXPECT_TRUE(is_one_line_error(again.err)) << again.err;
}

}  // namespace
}  // namespace snowid::cli::testing
