// Every row of the stats list appears in INFO and in /metrics, so the two
// cannot differ; and each family is declared once.
#include "stats.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "metrics.h"
#include "resp_session.h"
#include "resp_test_support.h"
#include "service_test_support.h"

namespace snowid::daemon {
namespace {

using test_support::cmd;
using test_support::read_one;
using test_support::talk;
using test_support::TestService;

TEST(Stats, EveryRowIsInInfoAndInMetrics) {
  TestService svc;
  RespSession s(*svc.service, RespSessionOptions{});
  ASSERT_EQ(read_one(talk(s, cmd({"NEXTIDS", "3"}))).items.size(), 3u);
  const std::string info = read_one(talk(s, cmd({"INFO"}))).text;
  const ServerCounters server;
  const std::string metrics = render_metrics(svc.service->snapshot(), server);
  std::set<std::string> keys;
  std::set<std::string> series;
  for (const StatRow& row : service_stats()) {
    SCOPED_TRACE(std::string(row.info));
    EXPECT_TRUE(keys.insert(std::string(row.info)).second) << "one INFO key per row";
    const std::size_t section = info.find("# " + std::string(row.section) + "\r\n");
    ASSERT_NE(section, std::string::npos) << info;
    const std::size_t line = info.find("\r\n" + std::string(row.info) + ":");
    EXPECT_NE(line, std::string::npos) << info;
    EXPECT_GT(line, section) << "in its section";
    std::string sample(row.metric);
    if (!row.label.empty()) {
      sample += "{" + std::string(row.label) + "=\"" + std::string(row.label_value) + "\"}";
    }
    EXPECT_TRUE(series.insert(sample).second) << "one series per row";
    EXPECT_NE(metrics.find("\n" + sample + " "), std::string::npos) << sample << " in\n" << metrics;
    EXPECT_NE(metrics.find("# HELP " + std::string(row.metric) + " "), std::string::npos);
  }
  // The counters the list brought to the side that lacked them.
  EXPECT_NE(info.find("\r\nids_dropped:0\r\n"), std::string::npos) << info;
  EXPECT_NE(metrics.find("\nsnowid_decodes_total 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nsnowid_lease_losses_total 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nsnowid_requests_total{kind=\"batch\"} 1\n"), std::string::npos);
}

}  // namespace
}  // namespace snowid::daemon
