// The daemon's worker-id lease seen from outside: an operator fences the id
// with the snowid tool while clients are served.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(Lease, FencedWorkerIdIsReplacedByAFreshOneAndClientsSeeOnlyRetryableRefusals) {
  ASSERT_TRUE(kSnowidCli[0] != '\0') << "the snowid tool was not built (SNOWID_BUILD_TOOLS)";
  DaemonDir dir;
  auto d = dir.start_ready();
  const auto ready = d->wait_for("ready", seconds(1));
  ASSERT_TRUE(ready.has_value());
  const auto old_host = ready->value("host", 999u);
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto before = c->command({"NEXTIDS", "1000"});
  ASSERT_TRUE(before && ids_of(*before)) << (before ? before->debug() : "no reply");
  const std::size_t lines_before = d->line_count();

  const ProcessResult fence =
      run_process({kSnowidCli, "workers", "fence", "0", std::to_string(old_host), "--state-dir",
                   dir.state_dir()},
                  dir.env());
  ASSERT_EQ(fence.exit_code, 0) << fence.err;

  // Until the daemon holds a fresh id, refusals say so and nothing else.
  std::uint64_t fresh = 0;
  std::vector<std::string> refusals;
  const auto until = std::chrono::steady_clock::now() + seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    const auto r = c->command({"NEXTID"});
    ASSERT_TRUE(r.has_value());
    if (r->is_error()) {
      refusals.push_back(r->str);
      ASSERT_TRUE(r->error_word() == "LEASE_UNCERTAIN" || r->error_word() == "LEASE_LOST")
          << r->debug();
      if (r->error_word() == "LEASE_UNCERTAIN") {
        EXPECT_NE(r->str.find("retry after"), std::string::npos) << r->debug();
      }
      std::this_thread::sleep_for(milliseconds(5));
      continue;
    }
    const auto ids = ids_of(*r);
    ASSERT_TRUE(ids.has_value()) << r->debug();
    if (host_of(ids->front()) != old_host) {
      fresh = ids->front();
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  ASSERT_NE(fresh, 0u) << "no id from a fresh worker within 20 s; refusals: " << refusals.size();
  const std::uint32_t new_host = host_of(fresh);

  const auto lost = d->wait_for(
      [](const json& j) {
        return j.value("msg", "") == "lease event" &&
               j.value("event", "").find("lost") != std::string::npos;
      },
      seconds(5), lines_before);
  EXPECT_TRUE(lost.has_value()) << "no \"lease event\" for the loss";
  const auto acquired = d->wait_for(
      [&](const json& j) {
        return j.value("msg", "") == "lease event" &&
               j.value("event", "") == "acquired worker 0/" + std::to_string(new_host);
      },
      seconds(5), lines_before);
  EXPECT_TRUE(acquired.has_value()) << "no \"lease event\" for the new id";

  // Ready again, on the new id, over HTTP too.
  std::optional<HttpReply> readyz;
  const auto ready_until = std::chrono::steady_clock::now() + seconds(10);
  do {
    readyz = http_get(d->http_port(), "/readyz");
    ASSERT_TRUE(readyz.has_value());
  } while (readyz->status != 200 && std::chrono::steady_clock::now() < ready_until);
  EXPECT_EQ(readyz->status, 200) << readyz->body;
  const auto http_ids = http_get(d->http_port(), "/v1/ids?count=10");
  ASSERT_TRUE(http_ids.has_value());
  const auto ids = ids_of_json(http_ids->body);
  ASSERT_TRUE(ids.has_value()) << http_ids->body;
  EXPECT_EQ(host_of(ids->front()), new_host);
  const auto metrics = http_get(d->http_port(), "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_GE(metric_value(metrics->body, "snowid_lease_reacquisitions_total").value_or(0), 1)
      << metrics->body;

  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
  const auto released = d->wait_for("lease released", seconds(1), lines_before);
  ASSERT_TRUE(released.has_value());
  EXPECT_EQ(released->value("host", 999u), new_host) << "the id held at the end is released";
}

}  // namespace
}  // namespace snowid::daemon_test
