// The named sequences of the real snowidd over its real sockets: the default
// ticket table (an SQLite file in the state directory), the RESP commands
// through redis-cli and the harness's client, the HTTP routes, unknown
// names, restarts (SIGTERM and SIGKILL) that never repeat a number, two
// daemons drawing from one SQLite file, sequences off, and the start with a
// PostgreSQL that is down or a store that cannot be opened.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The numbers of a NEXTSEQ reply (a bulk string of digits, or an array of
// them) or of a SEQRANGE reply ([start, end): every number of the range);
// nullopt for anything else.
std::optional<std::vector<std::int64_t>> numbers_of(const RespValue& r, bool range = false) {
  std::vector<std::int64_t> out;
  if (r.type == RespValue::Type::kBulk && !range) {
    const std::optional<std::int64_t> n = wide_value(r);
    if (!n) return std::nullopt;
    return std::vector<std::int64_t>{*n};
  }
  if (r.type != RespValue::Type::kArray) return std::nullopt;
  for (const RespValue& e : r.elems) {
    const std::optional<std::int64_t> n = wide_value(e);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  if (!range) return out;
  if (out.size() != 2 || out[1] <= out[0]) return std::nullopt;
  std::vector<std::int64_t> all;
  for (std::int64_t n = out[0]; n < out[1]; ++n) all.push_back(n);
  return all;
}

::testing::AssertionResult is_error(const std::optional<RespValue>& r, const std::string& word) {
  if (!r) return ::testing::AssertionFailure() << "no reply";
  if (!r->is_error() || r->error_word() != word) {
    return ::testing::AssertionFailure() << "expected -" << word << ", got " << r->debug();
  }
  return ::testing::AssertionSuccess();
}

// Draws from `name` over `c` until `stop` or an error: NEXTSEQ with counts
// 1 to 3 and now and then a SEQRANGE. Every number received goes to `out`;
// the first unexpected reply to `problem` (a closed connection is not one).
void draw(RespConn& c, const std::string& name, int rounds, const std::atomic<bool>* stop,
          std::vector<std::int64_t>& out, std::string& problem) {
  for (int i = 0; i < rounds && (stop == nullptr || !stop->load()); ++i) {
    const bool range = i % 9 == 8;
    const std::optional<RespValue> r =
        range ? c.command({"SEQRANGE", name, "4"})
              : c.command({"NEXTSEQ", name, std::to_string(1 + i % 3)});
    if (!r) {
      if (!c.closed()) problem = "no reply";
      return;
    }
    const auto got = numbers_of(*r, range);
    if (!got) {
      problem = "reply " + std::to_string(i) + ": " + r->debug();
      return;
    }
    out.insert(out.end(), got->begin(), got->end());
  }
}

TEST(Sequences, TheDefaultTableIsAnSqliteFileInTheStateDirServedOverResp) {
  ASSERT_TRUE(redis_cli_available());
  DaemonDir dir;
  auto d = dir.start_ready();
  const auto store = d->wait_for("sequence store", seconds(1));
  ASSERT_TRUE(store.has_value());
  EXPECT_EQ(store->value("kind", ""), "sqlite");
  EXPECT_EQ(store->value("url", ""), "sqlite:" + dir.state_dir() + "/sequences.db");
  EXPECT_TRUE(file_exists(dir.state_dir() + "/sequences.db"));

  ProcessResult created = redis_cli(dir.socket(), {"SEQCREATE", "orders", "1001", "10"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out, "OK\n");
  EXPECT_EQ(redis_cli(dir.socket(), {"NEXTSEQ", "orders"}).out, "1001\n");
  EXPECT_EQ(redis_cli(dir.socket(), {"NEXTSEQ", "orders", "3"}).out, "1002\n1003\n1004\n");
  const ProcessResult ghost = redis_cli(dir.socket(), {"NEXTSEQ", "ghost"});
  EXPECT_NE(ghost.out.find("NOT_FOUND sequence 'ghost' does not exist (create it with SEQCREATE)"),
            std::string::npos)
      << ghost.out;

  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto next = c->command({"NEXTSEQ", "orders"});
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->debug(), "\"1005\"") << "a bulk string, as ids are";
  const auto range = c->command({"SEQRANGE", "orders", "100"});
  ASSERT_TRUE(range.has_value());
  const auto in_range = numbers_of(*range, true);
  ASSERT_TRUE(in_range.has_value()) << range->debug();
  EXPECT_EQ(in_range->size(), 100u);
  EXPECT_GE(in_range->front(), 1011) << "after the buffer's range";
  EXPECT_TRUE(is_error(c->command({"SEQCREATE", "orders", "1"}), "ALREADY_EXISTS"));
  EXPECT_TRUE(is_error(c->command({"SEQINFO", "ghost"}), "NOT_FOUND"));
  EXPECT_TRUE(is_error(c->command({"NEXTSEQ", "bad name"}), "INVALID_ARGUMENT"));
  EXPECT_TRUE(is_error(c->command({"NEXTSEQ", "orders", "0"}), "ERR"));

  ASSERT_TRUE(c->command({"HELLO", "3"}).has_value());
  const auto info = c->command({"SEQINFO", "orders"});
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->type, RespValue::Type::kMap) << info->debug();
  ASSERT_NE(info->field("next_value"), nullptr);
  EXPECT_EQ(wide_value(*info->field("next_value")), in_range->back() + 1);
  ASSERT_NE(info->field("numbers_issued"), nullptr) << "this daemon buffers it";
  EXPECT_EQ(info->field("numbers_issued")->integer, 5);
  const auto list = c->command({"SEQLIST"});
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->debug(), "[\"orders\"]") << list->debug();

  const auto text = c->command({"INFO", "sequences"});
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->str.find("sequences_store:sqlite"), std::string::npos) << text->str;
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

