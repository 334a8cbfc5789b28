// A client process killed with SIGKILL in the middle of a range leaves only
// a gap: the numbers it wrote are below the table's next_value, and a new
// client starts at next_value, so none of its numbers is one the killed
// client handed out, and what lies between is exactly the killed client's
// unissued remainder.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "client_process.h"
#include "number_checks.h"
#include "scenario_database.h"

namespace snowid::sequence_scenarios {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kStart = 1000;
constexpr std::int64_t kStep = 100'000;

std::vector<std::string> client_args(const std::string& url, std::int64_t count, double rate) {
  return {"--store",    url,
          "--sequence", "tickets",
          "--count",    std::to_string(count),
          "--step",     std::to_string(kStep),
          "--rate",     std::to_string(rate),
          "--flush",    "500"};
}

TEST_P(SequenceScenario, KilledClientLeavesOnlyAGap) {
  ASSERT_TRUE(store_->create("tickets", kStart, kStep).is_ok());

  // 20,000 a second: the first range lasts 5 s, and its refill is due after
  // 80,000 numbers (4 s). The kill comes after 10,000, mid-range.
  ClientProcess killed(SNOWID_SEQUENCE_CLIENT_PATH, client_args(db_->url(), 0, 20'000));
  ASSERT_EQ(killed.start_error(), "");
  ASSERT_TRUE(killed.wait_for_numbers(10'000, 60s)) << killed.err_text();
  killed.signal(SIGKILL);
  ASSERT_EQ(killed.wait_exit(30s), std::optional<int>(-SIGKILL)) << killed.err_text();
  const std::vector<std::int64_t> written = killed.numbers();
  EXPECT_TRUE(killed.bad_lines().empty());
  ASSERT_GE(written.size(), 10'000u);

  Result<SequenceInfo> after_kill = store_->get("tickets");
  ASSERT_TRUE(after_kill.is_ok()) << after_kill.status().to_string();
  const std::int64_t next_value = after_kill->next_value;
  // One taker so far: it wrote a prefix of what it took, in order.
  for (std::size_t i = 0; i < written.size(); ++i) {
    ASSERT_EQ(written[i], kStart + static_cast<std::int64_t>(i)) << "line " << i;
  }
  EXPECT_LT(written.back(), next_value);

  ClientProcess next(SNOWID_SEQUENCE_CLIENT_PATH, client_args(db_->url(), 5000, 0));
  ASSERT_EQ(next.wait_exit(60s), std::optional<int>(0)) << next.err_text();
  const std::vector<std::int64_t> fresh = next.numbers();
  ASSERT_EQ(fresh.size(), 5000u);

  const std::set<std::int64_t> old(written.begin(), written.end());
  for (const std::int64_t n : fresh) {
    ASSERT_EQ(old.count(n), 0u) << n << " was handed out by the killed client";
  }
  // The new client starts where the table stood after the kill (or later,
  // had a take the killed client sent committed after it died): the gap is
  // what the killed client had taken and not handed out.
  EXPECT_GE(fresh.front(), next_value);
  EXPECT_EQ((fresh.front() - kStart) % kStep, 0) << "the gap is whole ranges less what was written";
  const std::int64_t gap = fresh.front() - (written.back() + 1);
  report_figure("sigkill.gap",
                std::to_string(written.size()) + " numbers written before SIGKILL; " +
                    std::to_string((fresh.front() - kStart) / kStep) + " range(s) of " +
                    std::to_string(kStep) + " taken; gap of " + std::to_string(gap) +
                    " numbers (the killed client's unissued remainder, " +
                    (killed.unterminated().empty() ? std::string("no cut-short line")
                                                   : "a cut-short last line") +
                    "); the next client starts at " + std::to_string(fresh.front()));
}

}  // namespace
}  // namespace snowid::sequence_scenarios
