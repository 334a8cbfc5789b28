// The skew monitor in real daemons on a real etcd (docs/skew.md): each daemon
// has a wall clock of its own through libfaketime (offsets in seconds, read
// from a file on every clock read; the monotonic clock stays real), a host
// name of its own (--host-name) and a TCP RESP listener that its peers
// probe. The clocks that are not offset are the machine's, so "good" means
// within microseconds of each other.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chronyd_test_support.h"
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
  Env faketime_env() const { return daemon_test::faketime_env(clock_file()); }
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
      ASSERT_TRUE(h["offset_ns"].is_string()) << "nanoseconds as a string: " << h.dump();
      EXPECT_LT(std::abs(std::stoll(h["offset_ns"].get<std::string>())), 5'000'000) << h.dump();
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

  // `snowid skew status` prints the same view for people, and as JSON.
  const std::string url = "http://127.0.0.1:" + std::to_string(good.proc->http_port());
  const ProcessResult table = run_process({kSnowidCli, "skew", "status", "--daemon", url}, {});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("seen from h1: ok"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("h1 (self)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\nh2 "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("h3 by h3 (itself)"), std::string::npos) << table.out;
  const ProcessResult as_json =
      run_process({kSnowidCli, "skew", "status", "--json"}, {{"SNOWID_DAEMON_URL", url}});
  EXPECT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out, nullptr, false).value("self", ""), "h1") << as_json.out;
  const ProcessResult watched = run_process(
      {kSnowidCli, "skew", "watch", "--daemon", url, "--interval", "0.2", "--count", "2"}, {});
  EXPECT_EQ(watched.exit_code, 0) << watched.err;
  EXPECT_EQ(std::count(watched.out.begin(), watched.out.end(), '\n') > 4, true) << watched.out;
  const ProcessResult nobody =
      run_process({kSnowidCli, "skew", "status", "--daemon", "http://127.0.0.1:1"}, {});
  EXPECT_EQ(nobody.exit_code, 1);
  EXPECT_NE(nobody.err.find("cannot reach snowidd"), std::string::npos) << nobody.err;

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
  const ProcessResult status = run_process({kSnowidCli, "skew", "status", "--daemon",
                                            "http://127.0.0.1:" + std::to_string(d->http_port())},
                                           {});
  EXPECT_EQ(status.exit_code, 1);
  EXPECT_NE(status.err.find("skew monitor is off"), std::string::npos) << status.err;
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

// The offsets the good hosts measured of each other over the history in
// their /v1/skew, in microseconds: every one is a measurement error, since
// their clocks are the same clock.
std::vector<double> good_errors_us(std::vector<std::unique_ptr<Member>>& members,
                                   const std::set<std::string>& good) {
  std::vector<double> errors;
  for (auto& m : members) {
    if (good.count(m->name) == 0) continue;
    std::optional<HttpConn> http = HttpConn::connect(m->proc->http_port());
    if (!http) continue;
    const std::optional<HttpReply> r = http->get("/v1/skew?history=1");
    if (!r || r->status != 200) continue;
    const json doc = json::parse(r->body, nullptr, false);
    if (doc.is_discarded()) continue;
    for (const json& point : doc["history"]) {
      for (const auto& [host, ns] : point["offsets_ns"].items()) {
        if (host != m->name && good.count(host) != 0) {
          errors.push_back(std::abs(std::stod(ns.get<std::string>())) / 1000.0);
        }
      }
    }
  }
  std::sort(errors.begin(), errors.end());
  return errors;
}

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  return sorted[std::min(sorted.size() - 1, static_cast<std::size_t>(q * sorted.size()))];
}

// The decisions of every member, as "host: msg".
std::vector<std::string> all_decisions(const std::vector<std::unique_ptr<Member>>& members) {
  std::vector<std::string> out;
  for (const auto& m : members) {
    for (const json& d : m->decisions()) out.push_back(m->name + ": " + d.dump());
  }
  return out;
}

