// The skew monitor in real daemons on a real etcd (docs/skew.md): each daemon
// has a wall clock of its own through libfaketime (offsets in seconds, read
// from a file on every clock read; the monotonic clock stays real), a host
// name of its own (--host-name) and a TCP RESP listener that its peers
// probe. The clocks that are not offset are the machine's, so "good" means
// within microseconds of each other.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "http_client.h"
#include "test_support.h"
#include "testing/etcd_cluster.h"

namespace snowid::daemon_test {
namespace {

using etcd::testing::EtcdCluster;
using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Steady = std::chrono::steady_clock;

std::string etcdctl() {
  const char* bin = std::getenv("SNOWID_ETCDCTL_BIN");
  return bin != nullptr && *bin != '\0' ? bin : "etcdctl";
}

// key -> value under `prefix`, read with etcdctl.
std::vector<std::pair<std::string, std::string>> read_prefix(const std::string& endpoint,
                                                             const std::string& prefix) {
  const ProcessResult r = run_process(
      {etcdctl(), "--endpoints=" + endpoint, "get", prefix, "--prefix"}, {{"ETCDCTL_API", "3"}});
  EXPECT_EQ(r.exit_code, 0) << "etcdctl (SNOWID_ETCDCTL_BIN, scripts/install-deps): " << r.err;
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(r.out);
  for (std::string key, value; std::getline(in, key) && std::getline(in, value);) {
    out.emplace_back(key, value);
  }
  return out;
}

// One daemon of the fleet: its directory, its clock file and its process.
struct Member {
  std::string name;
  DaemonDir dir;
  std::unique_ptr<DaemonProcess> proc;

  std::string clock_file() const { return dir.file("faketime.rc"); }
  void set_offset(const std::string& seconds_text) {
    write_file_atomically(clock_file(), seconds_text + "\n");
  }
  Env faketime_env() const {
    const char* asan = std::getenv("ASAN_OPTIONS");
    std::string asan_options = asan != nullptr && *asan != '\0' ? std::string(asan) + ":" : "";
    asan_options += "verify_asan_link_order=0";
    return {{"LD_PRELOAD", kLibfaketime},
            {"FAKETIME_TIMESTAMP_FILE", clock_file()},
            {"FAKETIME_NO_CACHE", "1"},
            {"FAKETIME_DONT_FAKE_MONOTONIC", "1"},
            {"ASAN_OPTIONS", asan_options}};
  }
  // The decision lines of its monitor so far.
  std::vector<json> decisions() const {
    static const std::set<std::string> kDecisions = {
        "skew self-fence", "skew fence",     "skew vote",         "skew vote withdrawn",
        "skew dry run",    "skew mass skew", "skew hold released"};
    std::vector<json> out;
    for (const json& line : proc->lines()) {
      if (kDecisions.count(line.value("msg", "")) != 0) out.push_back(line);
    }
    return out;
  }
};

class SkewMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(libfaketime_available());
    Result<std::unique_ptr<EtcdCluster>> c = EtcdCluster::start();
    ASSERT_TRUE(c.is_ok()) << c.status().to_string();
    etcd_ = std::move(c).value();
    ASSERT_TRUE(etcd_->initialize_namespace("default").is_ok());
  }