TEST(Sequences, HttpCreatesInspectsListsAndServesNumbersAsStrings) {
  DaemonDir dir;
  auto d = dir.start_ready();
  const int port = d->http_port();
  auto h = HttpConn::connect(port);
  ASSERT_TRUE(h.has_value());

  auto created = h->request("PUT", "/v1/sequences/invoices?start=7&step=20");
  ASSERT_TRUE(created.has_value());
  EXPECT_EQ(created->status, 201) << created->body;
  EXPECT_EQ(created->header("location"), "/v1/sequences/invoices");
  json j = json::parse(created->body);
  EXPECT_EQ(j["sequence"], "invoices");
  EXPECT_EQ(j["next_value"], "7");
  EXPECT_EQ(j["step"], 20);
  EXPECT_TRUE(j["buffer"].is_null());
  auto again = h->request("PUT", "/v1/sequences/invoices");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->status, 409);
  EXPECT_EQ(json::parse(again->body)["error"], "ALREADY_EXISTS");

  auto next = h->get("/v1/sequences/invoices/next?count=3");
  ASSERT_TRUE(next.has_value());
  ASSERT_EQ(next->status, 200) << next->body;
  EXPECT_EQ(next->body, R"({"sequence":"invoices","numbers":["7","8","9"]})");
  auto range = h->get("/v1/sequences/invoices/range?size=50");
  ASSERT_TRUE(range.has_value());
  ASSERT_EQ(range->status, 200) << range->body;
  j = json::parse(range->body);
  EXPECT_EQ(j["size"], 50);
  EXPECT_EQ(std::stoll(j["end"].get<std::string>()) - std::stoll(j["start"].get<std::string>()),
            50);
  EXPECT_GE(std::stoll(j["start"].get<std::string>()), 27) << "after the buffer's range";

  auto info = h->get("/v1/sequences/invoices");
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->status, 200);
  j = json::parse(info->body);
  ASSERT_TRUE(j["buffer"].is_object()) << info->body;
  EXPECT_EQ(j["buffer"]["numbers_issued"], 3);
  auto list = h->get("/v1/sequences");
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(list->body, R"({"sequences":["invoices"]})");

  auto ghost = h->get("/v1/sequences/ghost/next");
  ASSERT_TRUE(ghost.has_value());
  EXPECT_EQ(ghost->status, 404);
  j = json::parse(ghost->body);
  EXPECT_EQ(j["error"], "NOT_FOUND");
  EXPECT_NE(j["message"].get<std::string>().find("PUT /v1/sequences/ghost"), std::string::npos);
  auto head = h->request("HEAD", "/v1/sequences/invoices/next");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->status, 405);
  EXPECT_EQ(head->header("allow"), "GET");

  auto metrics = h->get("/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->body.find("snowid_sequence_numbers_issued_total{sequence=\"invoices\"} 3\n"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("snowid_sequence_ranges_served_total{sequence=\"invoices\"} 1\n"),
            std::string::npos);
  d->signal(SIGTERM);
  EXPECT_EQ(d->wait_exit(seconds(30)), 0);
}