// Both cores busy with spinning threads for 12 s: the good hosts' probes
// queue behind them, yet no host is fenced or voted against, and the
// lowest-delay sample of each burst still measures the shared clock closely.
TEST_F(SkewMonitorTest, SaturatedCpuFencesNobodyAndMeasuresCloselyStill) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"});
  if (HasFatalFailure()) return;
  std::atomic<bool> spin{true};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    spinners.emplace_back([&spin] {
      volatile std::uint64_t x = 0;
      while (spin.load(std::memory_order_relaxed)) x = x + 1;
    });
  }
  std::this_thread::sleep_for(seconds(12));
  spin = false;
  for (std::thread& t : spinners) t.join();
  EXPECT_TRUE(all_decisions(members_).empty()) << ::testing::PrintToString(all_decisions(members_));
  EXPECT_TRUE(fenced_hosts().empty());
  for (auto& m : members_) EXPECT_EQ(next_id(*m), "id") << m->name;
  const std::vector<double> e = good_errors_us(members_, {"h1", "h2", "h3"});
  ASSERT_FALSE(e.empty()) << "no offsets measured";
  std::printf(
      "[ measured ] CPU saturated, 3 hosts on one clock: %zu held offsets, |error| "
      "p50 %.1f us, p99 %.1f us, max %.1f us\n",
      e.size(), quantile(e, 0.5), quantile(e, 0.99), e.back());
}

// A host stopped for 5 s (SIGSTOP) and resumed: unreachable is not skewed,
// and its own monitor, seeing the pause, acts on nothing it measured before.
// Nobody is fenced, and the paused host serves again.
TEST_F(SkewMonitorTest, AFiveSecondPauseFencesNobody) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"});
  if (HasFatalFailure()) return;
  std::this_thread::sleep_for(seconds(3));
  Member& paused = member("h3");
  paused.proc->signal(SIGSTOP);
  std::this_thread::sleep_for(seconds(5));
  paused.proc->signal(SIGCONT);
  std::string served;
  for (int i = 0; i < 150 && (served = next_id(paused)) != "id"; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(served, "id") << "the paused host serves again";
  std::this_thread::sleep_for(seconds(5));
  EXPECT_TRUE(all_decisions(members_).empty()) << ::testing::PrintToString(all_decisions(members_));
  EXPECT_TRUE(fenced_hosts().empty());
}