  // Starts `names.size()` daemons, member i with wall-clock offset
  // offsets[i] (seconds, "+0.3"), and waits until each is ready.
  void start_fleet(const std::vector<std::string>& names, const std::vector<std::string>& offsets,
                   const std::vector<std::string>& extra = {}) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      auto m = std::make_unique<Member>();
      m->name = names[i];
      m->set_offset(offsets[i]);
      std::vector<std::string> args = {
          "--registry",   "etcd",        "--etcd",        etcd_->endpoint(0),
          "--tcp",        "127.0.0.1:0", "--host-name",   names[i],
          "--lease-ttl",  "4s",          "--lease-renew", "1s",
          "--lease-stop", "3s"};
      args.insert(args.end(), extra.begin(), extra.end());
      m->proc = m->dir.start_ready(args, m->faketime_env());
      ASSERT_TRUE(m->proc->alive()) << names[i];
      members_.push_back(std::move(m));
    }
  }

  Member& member(const std::string& name) {
    for (auto& m : members_) {
      if (m->name == name) return *m;
    }
    ADD_FAILURE() << "no member " << name;
    return *members_.front();
  }

  // The hosts with a fence record in etcd.
  std::set<std::string> fenced_hosts() {
    std::set<std::string> out;
    for (const auto& [key, value] :
         read_prefix(etcd_->endpoint(0), "/snowid/default/skew/0/fences/")) {
      const json doc = json::parse(value, nullptr, false);
      EXPECT_FALSE(doc.is_discarded()) << key << ": " << value;
      if (!doc.is_discarded()) out.insert(doc.value("target", ""));
    }
    return out;
  }

  // NEXTID on the member's socket: the id, or the refusal's text.
  static std::string next_id(Member& m) {
    std::optional<RespConn> c = RespConn::connect_unix(m.dir.socket());
    if (!c) return "no connection";
    const auto r = c->command({"NEXTID"});
    if (!r) return "no reply";
    return r->type == RespValue::Type::kBulk ? "id" : r->debug();
  }

  std::unique_ptr<EtcdCluster> etcd_;
  std::vector<std::unique_ptr<Member>> members_;
};