// The request that once created "orders" with start 1 and step 1000: the
// body is what counts.
TEST(Sequences, HttpPutTakesStartAndStepFromAJsonBody) {
  DaemonDir dir;
  auto d = dir.start_ready();
  auto h = HttpConn::connect(d->http_port());
  ASSERT_TRUE(h.has_value());
  const auto put = [&](const std::string& target, const std::string& type,
                       const std::string& body) {
    EXPECT_TRUE(
        h->send_raw("PUT " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
    return h->read_reply();
  };
  auto created = put("/v1/sequences/orders", "application/json", R"({"start":1000,"step":100})");
  ASSERT_TRUE(created.has_value());
  ASSERT_EQ(created->status, 201) << created->body;
  json j = json::parse(created->body);
  EXPECT_EQ(j["next_value"], "1000");
  EXPECT_EQ(j["step"], 100);

  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto next = c->command({"NEXTSEQ", "orders"});
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(numbers_of(*next), (std::vector<std::int64_t>{1000})) << next->debug();
  auto info = h->get("/v1/sequences/orders");
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(json::parse(info->body)["step"], 100) << info->body;

  // Above 2^53 as a decimal string, with a charset.
  auto big = put("/v1/sequences/big", "application/json; charset=utf-8",
                 R"({"start":"9007199254740993"})");
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->status, 201) << big->body;
  const auto first_big = c->command({"NEXTSEQ", "big"});
  ASSERT_TRUE(first_big.has_value());
  EXPECT_EQ(numbers_of(*first_big), (std::vector<std::int64_t>{9007199254740993}))
      << first_big->debug();

  // Refused, and nothing made.
  auto form = put("/v1/sequences/nope", "application/x-www-form-urlencoded", "start=5");
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->status, 415) << form->body;
  EXPECT_EQ(json::parse(form->body)["error"], "UNSUPPORTED_MEDIA_TYPE");
  for (const std::string body : {R"({"start":5,"start":6})", R"({"start":5,"colour":1})",
                                 R"({"start":5.5})", R"({"start":5)", R"([5])"}) {
    SCOPED_TRACE(body);
    auto bad = put("/v1/sequences/nope", "application/json", body);
    ASSERT_TRUE(bad.has_value());
    EXPECT_EQ(bad->status, 400) << bad->body;
    EXPECT_EQ(json::parse(bad->body)["error"], "INVALID_ARGUMENT") << bad->body;
  }
  auto both = put("/v1/sequences/nope?start=5", "application/json", R"({"start":6})");
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->status, 400) << both->body;
  auto missing = h->get("/v1/sequences/nope");
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->status, 404) << missing->body;
}