// Steps while serving: 60 ms ahead (beyond the 50 ms limit) is fenced;
// 30 ms (beyond the 5 ms alert, within the limit) is alerted on, not fenced.
TEST_F(SkewMonitorTest, ASixtyMillisecondStepIsFencedAndAThirtyMillisecondOneOnlyAlerted) {
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"});
  if (HasFatalFailure()) return;
  member("h2").set_offset("+0.03");
  std::this_thread::sleep_for(seconds(6));
  std::optional<HttpConn> http = HttpConn::connect(member("h1").proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> r = http->get("/v1/skew");
  ASSERT_TRUE(r);
  const json doc = json::parse(r->body, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r->body;
  for (const json& h : doc["hosts"]) {
    if (h.value("host", "") != "h2") continue;
    EXPECT_NE(h.value("state", ""), "ok") << "30 ms is past the alert: " << h.dump();
    EXPECT_NE(h.value("state", ""), "fenced") << h.dump();
  }
  EXPECT_TRUE(fenced_hosts().empty()) << "30 ms is within the fence limit";
  EXPECT_EQ(next_id(member("h2")), "id");

  member("h2").set_offset("+0");
  member("h3").set_offset("+0.06");
  const auto stepped = Steady::now();
  ASSERT_TRUE(member("h3").proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew self-fence"; }, seconds(30)))
      << "a 60 ms step was not fenced";
  std::printf("[ measured ] +60 ms step while serving: self-fence %.2f s after it\n",
              std::chrono::duration<double>(Steady::now() - stepped).count());
  for (const char* good : {"h1", "h2"}) {
    for (const json& d : member(good).decisions()) {
      EXPECT_NE(d.value("msg", ""), "skew self-fence") << good << ": " << d.dump();
    }
  }
}

// Two hosts: with two clocks there is no peer majority, and without a
// reference nobody can tell which is wrong. The one 300 ms off is shown as
// alert or suspect, and nobody is fenced.
TEST_F(SkewMonitorTest, ATwoHostFleetWithoutAReferenceFencesNobody) {
  start_fleet({"h1", "h2"}, {"+0", "+0"});
  if (HasFatalFailure()) return;
  member("h2").set_offset("+0.3");
  std::this_thread::sleep_for(seconds(8));
  EXPECT_TRUE(all_decisions(members_).empty()) << ::testing::PrintToString(all_decisions(members_));
  EXPECT_TRUE(fenced_hosts().empty());
  std::optional<HttpConn> http = HttpConn::connect(member("h1").proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> r = http->get("/v1/skew");
  ASSERT_TRUE(r);
  const json doc = json::parse(r->body, nullptr, false);
  for (const json& h : doc["hosts"]) {
    if (h.value("host", "") != "h2") continue;
    // Surely past the suspect threshold, so suspect: fence evidence without
    // the majority or the reference to act on it.
    const std::string state = h.value("state", "");
    EXPECT_TRUE(state == "alert" || state == "suspect") << h.dump();
  }
}

// A TCP proxy on 127.0.0.1 that delays every byte towards `upstream_port`
// by `delay` and none coming back: an asymmetric path into a host.
class DelayingProxy {
 public:
  DelayingProxy(int upstream_port, milliseconds delay) : upstream_(upstream_port), delay_(delay) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "proxy: " << std::strerror(errno);
      return;
    }
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~DelayingProxy() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    if (acceptor_.joinable()) acceptor_.join();
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (std::thread& t : pumps_) t.join();
    for (int fd : fds_) ::close(fd);
  }
  int port() const { return port_; }

 private:
  void accept_loop() {
    while (!stop_) {
      const int client = ::accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<std::uint16_t>(upstream_));
      if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(client);
        ::close(server);
        continue;
      }
      const int one = 1;
      ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      ::setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fds_.push_back(client);
      fds_.push_back(server);
      pumps_.emplace_back([this, client, server] { pump(client, server, delay_); });
      pumps_.emplace_back([this, client, server] { pump(server, client, milliseconds(0)); });
    }
  }
  // Probes are one request at a time, so holding each chunk for `delay`
  // before the next read delays each by exactly that.
  static void pump(int from, int to, milliseconds delay) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(from, buf, sizeof buf);
      if (n <= 0) break;
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      if (::send(to, buf, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
    }
    ::shutdown(to, SHUT_WR);
  }

  int upstream_;
  milliseconds delay_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread acceptor_;
  std::vector<std::thread> pumps_;
  std::vector<int> fds_;
};