// One host of three 300 ms ahead: it is fenced (by itself, by its two
// observers, or both) and held, refusing ids and taking no fresh worker id;
// the two good hosts are never fenced and never stop serving. Once its clock
// is back, it is let go and serves again.
TEST_F(SkewMonitorTest, OneHostOfThreeAheadIsFencedAndHeldTheOthersNever) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"});
  if (HasFatalFailure()) return;
  Member& bad = member("h3");
  const auto stepped = Steady::now();
  bad.set_offset("+0.3");

  std::optional<json> fence = bad.proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew self-fence"; }, seconds(30));
  ASSERT_TRUE(fence) << "h3 never fenced itself";
  const double to_fence_s = std::chrono::duration<double>(Steady::now() - stepped).count();
  const std::string why = fence->value("explanation", "");
  EXPECT_NE(why.find("target=h3"), std::string::npos) << why;
  EXPECT_NE(why.find("decision=self-fence"), std::string::npos) << why;

  // Held: refused at once, and not ready.
  std::string answer;
  for (int i = 0; i < 50 && (answer = next_id(bad)) == "id"; ++i) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_NE(answer.find("UNAVAILABLE"), std::string::npos) << answer;
  EXPECT_NE(answer.find("skew"), std::string::npos) << answer;
  std::optional<HttpConn> http = HttpConn::connect(bad.proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> ready = http->get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 503) << ready->body;
  EXPECT_NE(ready->body.find("skew monitor"), std::string::npos) << ready->body;

  // Through several more rounds: the good hosts serve and are never fenced;
  // the held host takes no fresh id (its holder key stays gone).
  for (int round = 0; round < 6; ++round) {
    std::this_thread::sleep_for(seconds(1));
    for (const char* good : {"h1", "h2"}) {
      EXPECT_EQ(next_id(member(good)), "id") << good << " refused in round " << round;
    }
    EXPECT_NE(next_id(bad), "id") << "the held host issued in round " << round;
  }
  const std::set<std::string> fenced = fenced_hosts();
  EXPECT_EQ(fenced.count("h1"), 0u);
  EXPECT_EQ(fenced.count("h2"), 0u);
  EXPECT_EQ(fenced.count("h3"), 1u) << "the fence is recorded in etcd";
  int h3_holders = 0;
  for (const auto& [key, value] : read_prefix(etcd_->endpoint(0), "/snowid/default/workers/0/")) {
    if (key.ends_with("/holder") && value.find("\"h3\"") != std::string::npos) ++h3_holders;
  }
  EXPECT_EQ(h3_holders, 0) << "a held host takes no fresh worker id";
  for (const char* good : {"h1", "h2"}) {
    for (const json& d : member(good).decisions()) {
      const std::string msg = d.value("msg", "");
      EXPECT_NE(msg, "skew self-fence") << good << ": " << d.dump();
      if (msg == "skew vote" || msg == "skew fence") {
        EXPECT_NE(d.value("explanation", "").find("target=h3"), std::string::npos) << d.dump();
      }
    }
  }

  // The clock comes back: three rounds within bounds let it go, and it
  // leases a fresh id and serves.
  bad.set_offset("+0");
  const auto back = Steady::now();
  ASSERT_TRUE(bad.proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew hold released"; }, seconds(30)))
      << "never let go";
  std::string served;
  for (int i = 0; i < 200 && (served = next_id(bad)) != "id"; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(served, "id") << "serves again after the hold";
  std::printf(
      "[ measured ] one host of 3, +300 ms: self-fence %.2f s after the step; "
      "served again %.2f s after the clock came back\n",
      to_fence_s, std::chrono::duration<double>(Steady::now() - back).count());
}

// A host whose own monitor is off cannot fence itself: its two observers
// vote against it and the first to see both votes fences it, recording the
// voters. It then leases a fresh id (nothing holds it), and a second fence
// within the window would pass the blast-radius cap of a 3-host region (one
// per 10 minutes): the observers raise the mass-skew alarm instead.
TEST_F(SkewMonitorTest, AHostWithoutItsOwnMonitorIsFencedByAMajorityOfItsObservers) {
  start_fleet({"h1", "h2"}, {"+0", "+0"});
  if (HasFatalFailure()) return;
  auto m = std::make_unique<Member>();
  m->name = "h3";
  m->set_offset("+0");
  m->proc = m->dir.start_ready({"--registry", "etcd", "--etcd", etcd_->endpoint(0), "--tcp",
                                "127.0.0.1:0", "--host-name", "h3", "--skew-monitor=false",
                                "--lease-ttl", "4s", "--lease-renew", "1s", "--lease-stop", "3s"},
                               m->faketime_env());
  members_.push_back(std::move(m));
  Member& bad = member("h3");
  const auto stepped = Steady::now();
  bad.set_offset("-0.3");

  std::optional<json> fence;
  Member* fencer = nullptr;
  while (!fence && Steady::now() - stepped < seconds(30)) {
    for (const char* name : {"h1", "h2"}) {
      for (const json& d : member(name).decisions()) {
        if (d.value("msg", "") == "skew fence") {
          fence = d;
          fencer = &member(name);
        }
      }
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(fence) << "h3 was never fenced by its peers";
  const double to_fence_s = std::chrono::duration<double>(Steady::now() - stepped).count();
  const std::string why = fence->value("explanation", "");
  EXPECT_NE(why.find("decision=fence"), std::string::npos) << why;
  EXPECT_NE(why.find("target=h3"), std::string::npos) << why;
  EXPECT_NE(why.find("h1:"), std::string::npos) << "both voters named: " << why;
  EXPECT_NE(why.find("h2:"), std::string::npos) << "both voters named: " << why;
  // The record names the fencer and both voters.
  const auto records = read_prefix(etcd_->endpoint(0), "/snowid/default/skew/0/fences/h3");
  ASSERT_EQ(records.size(), 1u);
  const json record = json::parse(records[0].second, nullptr, false);
  ASSERT_FALSE(record.is_discarded()) << records[0].second;
  EXPECT_EQ(record.value("fencer", ""), fencer->name);
  std::set<std::string> voters;
  for (const json& v : record.value("votes", json::array())) voters.insert(v.value("voter", ""));
  EXPECT_EQ(voters, (std::set<std::string>{"h1", "h2"}));
  // The lease was lost on the fenced daemon.
  EXPECT_TRUE(bad.proc->wait_for(
      [](const json& l) {
        return l.value("msg", "") == "lease event" &&
               l.value("event", "").find("lost") != std::string::npos;
      },
      seconds(10)));
  // Its fresh id is over the cap: an alarm, no second fence.
  std::optional<json> capped;
  const auto first_fence = Steady::now();
  while (!capped && Steady::now() - first_fence < seconds(40)) {
    for (const char* name : {"h1", "h2"}) {
      for (const json& d : member(name).decisions()) {
        if (d.value("msg", "") == "skew mass skew") capped = d;
      }
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(capped) << "the second fence within the window was not refused by the cap";
  EXPECT_NE(capped->value("explanation", "").find("decision=capped"), std::string::npos)
      << capped->dump();
  EXPECT_EQ(read_prefix(etcd_->endpoint(0), "/snowid/default/skew/0/fences/").size(), 1u);
  for (const char* good : {"h1", "h2"}) EXPECT_EQ(next_id(member(good)), "id") << good;
  std::printf(
      "[ measured ] one host of 3 without its own monitor, -300 ms: fenced by %s on "
      "the votes of h1 and h2 %.2f s after the step\n",
      fencer->name.c_str(), to_fence_s);
}

// What operators read from a good host while a bad one is fenced: /v1/skew
// with every host, its offset and state, and the fence with its reason;
// INFO skew; the per-peer series of /metrics; and the /fleet page itself.
TEST_F(SkewMonitorTest, OperatorsSeeEveryHostTheOffsetsAndTheFence) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"});
  if (HasFatalFailure()) return;
  member("h3").set_offset("+0.3");
  ASSERT_TRUE(member("h3").proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew self-fence"; }, seconds(30)));
  Member& good = member("h1");
  std::optional<HttpConn> http = HttpConn::connect(good.proc->http_port());
  ASSERT_TRUE(http);
  json doc;
  // The fence records are read every fifth round.
  for (int i = 0; i < 100; ++i) {
    const std::optional<HttpReply> r = http->get("/v1/skew?history=1");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->header("content-type").rfind("application/json", 0), 0u);
    doc = json::parse(r->body, nullptr, false);
    ASSERT_FALSE(doc.is_discarded()) << r->body;
    if (!doc["fences"].empty()) break;
    std::this_thread::sleep_for(milliseconds(200));
  }
  EXPECT_EQ(doc.value("self", ""), "h1");
  EXPECT_EQ(doc.value("state", ""), "ok");
  EXPECT_FALSE(doc.value("held", true));
  EXPECT_TRUE(doc["at_ns"].is_string()) << "instants are strings of nanoseconds";
  std::set<std::string> hosts;
  for (const json& h : doc["hosts"]) {
    hosts.insert(h.value("host", ""));
    if (h.value("host", "") == "h2") {
      ASSERT_TRUE(h["offset_ns"].is_number()) << h.dump();
      EXPECT_LT(std::abs(h["offset_ns"].get<std::int64_t>()), 5'000'000) << h.dump();
      EXPECT_EQ(h.value("state", ""), "ok") << h.dump();
      EXPECT_FALSE(h["workers"].empty()) << h.dump();
    }
  }
  EXPECT_TRUE(hosts.count("h1") && hosts.count("h2")) << doc["hosts"].dump();
  ASSERT_FALSE(doc["fences"].empty()) << doc.dump();
  const json& f = doc["fences"][0];
  EXPECT_EQ(f.value("target", ""), "h3");
  EXPECT_NE(f.value("reason", "").find("target=h3"), std::string::npos) << f.dump();
  ASSERT_TRUE(doc["history"].is_array());
  EXPECT_GE(doc["history"].size(), 3u);
  bool h3_charted = false;
  for (const json& point : doc["history"]) h3_charted |= point["offsets_ns"].contains("h3");
  EXPECT_TRUE(h3_charted) << "h3's offset before its fence is in the history";

  const std::optional<HttpReply> bad_query = http->get("/v1/skew?history=yes");
  ASSERT_TRUE(bad_query);
  EXPECT_EQ(bad_query->status, 400) << bad_query->body;

  const std::optional<HttpReply> metrics = http->get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("snowid_skew_peer_offset_seconds{peer=\"h2\"}"), std::string::npos);
  EXPECT_NE(metrics->body.find("snowid_skew_state{state=\"ok\"} 1"), std::string::npos);
  EXPECT_NE(metrics->body.find("snowid_skew_held 0"), std::string::npos);

  std::optional<RespConn> resp = RespConn::connect_unix(good.dir.socket());
  ASSERT_TRUE(resp);
  const auto info = resp->command({"INFO", "skew"});
  ASSERT_TRUE(info);
  EXPECT_NE(info->str.find("skew_monitor:on"), std::string::npos) << info->str;
  EXPECT_NE(info->str.find("skew_state:ok"), std::string::npos) << info->str;
  EXPECT_NE(info->str.find("host=h2,state=ok"), std::string::npos) << info->str;

  const std::optional<HttpReply> page = http->get("/fleet");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page->body.find("/v1/skew?history=1"), std::string::npos);

  // The bad host, held, says so.
  std::optional<HttpConn> held = HttpConn::connect(member("h3").proc->http_port());
  ASSERT_TRUE(held);
  const std::optional<HttpReply> view = held->get("/v1/skew");
  ASSERT_TRUE(view);
  const json mine = json::parse(view->body, nullptr, false);
  EXPECT_TRUE(mine.value("held", false)) << view->body;
  EXPECT_NE(mine.value("hold_reason", "").find("self-fence"), std::string::npos) << view->body;
}

// A daemon on the file registry runs no monitor: /v1/skew says so.
TEST_F(SkewMonitorTest, WithoutEtcdThereIsNoMonitorAndTheViewSaysWhy) {
  DaemonDir dir;
  auto d = dir.start_ready();
  std::optional<HttpConn> http = HttpConn::connect(d->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> r = http->get("/v1/skew");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_NE(r->body.find("skew monitor is off"), std::string::npos) << r->body;
  std::optional<RespConn> resp = RespConn::connect_unix(dir.socket());
  ASSERT_TRUE(resp);
  const auto info = resp->command({"INFO", "skew"});
  ASSERT_TRUE(info);
  EXPECT_NE(info->str.find("skew_monitor:off"), std::string::npos) << info->str;
}

// Every clock good: through 8 rounds nobody is fenced, votes against, or held.
TEST_F(SkewMonitorTest, ThreeGoodHostsNeverFenceOrVote) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"});
  if (HasFatalFailure()) return;
  std::this_thread::sleep_for(seconds(8));
  for (auto& m : members_) {
    EXPECT_EQ(next_id(*m), "id") << m->name;
    for (const json& d : m->decisions()) ADD_FAILURE() << m->name << ": " << d.dump();
  }
  EXPECT_TRUE(fenced_hosts().empty());
  EXPECT_TRUE(read_prefix(etcd_->endpoint(0), "/snowid/default/skew/0/votes/").empty());
}

// The dry run logs the decision and acts on none: the bad host keeps serving.
TEST_F(SkewMonitorTest, DryRunLogsTheFenceAndMakesNone) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"}, {"--skew-dry-run"});
  if (HasFatalFailure()) return;
  Member& bad = member("h3");
  bad.set_offset("+0.3");
  const std::optional<json> would = bad.proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew dry run"; }, seconds(30));
  ASSERT_TRUE(would) << "no dry-run decision logged";
  EXPECT_NE(would->value("explanation", "").find("decision=dry-run"), std::string::npos)
      << would->dump();
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(next_id(bad), "id");
  EXPECT_TRUE(fenced_hosts().empty());
}

// A fence threshold wider than the leases' skew margin is refused at start.
TEST_F(SkewMonitorTest, AFenceWiderThanTheLeaseSkewIsRefusedAtStart) {
  DaemonDir dir;
  auto d = dir.start({"--registry", "etcd", "--etcd", etcd_->endpoint(0), "--skew-fence", "200ms",
                      "--max-clock-skew", "100ms"});
  const std::optional<int> code = d->wait_exit(seconds(20));
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 2);
  EXPECT_NE(d->raw_text().find("skew"), std::string::npos) << d->raw_text();
}

}  // namespace
}  // namespace snowid::daemon_test