TEST(Sequences, ARestartContinuesAboveEveryNumberSeenLosingAtMostTheBufferedRanges) {
  DaemonDir dir;
  constexpr std::int64_t kStep = 100;
  std::vector<std::int64_t> before;
  {
    auto d = dir.start_ready();
    auto c = RespConn::connect_unix(dir.socket());
    ASSERT_TRUE(c.has_value());
    ASSERT_EQ(c->command({"SEQCREATE", "orders", "1", std::to_string(kStep)})->debug(), "+OK");
    std::string problem;
    draw(*c, "orders", 300, nullptr, before, problem);
    ASSERT_EQ(problem, "");
    d->signal(SIGTERM);
    ASSERT_EQ(d->wait_exit(seconds(30)), 0);
    EXPECT_TRUE(d->wait_for("stopped", seconds(1)).has_value());
  }
  ASSERT_FALSE(before.empty());
  const std::int64_t max_seen = *std::max_element(before.begin(), before.end());

  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto next = c->command({"NEXTSEQ", "orders"});
  ASSERT_TRUE(next.has_value());
  const std::optional<std::int64_t> number = wide_value(*next);
  ASSERT_TRUE(number.has_value()) << next->debug();
  EXPECT_GT(*number, max_seen) << "a number handed out before the restart";
  // The gap is what the buffers held: the rest of the current range and at
  // most one range beyond it.
  EXPECT_LE(*number, max_seen + 2 * kStep);
}

TEST(Sequences, TwoDaemonsSharingOneSqliteFileNeverHandOutTheSameNumber) {
  DaemonDir first;
  DaemonDir second;
  const std::string shared = "sqlite:" + first.file("shared.db");
  auto a = first.start_ready({"--sequences", shared});
  auto b = second.start_ready({"--sequences", shared});
  auto ca = RespConn::connect_unix(first.socket());
  auto cb = RespConn::connect_unix(second.socket());
  ASSERT_TRUE(ca.has_value() && cb.has_value());
  // Small ranges: the two daemons take from the table all the time.
  ASSERT_EQ(ca->command({"SEQCREATE", "shared", "1", "10"})->debug(), "+OK");
  EXPECT_TRUE(is_error(cb->command({"SEQCREATE", "shared", "1"}), "ALREADY_EXISTS"))
      << "the second daemon sees the same table";

  std::vector<std::int64_t> from_a, from_b;
  std::string problem_a, problem_b;
  std::thread ta([&] { draw(*ca, "shared", 600, nullptr, from_a, problem_a); });
  std::thread tb([&] { draw(*cb, "shared", 600, nullptr, from_b, problem_b); });
  ta.join();
  tb.join();
  EXPECT_EQ(problem_a, "");
  EXPECT_EQ(problem_b, "");
  std::set<std::int64_t> all(from_a.begin(), from_a.end());
  all.insert(from_b.begin(), from_b.end());
  EXPECT_EQ(all.size(), from_a.size() + from_b.size()) << "a number handed out twice";
  EXPECT_GT(from_a.size(), 600u);
  EXPECT_GT(from_b.size(), 600u);
}

TEST(Sequences, SigkillMidTrafficThenRestartRepeatsNoNumber) {
  DaemonDir dir;
  std::vector<std::int64_t> before;
  {
    auto d = dir.start_ready();
    auto setup = RespConn::connect_unix(dir.socket());
    ASSERT_TRUE(setup.has_value());
    ASSERT_EQ(setup->command({"SEQCREATE", "orders", "1", "50"})->debug(), "+OK");
    constexpr int kClients = 2;
    std::vector<std::vector<std::int64_t>> got(kClients);
    std::vector<std::string> problems(kClients);
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> progress{0};
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        auto c = RespConn::connect_unix(dir.socket());
        if (!c) return;
        // Many short draws, so that progress shows while the daemon runs.
        while (!stop.load() && problems[i].empty() && !c->closed()) {
          const std::size_t had = got[i].size();
          draw(*c, "orders", 30, &stop, got[i], problems[i]);
          progress.fetch_add(got[i].size() - had);
        }
      });
    }
    const auto until = std::chrono::steady_clock::now() + seconds(30);
    while (progress.load() < 3000 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(milliseconds(2));
    }
    EXPECT_GE(progress.load(), 3000u) << "the clients did not get going";
    d->signal(SIGKILL);
    EXPECT_EQ(d->wait_exit(seconds(30)), -SIGKILL);
    stop = true;
    for (std::thread& t : clients) t.join();
    for (int i = 0; i < kClients; ++i) {
      EXPECT_TRUE(problems[i].empty() || problems[i] == "no reply") << problems[i];
      before.insert(before.end(), got[i].begin(), got[i].end());
    }
  }
  const std::set<std::int64_t> seen(before.begin(), before.end());
  ASSERT_EQ(seen.size(), before.size()) << "a number handed out twice before the kill";

  auto d = dir.start_ready();
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  std::vector<std::int64_t> after;
  std::string problem;
  draw(*c, "orders", 300, nullptr, after, problem);
  EXPECT_EQ(problem, "");
  ASSERT_FALSE(after.empty());
  for (std::int64_t n : after) {
    ASSERT_EQ(seen.count(n), 0u) << n << " was handed out before the kill";
  }
  EXPECT_GT(*std::min_element(after.begin(), after.end()), *seen.rbegin());
}