int free_tcp_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// 20 ms of one-way delay on the path into a good host (its peers probe it
// through a delaying proxy): its round trips are over the 10 ms cap, so its
// peers find it unmeasurable, not skewed, and nobody is fenced.
TEST_F(SkewMonitorTest, TwentyMillisecondsOfOneWayDelayIntoAGoodHostFencesNobody) {
  start_fleet({"h1", "h2"}, {"+0", "+0"});
  if (HasFatalFailure()) return;
  const int tcp = free_tcp_port();
  DelayingProxy proxy(tcp, milliseconds(20));
  auto m = std::make_unique<Member>();
  m->name = "h3";
  m->set_offset("+0");
  m->proc = m->dir.start_ready({"--registry", "etcd", "--etcd", etcd_->endpoint(0), "--tcp",
                                "127.0.0.1:" + std::to_string(tcp), "--probe-address",
                                "127.0.0.1:" + std::to_string(proxy.port()), "--host-name", "h3",
                                "--lease-ttl", "4s", "--lease-renew", "1s", "--lease-stop", "3s"},
                               m->faketime_env());
  members_.push_back(std::move(m));
  std::this_thread::sleep_for(seconds(8));
  EXPECT_TRUE(all_decisions(members_).empty()) << ::testing::PrintToString(all_decisions(members_));
  EXPECT_TRUE(fenced_hosts().empty());
  std::optional<HttpConn> http = HttpConn::connect(member("h1").proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> r = http->get("/v1/skew");
  ASSERT_TRUE(r);
  const json doc = json::parse(r->body, nullptr, false);
  bool seen = false;
  for (const json& h : doc["hosts"]) {
    if (h.value("host", "") != "h3") continue;
    seen = true;
    EXPECT_EQ(h.value("state", ""), "unmeasurable") << h.dump();
    EXPECT_TRUE(h["offset_ns"].is_null()) << h.dump();
  }
  EXPECT_TRUE(seen) << r->body;
  for (auto& member : members_) EXPECT_EQ(next_id(*member), "id") << member->name;
}

// Five hosts, three of them 300 ms ahead, and a good reference (a real
// chronyd on loopback that every daemon queries with SNTP): the peers'
// majority says the two good hosts are off, the reference says they are
// right, and the three are wrong by the reference but the majority by the
// peers. Evidence that disagrees vetoes: nobody is fenced, and the vetoes
// are counted for the alarm.
TEST_F(SkewMonitorTest, AWrongMajorityWithAGoodReferenceFencesNobody) {
  ASSERT_FALSE(skew::testing::chronyd_path().empty())
      << "chronyd not found: run scripts/install-deps";
  const std::uint16_t port = skew::testing::free_udp_port();
  std::unique_ptr<skew::testing::Chronyd> reference = skew::testing::Chronyd::reference(port);
  ASSERT_TRUE(reference->error().empty()) << reference->error();
  start_fleet({"h1", "h2", "h3", "h4", "h5"}, {"+0", "+0", "+0", "+0", "+0"},
              {"--sntp-servers", "127.0.0.1:" + std::to_string(port), "--sntp-poll", "1s"});
  if (HasFatalFailure()) return;
  for (const char* bad : {"h3", "h4", "h5"}) member(bad).set_offset("+0.3");
  std::this_thread::sleep_for(seconds(10));
  EXPECT_TRUE(fenced_hosts().empty());
  for (const char* good : {"h1", "h2"}) {
    for (const json& d : member(good).decisions()) {
      EXPECT_NE(d.value("msg", ""), "skew self-fence") << good << ": " << d.dump();
      EXPECT_NE(d.value("msg", ""), "skew fence") << good << ": " << d.dump();
    }
    EXPECT_EQ(next_id(member(good)), "id") << good;
  }
  std::optional<HttpConn> http = HttpConn::connect(member("h1").proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> r = http->get("/v1/skew");
  ASSERT_TRUE(r);
  const json doc = json::parse(r->body, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r->body;
  EXPECT_TRUE(doc["reference"].is_object()) << "the reference was measured: " << r->body;
  EXPECT_GT(doc.value("vetoes_total", 0), 0) << r->body;
}

// A wrong reference (a real chronyd whose clock libfaketime puts 2 s ahead)
// with three good hosts: the reference says every clock is 2 s off, the
// peers say all agree. Evidence that disagrees vetoes: nobody is fenced, the
// vetoes are counted, and every host keeps serving.
TEST_F(SkewMonitorTest, AWrongReferenceWithThreeGoodHostsFencesNobody) {
  ASSERT_FALSE(skew::testing::chronyd_path().empty())
      << "chronyd not found: run scripts/install-deps";
  const std::uint16_t port = skew::testing::free_udp_port();
  std::unique_ptr<skew::testing::Chronyd> reference = skew::testing::Chronyd::reference(
      port,
      {std::string("LD_PRELOAD=") + kLibfaketime, "FAKETIME=+2", "FAKETIME_DONT_FAKE_MONOTONIC=1"});
  ASSERT_TRUE(reference->error().empty()) << reference->error();
  start_fleet({"h1", "h2", "h3"}, {"+0", "+0", "+0"},
              {"--sntp-servers", "127.0.0.1:" + std::to_string(port), "--sntp-poll", "1s"});
  if (HasFatalFailure()) return;
  std::this_thread::sleep_for(seconds(8));
  EXPECT_TRUE(fenced_hosts().empty());
  for (auto& m : members_) {
    for (const json& d : m->decisions()) {
      EXPECT_NE(d.value("msg", ""), "skew self-fence") << m->name << ": " << d.dump();
      EXPECT_NE(d.value("msg", ""), "skew fence") << m->name << ": " << d.dump();
    }
    EXPECT_EQ(next_id(*m), "id") << m->name;
  }
  std::optional<HttpConn> http = HttpConn::connect(member("h1").proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> r = http->get("/v1/skew");
  ASSERT_TRUE(r);
  const json doc = json::parse(r->body, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r->body;
  ASSERT_TRUE(doc["reference"].is_object()) << "the reference was measured: " << r->body;
  const std::int64_t ref_ns = std::stoll(doc["reference"].value("offset_ns", std::string("0")));
  EXPECT_GT(ref_ns, 1'900'000'000) << "the reference reads 2 s ahead: " << r->body;
  EXPECT_GT(doc.value("vetoes_total", 0), 0) << r->body;
}

// A monitor-only agent for a host whose generator runs without a monitor of
// its own (here a snowidd with skew_monitor off, standing in for an
// in-process library; same host name, no probe address): the agent issues
// nothing, announces its probe address in its agent key, is probed and
// judged by its peers, and when its host's clock is wrong it fences that
// host's holder, and each fresh one while held.
TEST_F(SkewMonitorTest, AMonitorOnlyAgentFencesItsHostsHolderWhenItsClockIsWrong) {
  start_fleet({"h1", "h2"}, {"+0", "+0"});
  if (HasFatalFailure()) return;
  auto holder = std::make_unique<Member>();
  holder->name = "h3-library";
  holder->set_offset("+0");
  holder->proc = holder->dir.start_ready(
      {"--registry", "etcd", "--etcd", etcd_->endpoint(0), "--host-name", "h3",
       "--skew-monitor=false", "--lease-ttl", "4s", "--lease-renew", "1s", "--lease-stop", "3s"},
      holder->faketime_env());
  auto agent = std::make_unique<Member>();
  agent->name = "h3";
  agent->set_offset("+0");
  agent->proc = agent->dir.start_ready(
      {"--registry", "etcd", "--etcd", etcd_->endpoint(0), "--tcp", "127.0.0.1:0", "--host-name",
       "h3", "--monitor-only", "--lease-ttl", "4s", "--lease-renew", "1s", "--lease-stop", "3s"},
      agent->faketime_env());
  ASSERT_TRUE(agent->proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "ready" && l.value("monitor_only", false); },
      seconds(5)));
  Member& a = *agent;
  Member& lib = *holder;
  members_.push_back(std::move(holder));
  members_.push_back(std::move(agent));

  // It issues nothing, and says why; it is ready as a monitor.
  const std::string refused = next_id(a);
  EXPECT_NE(refused.find("monitor-only"), std::string::npos) << refused;
  std::optional<HttpConn> http = HttpConn::connect(a.proc->http_port());
  ASSERT_TRUE(http);
  const std::optional<HttpReply> ready = http->get("/readyz");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, 200) << ready->body;
  EXPECT_NE(ready->body.find("monitor_only"), std::string::npos) << ready->body;

  // Its peers see the host h3 as an agent with the library's worker id.
  std::this_thread::sleep_for(seconds(3));
  std::optional<HttpConn> h1 = HttpConn::connect(member("h1").proc->http_port());
  ASSERT_TRUE(h1);
  const std::optional<HttpReply> view = h1->get("/v1/skew");
  ASSERT_TRUE(view);
  const json doc = json::parse(view->body, nullptr, false);
  bool seen = false;
  for (const json& h : doc["hosts"]) {
    if (h.value("host", "") != "h3") continue;
    seen = true;
    EXPECT_TRUE(h.value("monitor", false)) << "an agent runs a monitor: " << h.dump();
    EXPECT_EQ(h.value("workers", json::array()).size(), 1u) << h.dump();
    EXPECT_TRUE(h["offset_ns"].is_string()) << "the agent is probed: " << h.dump();
  }
  EXPECT_TRUE(seen) << view->body;

  // The host's clock goes wrong: the agent fences the library's holder.
  a.set_offset("+0.3");
  ASSERT_TRUE(a.proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew self-fence"; }, seconds(30)));
  EXPECT_TRUE(lib.proc->wait_for(
      [](const json& l) {
        return l.value("msg", "") == "lease event" &&
               l.value("event", "").find("lost") != std::string::npos;
      },
      seconds(10)))
      << "the library's holder was not fenced";
  EXPECT_EQ(fenced_hosts(), (std::set<std::string>{"h3"}));
  // Its fresh id, taken while the agent holds, is fenced again.
  EXPECT_TRUE(a.proc->wait_for(
      [](const json& l) { return l.value("msg", "") == "skew self-fence of a fresh holder"; },
      seconds(40)));
  for (const char* good : {"h1", "h2"}) EXPECT_EQ(next_id(member(good)), "id") << good;
}

// monitor_only needs etcd and an address to be probed at: exit 2 otherwise.
TEST_F(SkewMonitorTest, MonitorOnlyWithoutEtcdOrAProbeAddressIsRefusedAtStart) {
  DaemonDir dir;
  auto no_etcd = dir.start({"--monitor-only"});
  std::optional<int> code = no_etcd->wait_exit(seconds(20));
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 2);
  EXPECT_NE(no_etcd->raw_text().find("monitor_only needs etcd"), std::string::npos)
      << no_etcd->raw_text();
  auto no_address =
      dir.start({"--monitor-only", "--registry", "etcd", "--etcd", etcd_->endpoint(0)});
  code = no_address->wait_exit(seconds(20));
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, 2);
  EXPECT_NE(no_address->raw_text().find("tcp or probe_address"), std::string::npos)
      << no_address->raw_text();
}

// Two hosts that announce the same probe address (a loopback listener copied
// across machines would) are not probed: a probe there reaches nobody in
// particular. The third host says so once, and judges nobody by it.
TEST_F(SkewMonitorTest, HostsThatAnnounceOneAddressAreNotProbed) {
  start_fleet({"h1"}, {"+0"});
  if (HasFatalFailure()) return;
  const std::string shared = "127.0.0.1:" + std::to_string(free_tcp_port());
  for (const char* name : {"h2", "h3"}) {
    auto m = std::make_unique<Member>();
    m->name = name;
    m->set_offset("+0");
    m->proc = m->dir.start_ready({"--registry", "etcd", "--etcd", etcd_->endpoint(0), "--tcp",
                                  "127.0.0.1:0", "--probe-address", shared, "--host-name", name,
                                  "--lease-ttl", "4s", "--lease-renew", "1s", "--lease-stop", "3s"},
                                 m->faketime_env());
    members_.push_back(std::move(m));
  }
  const std::optional<json> warned = member("h1").proc->wait_for(
      [](const json& l) {
        return l.value("msg", "") == "skew monitor cannot probe a shared address";
      },
      seconds(10));
  ASSERT_TRUE(warned);
  EXPECT_EQ(warned->value("address", ""), shared);
  member("h2").set_offset("+0.3");
  std::this_thread::sleep_for(seconds(5));
  EXPECT_TRUE(fenced_hosts().empty() || fenced_hosts() == std::set<std::string>{"h2"})
      << "only h2 itself may act on its own clock";
  for (const json& d : member("h1").decisions())
    ADD_FAILURE() << "h1 judged by a shared address: " << d.dump();
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