TEST(Sequences, WithSequencesOffBothProtocolsSaySoAndIdsAreServed) {
  DaemonDir dir;
  auto d = dir.start_ready({"--sequences", "off"});
  const auto store = d->wait_for("sequence store", seconds(1));
  ASSERT_TRUE(store.has_value());
  EXPECT_EQ(store->value("kind", ""), "off");
  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto r = c->command({"NEXTSEQ", "orders"});
  EXPECT_TRUE(is_error(r, "SEQUENCES_OFF"));
  EXPECT_NE(r->str.find("sequences = off"), std::string::npos) << r->str;
  EXPECT_TRUE(is_error(c->command({"SEQCREATE", "orders", "1"}), "SEQUENCES_OFF"));
  EXPECT_TRUE(ids_of(*c->command({"NEXTID"})).has_value());
  auto h = http_get(d->http_port(), "/v1/sequences/orders/next");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->status, 404);
  EXPECT_EQ(json::parse(h->body)["error"], "SEQUENCES_OFF");
  EXPECT_FALSE(file_exists(dir.state_dir() + "/sequences.db"));
}

TEST(Sequences, APostgresqlThatIsDownIsNoStartFailureAndAnswersUnavailable) {
  DaemonDir dir;
  // Nothing listens on port 1: every connection is refused at once.
  auto d = dir.start_ready(
      {"--sequences", "postgresql://snowid:hunter2@127.0.0.1:1/snowid?connect_timeout=2"});
  const auto store = d->wait_for("sequence store", seconds(1));
  ASSERT_TRUE(store.has_value());
  EXPECT_EQ(store->value("kind", ""), "postgresql");
  EXPECT_EQ(store->value("connected", ""), "on first use");
  EXPECT_EQ(d->raw_text().find("hunter2"), std::string::npos) << "the password is never logged";

  auto c = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(c.has_value());
  const auto r = c->command({"NEXTSEQ", "orders"});
  EXPECT_TRUE(is_error(r, "UNAVAILABLE"));
  EXPECT_NE(r->str.find("retry after"), std::string::npos) << r->str;
  auto h = http_get(d->http_port(), "/v1/sequences/orders/range?size=5");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->status, 503) << h->body;
  EXPECT_FALSE(h->header("retry-after").empty());
  const auto info = c->command({"INFO", "sequences"});
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->str.find("hunter2"), std::string::npos) << info->str;
  EXPECT_TRUE(ids_of(*c->command({"NEXTID"})).has_value()) << "ids are served regardless";
}

TEST(Sequences, AStoreThatCannotBeOpenedFailsTheStartAndAMalformedUrlIsAConfigurationError) {
  DaemonDir dir;
  auto missing = dir.start({"--sequences", "sqlite:" + dir.file("no/such/dir/seq.db")});
  EXPECT_EQ(missing->wait_exit(seconds(30)), 1);
  const auto failed = missing->wait_for("start failed", seconds(1));
  ASSERT_TRUE(failed.has_value()) << missing->raw_text();
  EXPECT_NE(failed->value("error", "").find("sequences"), std::string::npos) << failed->dump();

  auto malformed = dir.start({"--sequences", "postgresql://%zz"});
  EXPECT_EQ(malformed->wait_exit(seconds(30)), 2) << malformed->raw_text();
}

}  // namespace
}  // namespace snowid::daemon_test
