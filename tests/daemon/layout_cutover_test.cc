// A layout cut-over seen from outside: real snowidd processes on one file
// registry, each with a wall clock of its own (libfaketime), issuing while
// clients pull them across the instant from which a layout file's second era
// applies. What the design promises (docs/id-format.md section 7,
// docs/regions.md "The cut-over", docs/daemon.md "Clock faults"):
//
//  - a daemon takes the era in effect when it starts; one started before the
//    cut-over answers OUT_OF_RANGE from it on until it is restarted, and a
//    restart after it takes the new era;
//  - no id of an era carries a time at or after the next era's cut-over, so
//    every id of the first era is below every id of the second and the era
//    of an id follows from its value;
//  - the ids of one daemon increase, and across a restart on the same worker
//    id they go on increasing.
//
// The worker ids are picked so that the two layouts' bits coincide: worker
// 1/17 of the first layout (8 host bits, 12 of sequence) writes the bits of
// worker 1/34 of the second (9, 11) for every sequence below 2048, so an id
// of the old era issued at or after the cut-over could equal one of the new.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "http_client.h"
#include "temp_dir.h"
#include "test_support.h"

namespace snowid::daemon_test {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// 2026-01-01T00:00:00Z: the epoch of both eras, whose time fields are alike
// (41 bits from bit 22, 1 ms), so an id's time field is its tick in either.
constexpr std::int64_t kEpochMs = 1767225600000;
constexpr int kOldHostBits = 8;  // the "snowid" preset: 2 region, 8 host, 12 sequence

std::int64_t real_ms() {
  return std::chrono::duration_cast<milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void sleep_until_real_ms(std::int64_t ms) {
  const std::int64_t left = ms - real_ms();
  if (left > 0) std::this_thread::sleep_for(milliseconds(left));
}

// A libfaketime offset in seconds with a fraction ("-0.005" is 5 ms behind).
std::string offset_text(std::int64_t ms) {
  const std::int64_t a = ms < 0 ? -ms : ms;
  char text[48];
  std::snprintf(text, sizeof text, "%c%lld.%03lld", ms < 0 ? '-' : '+',
                static_cast<long long>(a / 1000), static_cast<long long>(a % 1000));
  return text;
}

// A layout-file object with snowid's epoch, time and region fields and
// `host_bits` host bits; the sequence has the other 20 - host_bits.
std::string layout_object(const std::string& name, int host_bits) {
  return R"({"name": ")" + name +
         R"(", "epoch": "2026-01-01T00:00:00Z", "unit_ms": 1, "fields": [)"
         R"({"name": "time", "role": "time", "width": 41}, )"
         R"({"name": "region", "role": "region", "width": 2}, )"
         R"({"name": "host", "role": "host", "width": )" +
         std::to_string(host_bits) + R"(}, {"name": "sequence", "role": "sequence", "width": )" +
         std::to_string(20 - host_bits) + "}]}";
}

// The fields of an id read in the layout with `host_bits` host bits.
struct Fields {
  std::int64_t ticks = 0;
  std::uint32_t region = 0;
  std::uint32_t host = 0;
  std::uint32_t sequence = 0;
};

Fields fields_of(std::uint64_t id, int host_bits) {
  const int sequence_bits = 20 - host_bits;
  Fields f;
  f.ticks = static_cast<std::int64_t>(id >> 22);
  f.region = static_cast<std::uint32_t>((id >> 20) & 0x3);
  f.host = static_cast<std::uint32_t>((id >> sequence_bits) & ((1u << host_bits) - 1));
  f.sequence = static_cast<std::uint32_t>(id & ((1u << sequence_bits) - 1));
  return f;
}

// What one client got from one daemon, reply by reply.
struct Pulled {
  struct Refusal {
    std::size_t after_ids = 0;  // ids received before it
    std::int64_t at_ms = 0;     // real time when it was read
    std::string word;
  };
  std::vector<std::uint64_t> ids;  // in the order received
  std::vector<Refusal> refusals;
  std::string problem;  // a transport failure or a reply that is neither ids nor an error

  std::uint64_t max_id() const {
    return ids.empty() ? 0 : *std::max_element(ids.begin(), ids.end());
  }
  std::uint64_t min_id() const {
    return ids.empty() ? 0 : *std::min_element(ids.begin(), ids.end());
  }

  void add(const RespValue& r) {
    if (r.is_error()) {
      refusals.push_back({ids.size(), real_ms(), r.error_word()});
      return;
    }
    const auto got = ids_of(r);
    if (!got) {
      problem = "neither ids nor an error: " + r.debug();
      return;
    }
    ids.insert(ids.end(), got->begin(), got->end());
  }

  // "OUT_OF_RANGE x12 CLOCK_BEHIND x1", for messages.
  std::string words() const {
    std::map<std::string, int> n;
    for (const Refusal& r : refusals) ++n[r.word];
    std::string out;
    for (const auto& [w, count] : n) out += w + " x" + std::to_string(count) + " ";
    return out.empty() ? "none" : out;
  }
  bool only_words(const std::set<std::string>& allowed) const {
    return std::all_of(refusals.begin(), refusals.end(),
                       [&](const Refusal& r) { return allowed.contains(r.word); });
  }
};

// True from half a second before the cut-over to half a second after it,
// where a mistake would show: clients pull at full speed then, and a round
// every 2 ms otherwise.
bool near_the_cutover(std::int64_t cut_ms) { return std::abs(real_ms() - cut_ms) <= 500; }

void pace(std::int64_t cut_ms) {
  if (!near_the_cutover(cut_ms)) std::this_thread::sleep_for(milliseconds(2));
}

// Clients that pull ids until stop(), one connection each: on RESP NEXTIDS
// 100 and NEXTID pipelined, near the cut-over also NEXTIDS 3000 (a batch that
// spans ticks, of which one may be the first past the cut-over); on HTTP
// /v1/ids?count=100.
class Pullers {
 public:
  explicit Pullers(std::int64_t cut_ms) : cut_ms_(cut_ms) {}
  ~Pullers() { stop(); }

  void resp(const std::string& socket, Pulled* out) {
    threads_.emplace_back([this, socket, out] {
      auto c = RespConn::connect_unix(socket);
      if (!c) {
        out->problem = "cannot connect to " + socket;
        return;
      }
      const std::string round = encode_command({"NEXTIDS", "100"}) + encode_command({"NEXTID"});
      const std::string wide = encode_command({"NEXTIDS", "3000"});
      while (!stop_.load()) {
        const bool near = near_the_cutover(cut_ms_);
        if (!c->send(near ? round + wide : round)) {
          out->problem = "write failed";
          return;
        }
        for (int i = 0; i < (near ? 3 : 2); ++i) {
          const auto r = c->read();
          if (!r) {
            out->problem = "no reply";
            return;
          }
          out->add(*r);
          if (!out->problem.empty()) return;
        }
        pace(cut_ms_);
      }
    });
  }

  void http(int port, Pulled* out) {
    threads_.emplace_back([this, port, out] {
      auto c = HttpConn::connect(port);
      if (!c) {
        out->problem = "cannot connect to port " + std::to_string(port);
        return;
      }
      while (!stop_.load()) {
        const auto r = c->get("/v1/ids?count=100");
        if (!r) {
          out->problem = "no response";
          return;
        }
        if (r->status == 200) {
          const auto ids = ids_of_json(r->body);
          if (!ids) {
            out->problem = "not ids: " + r->body;
            return;
          }
          out->ids.insert(out->ids.end(), ids->begin(), ids->end());
        } else {
          const json j = json::parse(r->body, nullptr, false);
          if (j.is_discarded() || !j.is_object() || !j.contains("error")) {
            out->problem = std::to_string(r->status) + " without an error word: " + r->body;
            return;
          }
          out->refusals.push_back({out->ids.size(), real_ms(), j.value("error", "")});
        }
        pace(cut_ms_);
      }
    });
  }

  void stop() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::int64_t cut_ms_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// `rounds` requests of NEXTIDS `n` one after the other on `c`, into `out`.
void take(RespConn& c, int rounds, int n, Pulled& out) {
  for (int i = 0; i < rounds && out.problem.empty(); ++i) {
    const auto r = c.command(n == 1 ? std::vector<std::string>{"NEXTID"}
                                    : std::vector<std::string>{"NEXTIDS", std::to_string(n)});
    if (!r) {
      out.problem = "no reply";
      return;
    }
    out.add(*r);
  }
}

// The value of `key` in INFO `section` of the daemon on `socket`, or "".
std::string info_value(const std::string& socket, const std::string& section,
                       const std::string& key) {
  auto c = RespConn::connect_unix(socket);
  if (!c) return "";
  const auto r = c->command({"INFO", section});
  if (!r || r->type != RespValue::Type::kBulk) return "";
  const std::string& text = r->str;
  const std::string needle = key + ":";
  for (std::size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    const std::size_t from = at + needle.size();
    return text.substr(from, text.find_first_of("\r\n", from) - from);
  }
  return "";
}

// A set of ids and whose they are, for the uniqueness check.
using Named = std::vector<std::pair<std::string, const std::vector<std::uint64_t>*>>;

// "" if no id is in `sets` twice (within one set or across two); otherwise
// the first repeated id and where each copy came from.
std::string first_repeat(const Named& sets) {
  std::vector<std::pair<std::uint64_t, std::size_t>> all;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    for (const std::uint64_t id : *sets[i].second) all.emplace_back(id, i);
  }
  std::sort(all.begin(), all.end());
  for (std::size_t k = 1; k < all.size(); ++k) {
    if (all[k].first == all[k - 1].first) {
      return "id " + std::to_string(all[k].first) + " from " + sets[all[k - 1].second].first +
             " and from " + sets[all[k].second].first;
    }
  }
  return "";
}

std::size_t total_ids(const Named& sets) {
  std::size_t n = 0;
  for (const auto& [name, ids] : sets) n += ids->size();
  return n;
}

class LayoutCutover : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(libfaketime_available());
    ASSERT_TRUE(kSnowidCli[0] != '\0') << "the snowid tool was not built (SNOWID_BUILD_TOOLS)";
    ASSERT_FALSE(dir_.path().empty()) << "no temporary directory could be made";
  }

  // A cut-over at least `lead_ms` ahead of real time, on a whole second.
  static std::int64_t cut_ahead(std::int64_t lead_ms) {
    return (real_ms() + lead_ms) / 1000 * 1000 + 1000;
  }

  // The layout file: the "snowid" preset from its epoch, then `name` with
  // `host_bits` host bits from `cut_ms` on.
  void write_history(std::int64_t cut_ms, const std::string& name, int host_bits) {
    cut_ms_ = cut_ms;
    new_host_bits_ = host_bits;
    write_file_atomically(
        history(), R"({"history": [{"cutover": "2026-01-01T00:00:00Z", "layout": "snowid"}, )"
                   R"({"cutover_ms": )" +
                       std::to_string(cut_ms) + R"(, "layout": )" + layout_object(name, host_bits) +
                       "}]}\n");
  }

  std::string history() const { return dir_.file("layout.json"); }
  std::int64_t cut_ticks() const { return cut_ms_ - kEpochMs; }
  // The smallest id of the second era.
  std::uint64_t first_new_id() const { return static_cast<std::uint64_t>(cut_ticks()) << 22; }

  std::string socket(const std::string& name) const { return dir_.file(name + ".sock"); }
  std::string clock_file(const std::string& name) const { return dir_.file(name + ".clock"); }

  // Daemon `name`'s wall clock: `ms` ahead of real time (behind if negative).
  void set_offset(const std::string& name, std::int64_t ms) {
    write_file_atomically(clock_file(name), offset_text(ms) + "\n");
  }
  // Daemon `name`'s wall clock reads `target_ms` now, and runs on from there.
  void set_clock_to(const std::string& name, std::int64_t target_ms) {
    set_offset(name, target_ms - real_ms());
  }

  // snowidd `name` in region 1 on the shared file registry and the history,
  // on its own socket and clock; `host` pinned if given. Does not wait.
  std::unique_ptr<DaemonProcess> start(const std::string& name, std::optional<std::uint32_t> host) {
    std::vector<std::string> args = {
        "--socket", socket(name), "--http",   "127.0.0.1:0", "--state-dir", dir_.file("state"),
        "--layout", history(),    "--region", "1",           "--sequences", "off"};
    if (host) {
      args.push_back("--host");
      args.push_back(std::to_string(*host));
    }
    Env env = faketime_env(clock_file(name));
    env.emplace_back("SNOWID_HOST_LOCK", host_lock_);
    env.emplace_back("SNOWID_HOST_DIR", dir_.file("host"));
    return DaemonProcess::start(args, env);
  }
  std::unique_ptr<DaemonProcess> start_ready(const std::string& name,
                                             std::optional<std::uint32_t> host) {
    std::unique_ptr<DaemonProcess> d = start(name, host);
    EXPECT_TRUE(d->wait_ready()) << name << " did not log \"ready\"";
    return d;
  }

  // Every id in `ids` is of the old era (time field before the cut-over) or
  // of the new one (at or after it), and of worker 1/`host` in that era's
  // layout; otherwise the first that is not.
  std::string first_misfit(const std::vector<std::uint64_t>& ids, bool old_era,
                           std::uint32_t host) const {
    const int host_bits = old_era ? kOldHostBits : new_host_bits_;
    for (const std::uint64_t id : ids) {
      const Fields f = fields_of(id, host_bits);
      const bool in_era = old_era ? f.ticks < cut_ticks() : f.ticks >= cut_ticks();
      if (!in_era || f.region != 1 || f.host != host) {
        return "id " + std::to_string(id) + ": time field " + std::to_string(f.ticks) + " (" +
               std::to_string(f.ticks - cut_ticks()) + " ms from the cut-over), region " +
               std::to_string(f.region) + ", host " + std::to_string(f.host) + " in the " +
               (old_era ? "old" : "new") + " layout; expected worker 1/" + std::to_string(host) +
               (old_era ? " before" : " at or after") + " the cut-over";
      }
    }
    return "";
  }

  // A daemon of the old era pulled by one client while its clock (real
  // time) passes the cut-over: ids before it, OUT_OF_RANGE from it on, no
  // id after the first refusal, and every refusal OUT_OF_RANGE.
  void expect_refused_from_the_cutover(const Pulled& p, const std::string& who,
                                       std::uint32_t host) const {
    EXPECT_EQ(p.problem, "") << who;
    EXPECT_FALSE(p.ids.empty()) << who << " issued nothing before the cut-over";
    EXPECT_TRUE(strictly_increasing(p.ids)) << who;
    EXPECT_EQ(first_misfit(p.ids, true, host), "") << who;
    ASSERT_FALSE(p.refusals.empty()) << who << " was never refused: the test ended too early";
    const Pulled::Refusal& first = p.refusals.front();
    EXPECT_GE(first.at_ms, cut_ms_) << who << " refused before the cut-over: " << first.word;
    EXPECT_EQ(first.after_ids, p.ids.size())
        << who << " issued " << p.ids.size() - first.after_ids
        << " ids after its first refusal; the last is " << p.ids.back();
    EXPECT_TRUE(p.only_words({"OUT_OF_RANGE"})) << who << ": " << p.words();
  }

  test_support::TempDir dir_{"snowidd-cut"};
  std::string host_lock_ = unique_host_lock();
  std::int64_t cut_ms_ = 0;
  int new_host_bits_ = 9;
};

// Four daemons on one file registry, pulled over RESP and HTTP from before
// the cut-over to after it. A (1/17) and B (1/18) start in the old era on
// real time. C (1/34) and D (1/37) start with a clock past the cut-over, so
// in the new era, and are then set back to real time before they issue: they
// answer OUT_OF_RANGE (no id of the new layout before its cut-over) until the
// cut-over and issue from its first millisecond on, the very instant from
// which A and B must stop. 1/34 of the new layout writes the bits of 1/17 of
// the old one for sequences below 2048, 1/37 those of 1/18 for sequences from
// 2048 on, so one id of A or B at or after the cut-over could equal an id of
// C or D. Then A and B are restarted, now in the new era, and issue above
// everything they issued before.
TEST_F(LayoutCutover, DaemonsOfBothErasPulledAcrossTheCutOverNeverIssueTheSameId) {
  write_history(cut_ahead(7000), "snowid-h9", 9);

  set_offset("a", 0);
  set_offset("b", 0);
  auto a = start_ready("a", 17);
  auto b = start_ready("b", 18);
  // Past the cut-over by a second, whenever they happen to start.
  set_clock_to("c", cut_ms_ + 1000);
  set_clock_to("d", cut_ms_ + 1000);
  auto c = start_ready("c", 34);
  auto d = start_ready("d", 37);
  set_offset("c", 0);
  set_offset("d", 0);
  EXPECT_EQ(info_value(socket("a"), "layout", "layout_name"), "snowid");
  EXPECT_EQ(info_value(socket("b"), "layout", "layout_name"), "snowid");
  EXPECT_EQ(info_value(socket("c"), "layout", "layout_name"), "snowid-h9");
  EXPECT_EQ(info_value(socket("d"), "layout", "layout_name"), "snowid-h9");
  EXPECT_EQ(info_value(socket("c"), "layout", "layout_bits_host"), "9");

  Pulled a_resp, a_http, b_resp, b_http, c_resp, c_http, d_resp, d_http;
  {
    Pullers pullers(cut_ms_);
    pullers.resp(socket("a"), &a_resp);
    pullers.http(a->http_port(), &a_http);
    pullers.resp(socket("b"), &b_resp);
    pullers.http(b->http_port(), &b_http);
    pullers.resp(socket("c"), &c_resp);
    pullers.http(c->http_port(), &c_http);
    pullers.resp(socket("d"), &d_resp);
    pullers.http(d->http_port(), &d_http);
    sleep_until_real_ms(cut_ms_ + 1500);
    pullers.stop();
  }

  for (const auto& [who, p, host] :
       {std::tuple{"A over RESP", &a_resp, 17u}, std::tuple{"A over HTTP", &a_http, 17u},
        std::tuple{"B over RESP", &b_resp, 18u}, std::tuple{"B over HTTP", &b_http, 18u}}) {
    expect_refused_from_the_cutover(*p, who, host);
    EXPECT_LT(p->max_id(), first_new_id()) << who;
  }
  for (const auto& [who, p, host] :
       {std::tuple{"C over RESP", &c_resp, 34u}, std::tuple{"C over HTTP", &c_http, 34u},
        std::tuple{"D over RESP", &d_resp, 37u}, std::tuple{"D over HTTP", &d_http, 37u}}) {
    EXPECT_EQ(p->problem, "") << who;
    EXPECT_FALSE(p->ids.empty()) << who << " issued nothing after the cut-over";
    EXPECT_TRUE(strictly_increasing(p->ids)) << who;
    EXPECT_EQ(first_misfit(p->ids, false, host), "") << who;
    // Refused before the cut-over only, then served.
    EXPECT_TRUE(p->only_words({"OUT_OF_RANGE"})) << who << ": " << p->words();
    for (const Pulled::Refusal& r : p->refusals) {
      ASSERT_EQ(r.after_ids, 0u) << who << " refused " << r.word << " after issuing";
    }
  }

  // A and B still refuse; DECODE on each daemon reads an id in its own era's
  // layout; the snowid tool, given the history, picks the era by value.
  auto a_conn = RespConn::connect_unix(socket("a"));
  ASSERT_TRUE(a_conn.has_value());
  const auto still = a_conn->command({"NEXTID"});
  ASSERT_TRUE(still.has_value());
  EXPECT_EQ(still->error_word(), "OUT_OF_RANGE") << still->debug();
  ASSERT_FALSE(a_resp.ids.empty());
  ASSERT_FALSE(c_http.ids.empty());
  const std::uint64_t a_last = a_resp.ids.back();
  const std::uint64_t c_first = c_http.ids.front();
  const auto decoded_a = a_conn->command({"DECODE", std::to_string(a_last)});
  ASSERT_TRUE(decoded_a.has_value());
  ASSERT_NE(decoded_a->field("host"), nullptr) << decoded_a->debug();
  EXPECT_EQ(decoded_a->field("host")->integer, 17) << decoded_a->debug();
  ASSERT_NE(decoded_a->field("unix_ms"), nullptr) << decoded_a->debug();
  EXPECT_LT(decoded_a->field("unix_ms")->integer, cut_ms_) << decoded_a->debug();
  const auto decoded_c = http_get(c->http_port(), "/v1/ids/" + std::to_string(c_first));
  ASSERT_TRUE(decoded_c.has_value());
  ASSERT_EQ(decoded_c->status, 200) << decoded_c->body;
  const json jc = json::parse(decoded_c->body, nullptr, false);
  ASSERT_TRUE(jc.is_object()) << decoded_c->body;
  EXPECT_EQ(jc.value("layout", ""), "snowid-h9") << decoded_c->body;
  EXPECT_GE(jc.value("unix_ms", std::int64_t{0}), cut_ms_) << decoded_c->body;
  ASSERT_TRUE(jc.contains("fields") && jc["fields"].is_object()) << decoded_c->body;
  EXPECT_EQ(jc["fields"].value("host", 0u), 34u) << decoded_c->body;
  EXPECT_EQ(jc["fields"].value("region", 0u), 1u) << decoded_c->body;

  // Restarted after the cut-over, on the same worker ids: the new era.
  a_conn.reset();
  a->signal(SIGTERM);
  b->signal(SIGTERM);
  EXPECT_EQ(a->wait_exit(seconds(30)), 0);
  EXPECT_EQ(b->wait_exit(seconds(30)), 0);
  a = start_ready("a", 17);
  b = start_ready("b", 18);
  EXPECT_EQ(info_value(socket("a"), "layout", "layout_name"), "snowid-h9");
  EXPECT_EQ(info_value(socket("a"), "layout", "layout_bits_host"), "9");
  EXPECT_EQ(info_value(socket("b"), "layout", "layout_name"), "snowid-h9");
  EXPECT_EQ(info_value(socket("a"), "worker", "host"), "17");
  Pulled a_after, b_after, c_more;
  for (const auto& [name, p] :
       {std::pair{"a", &a_after}, std::pair{"b", &b_after}, std::pair{"c", &c_more}}) {
    auto conn = RespConn::connect_unix(socket(name));
    ASSERT_TRUE(conn.has_value());
    take(*conn, 3, 1000, *p);
    EXPECT_EQ(p->problem, "") << name;
    EXPECT_EQ(p->words(), "none") << name;
    EXPECT_TRUE(strictly_increasing(p->ids)) << name;
  }
  EXPECT_EQ(first_misfit(a_after.ids, false, 17), "");
  EXPECT_EQ(first_misfit(b_after.ids, false, 18), "");
  // Each worker's ids go on increasing across the restart into the new era.
  EXPECT_GT(a_after.min_id(), std::max(a_resp.max_id(), a_http.max_id()));
  EXPECT_GT(b_after.min_id(), std::max(b_resp.max_id(), b_http.max_id()));
  EXPECT_GT(c_more.min_id(), std::max(c_resp.max_id(), c_http.max_id()));

  // The tool reads the history: the era by value.
  const ProcessResult tool =
      run_process({kSnowidCli, "decode", "--layout", history(), "--json", std::to_string(a_last),
                   std::to_string(c_first), std::to_string(a_after.ids.front())});
  ASSERT_EQ(tool.exit_code, 0) << tool.err;
  std::istringstream lines(tool.out);
  std::vector<json> decoded;
  for (std::string line; std::getline(lines, line);)
    decoded.push_back(json::parse(line, nullptr, false));
  ASSERT_EQ(decoded.size(), 3u) << tool.out;
  EXPECT_EQ(decoded[0].value("layout", ""), "snowid") << tool.out;
  EXPECT_EQ(decoded[0]["fields"].value("host", 0u), 17u) << tool.out;
  EXPECT_EQ(decoded[1].value("layout", ""), "snowid-h9") << tool.out;
  EXPECT_EQ(decoded[1]["fields"].value("host", 0u), 34u) << tool.out;
  EXPECT_EQ(decoded[2].value("layout", ""), "snowid-h9") << tool.out;
  EXPECT_EQ(decoded[2]["fields"].value("host", 0u), 17u) << tool.out;

  const Named all = {
      {"A/RESP", &a_resp.ids},       {"A/HTTP", &a_http.ids}, {"B/RESP", &b_resp.ids},
      {"B/HTTP", &b_http.ids},       {"C/RESP", &c_resp.ids}, {"C/HTTP", &c_http.ids},
      {"D/RESP", &d_resp.ids},       {"D/HTTP", &d_http.ids}, {"A restarted", &a_after.ids},
      {"B restarted", &b_after.ids}, {"C later", &c_more.ids}};
  EXPECT_EQ(first_repeat(all), "") << "among " << total_ids(all) << " ids";
  std::printf("[ cut-over ] %zu ids; old era A %zu/%zu, B %zu/%zu; new era C %zu/%zu, D %zu/%zu\n",
              total_ids(all), a_resp.ids.size(), a_http.ids.size(), b_resp.ids.size(),
              b_http.ids.size(), c_resp.ids.size(), c_http.ids.size(), d_resp.ids.size(),
              d_http.ids.size());
}

// Clocks stepped back from after the cut-over to before it, on a daemon of
// each era, by less than max_backward (100 ms) and by 2 s. An old-era daemon
// that stopped at the cut-over may finish its last millisecond but issues no
// id at or after the cut-over and none below what it issued; a new-era daemon
// issues no id before the cut-over and none below what it issued; the 2 s
// steps are refused as any step back that large is (CLOCK_MOVED_BACK). A
// restart on a clock still behind the new era's ids is refused (exit 1), and
// one on time after the cut-over takes the new era above every earlier id.
TEST_F(LayoutCutover, ClockSteppedBackAcrossTheCutOverRepeatsNoIdAndARestartBehindItIsRefused) {
  write_history(cut_ahead(3000), "snowid-h9", 9);
  set_offset("old", 0);
  auto old_era = start_ready("old", 17);
  ASSERT_EQ(info_value(socket("old"), "layout", "layout_name"), "snowid");
  Pulled old_across;
  {
    Pullers pullers(cut_ms_);
    pullers.resp(socket("old"), &old_across);
    sleep_until_real_ms(cut_ms_ + 300);
  }
  expect_refused_from_the_cutover(old_across, "the old-era daemon", 17);

  // Old era, back to 50 ms before the cut-over: its last millisecond may be
  // finished, nothing more.
  auto old_conn = RespConn::connect_unix(socket("old"));
  ASSERT_TRUE(old_conn.has_value());
  Pulled old_small;
  set_clock_to("old", cut_ms_ - 50);
  take(*old_conn, 30, 100, old_small);
  EXPECT_EQ(old_small.problem, "");
  EXPECT_TRUE(old_small.only_words({"OUT_OF_RANGE", "CLOCK_BEHIND"})) << old_small.words();
  EXPECT_TRUE(strictly_increasing(old_small.ids));
  EXPECT_EQ(first_misfit(old_small.ids, true, 17), "");
  if (!old_small.ids.empty()) {
    EXPECT_GT(old_small.min_id(), old_across.max_id());
  }
  // And 2 s before it: refused for good.
  Pulled old_far;
  set_clock_to("old", cut_ms_ - 2000);
  take(*old_conn, 5, 1, old_far);
  EXPECT_TRUE(old_far.ids.empty()) << old_far.ids.front();
  ASSERT_FALSE(old_far.refusals.empty());
  EXPECT_EQ(old_far.refusals.front().word, "CLOCK_MOVED_BACK") << old_far.words();
  EXPECT_TRUE(old_far.only_words({"CLOCK_MOVED_BACK", "UNHEALTHY"})) << old_far.words();

  // New era: started after the cut-over, set to 20 ms past it, then 60 ms
  // back from its last id (to 40 ms before the cut-over, or less if the
  // machine stalled), back to real time, and then to 2 s before the cut-over.
  set_offset("new", 0);
  auto new_era = start_ready("new", 34);
  ASSERT_EQ(info_value(socket("new"), "layout", "layout_name"), "snowid-h9");
  auto new_conn = RespConn::connect_unix(socket("new"));
  ASSERT_TRUE(new_conn.has_value());
  Pulled new_near, new_small, new_again, new_far;
  set_clock_to("new", cut_ms_ + 20);
  take(*new_conn, 1, 100, new_near);
  EXPECT_EQ(new_near.words(), "none");
  ASSERT_FALSE(new_near.ids.empty());
  const std::int64_t last_ms = static_cast<std::int64_t>(new_near.max_id() >> 22) + kEpochMs;
  set_clock_to("new", std::min(cut_ms_ - 1, last_ms - 60));
  take(*new_conn, 30, 100, new_small);
  set_offset("new", 0);
  take(*new_conn, 5, 100, new_again);
  set_clock_to("new", cut_ms_ - 2000);
  take(*new_conn, 5, 1, new_far);
  for (const auto& [who, p] :
       {std::pair{"20 ms after", &new_near}, std::pair{"60 ms back", &new_small},
        std::pair{"back on time", &new_again}, std::pair{"2 s before", &new_far}}) {
    EXPECT_EQ(p->problem, "") << who;
    EXPECT_TRUE(strictly_increasing(p->ids)) << who;
    EXPECT_EQ(first_misfit(p->ids, false, 34), "") << who;
  }
  // A step back of less than max_backward is waited out or refused, never
  // an id below one issued; one of 2 s is refused for good.
  EXPECT_TRUE(new_small.only_words({"OUT_OF_RANGE", "CLOCK_BEHIND"})) << new_small.words();
  if (!new_small.ids.empty()) {
    EXPECT_GT(new_small.min_id(), new_near.max_id());
  }
  const std::uint64_t before_again = std::max(new_near.max_id(), new_small.max_id());
  EXPECT_EQ(new_again.words(), "none");
  ASSERT_FALSE(new_again.ids.empty());
  EXPECT_GT(new_again.min_id(), before_again);
  EXPECT_TRUE(new_far.ids.empty());
  ASSERT_FALSE(new_far.refusals.empty());
  EXPECT_EQ(new_far.refusals.front().word, "CLOCK_MOVED_BACK") << new_far.words();
  EXPECT_TRUE(new_far.only_words({"CLOCK_MOVED_BACK", "UNHEALTHY"})) << new_far.words();
  std::printf(
      "[ cut-over ] step back of the old era: %zu ids, refusals %s; of the new era: %zu "
      "ids, refusals %s\n",
      old_small.ids.size(), old_small.words().c_str(), new_small.ids.size(),
      new_small.words().c_str());

  // Both stop; a restart on the clock 2 s before the cut-over is behind the
  // new era's ids of worker 1/34 (its fence and mark): refused.
  old_conn.reset();
  new_conn.reset();
  old_era->signal(SIGTERM);
  new_era->signal(SIGTERM);
  EXPECT_TRUE(old_era->wait_exit(seconds(30)).has_value());
  EXPECT_TRUE(new_era->wait_exit(seconds(30)).has_value());
  {
    auto behind = start("new", 34);
    EXPECT_EQ(behind->wait_exit(seconds(30)), 1) << behind->raw_text();
    EXPECT_FALSE(behind->wait_for("ready", milliseconds(0)).has_value());
  }

  // On time, both workers come back in the new era above all they issued.
  set_offset("old", 0);
  set_offset("new", 0);
  old_era = start_ready("old", 17);
  new_era = start_ready("new", 34);
  EXPECT_EQ(info_value(socket("old"), "layout", "layout_name"), "snowid-h9");
  EXPECT_EQ(info_value(socket("new"), "layout", "layout_name"), "snowid-h9");
  Pulled old_restarted, new_restarted;
  for (const auto& [name, p] :
       {std::pair{"old", &old_restarted}, std::pair{"new", &new_restarted}}) {
    auto conn = RespConn::connect_unix(socket(name));
    ASSERT_TRUE(conn.has_value());
    take(*conn, 3, 1000, *p);
    EXPECT_EQ(p->problem, "") << name;
    EXPECT_EQ(p->words(), "none") << name;
  }
  EXPECT_EQ(first_misfit(old_restarted.ids, false, 17), "");
  EXPECT_EQ(first_misfit(new_restarted.ids, false, 34), "");
  EXPECT_GT(old_restarted.min_id(), std::max(old_across.max_id(), old_small.max_id()));
  EXPECT_GT(new_restarted.min_id(), std::max(before_again, new_again.max_id()));

  const Named all = {{"old era across", &old_across.ids},  {"old era 50 ms back", &old_small.ids},
                     {"new era near", &new_near.ids},      {"new era 60 ms back", &new_small.ids},
                     {"new era on time", &new_again.ids},  {"old restarted", &old_restarted.ids},
                     {"new restarted", &new_restarted.ids}};
  EXPECT_EQ(first_repeat(all), "") << "among " << total_ids(all) << " ids";
}

// Worker 1/34 issues in the new era 1.5 s after the cut-over, stops
// cleanly, and its lease mark is lost (both copies, as when the registry
// forgets the id); its time fence is left. Restarted on a clock half a second
// before the cut-over, 2 s behind that fence, it is in the old era again,
// whose ids all sort below the new era's ids it issued. docs/daemon.md says a
// restart behind the fence is refused (exit 1); what uniqueness needs is that
// it serves nothing at or below what the worker id issued, also as its clock
// passes the cut-over. The test asserts that, and accepts either a refused
// start or a start that refuses every id (it prints which happened).
TEST_F(LayoutCutover, RestartOnAClockBeforeTheCutOverWithOnlyTheFenceLeftIssuesNothingBelow) {
  write_history(cut_ahead(2000), "snowid-h9", 9);
  sleep_until_real_ms(cut_ms_ + 1500);
  set_offset("new", 0);
  Pulled before;
  {
    auto d = start_ready("new", 34);
    ASSERT_EQ(info_value(socket("new"), "layout", "layout_name"), "snowid-h9");
    auto conn = RespConn::connect_unix(socket("new"));
    ASSERT_TRUE(conn.has_value());
    take(*conn, 3, 1000, before);
    conn.reset();
    d->signal(SIGTERM);
    EXPECT_EQ(d->wait_exit(seconds(30)), 0);
  }
  ASSERT_EQ(before.words(), "none");
  EXPECT_EQ(first_misfit(before.ids, false, 34), "");
  for (const std::string& mark :
       {dir_.file("state") + "/workers/r1-h34.mark", dir_.file("host") + "/r1-h34.mark"}) {
    ASSERT_EQ(std::remove(mark.c_str()), 0) << "no mark file at " << mark;
  }

  set_clock_to("new", cut_ms_ - 500);
  auto d = start("new", 34);
  const bool ready = d->wait_ready();
  Pulled after;
  int readyz = 0;
  if (ready) {
    const auto probe = http_get(d->http_port(), "/readyz");
    readyz = probe ? probe->status : -1;
    // Old era again; pulled until its clock is past the cut-over.
    EXPECT_EQ(info_value(socket("new"), "layout", "layout_name"), "snowid");
    auto conn = RespConn::connect_unix(socket("new"));
    ASSERT_TRUE(conn.has_value());
    const auto until = std::chrono::steady_clock::now() + milliseconds(1500);
    while (std::chrono::steady_clock::now() < until && after.problem.empty()) {
      take(*conn, 1, 100, after);
      std::this_thread::sleep_for(milliseconds(5));
    }
    EXPECT_EQ(after.problem, "");
  } else {
    EXPECT_EQ(d->wait_exit(seconds(30)), 1) << d->raw_text();
  }
  std::printf(
      "[ cut-over ] restart 0.5 s before the cut-over without the mark: %s (/readyz %d); %zu "
      "ids, refusals %s\n",
      ready ? "started" : "refused to start", readyz, after.ids.size(), after.words().c_str());
  EXPECT_TRUE(after.ids.empty() || after.min_id() > before.max_id())
      << "worker 1/34 issued " << after.ids.size() << " ids after the restart, from "
      << after.min_id() << ", at or below its last id before it, " << before.max_id();
  const Named all = {{"before the restart", &before.ids}, {"after it", &after.ids}};
  EXPECT_EQ(first_repeat(all), "") << "among " << total_ids(all) << " ids";
}

// The new layout has fewer host bits (7, so workers 0 to 127 of a region)
// and more sequence bits. A daemon pinned to 1/200 starts before the
// cut-over: its era is the old one, where 200 fits, and it serves until the
// cut-over like any daemon of that era, then answers OUT_OF_RANGE. Beside it
// 1/100 of the new layout (the same bits as 1/200 of the old) serves from
// the cut-over on. Restarted after the cut-over, 1/200 does not fit the
// layout in effect: a configuration error (exit 2) naming the bounds; an
// unpinned restart leases an id of the new, smaller block.
TEST_F(LayoutCutover, WorkerIdTheNewLayoutCannotHoldIsServedUntilTheCutOverAndRefusedAtRestart) {
  write_history(cut_ahead(3000), "snowid-h7", 7);
  set_offset("w", 0);
  set_offset("n", 0);
  auto w = start_ready("w", 200);
  EXPECT_EQ(info_value(socket("w"), "layout", "layout_name"), "snowid");
  EXPECT_EQ(info_value(socket("w"), "worker", "host"), "200");
  Pulled w_resp, w_http;
  {
    Pullers pullers(cut_ms_);
    pullers.resp(socket("w"), &w_resp);
    pullers.http(w->http_port(), &w_http);
    sleep_until_real_ms(cut_ms_ + 300);
  }
  expect_refused_from_the_cutover(w_resp, "1/200 over RESP", 200);
  expect_refused_from_the_cutover(w_http, "1/200 over HTTP", 200);

  auto n = start_ready("n", 100);
  EXPECT_EQ(info_value(socket("n"), "layout", "layout_name"), "snowid-h7");
  EXPECT_EQ(info_value(socket("n"), "layout", "layout_bits_host"), "7");
  Pulled n_ids, w_later;
  {
    auto conn = RespConn::connect_unix(socket("n"));
    ASSERT_TRUE(conn.has_value());
    take(*conn, 3, 1000, n_ids);
    auto w_conn = RespConn::connect_unix(socket("w"));
    ASSERT_TRUE(w_conn.has_value());
    take(*w_conn, 3, 100, w_later);
  }
  EXPECT_EQ(n_ids.words(), "none");
  EXPECT_EQ(first_misfit(n_ids.ids, false, 100), "");
  EXPECT_TRUE(w_later.ids.empty());
  EXPECT_TRUE(w_later.only_words({"OUT_OF_RANGE"})) << w_later.words();

  w->signal(SIGTERM);
  EXPECT_EQ(w->wait_exit(seconds(30)), 0);
  {
    auto pinned = start("w", 200);
    EXPECT_EQ(pinned->wait_exit(seconds(30)), 2);
    EXPECT_FALSE(pinned->wait_for("ready", milliseconds(0)).has_value());
    const auto failed = pinned->wait_for("start failed", milliseconds(0));
    ASSERT_TRUE(failed.has_value()) << pinned->raw_text();
    EXPECT_EQ(failed->value("code", ""), "INVALID_ARGUMENT") << failed->dump();
    const std::string why = failed->value("error", "");
    EXPECT_NE(why.find("0..127"), std::string::npos) << why;
    EXPECT_NE(why.find("200"), std::string::npos) << why;
  }
  auto unpinned = start_ready("w", std::nullopt);
  EXPECT_EQ(info_value(socket("w"), "layout", "layout_name"), "snowid-h7");
  const std::string host_text = info_value(socket("w"), "worker", "host");
  ASSERT_FALSE(host_text.empty());
  const auto unpinned_host = static_cast<std::uint32_t>(std::stoul(host_text));
  EXPECT_LT(unpinned_host, 128u);
  EXPECT_NE(unpinned_host, 100u);
  Pulled u_ids;
  {
    auto conn = RespConn::connect_unix(socket("w"));
    ASSERT_TRUE(conn.has_value());
    take(*conn, 3, 1000, u_ids);
  }
  EXPECT_EQ(u_ids.words(), "none");
  EXPECT_EQ(first_misfit(u_ids.ids, false, unpinned_host), "");

  const Named all = {{"1/200 over RESP", &w_resp.ids},
                     {"1/200 over HTTP", &w_http.ids},
                     {"1/100", &n_ids.ids},
                     {"unpinned restart", &u_ids.ids}};
  EXPECT_EQ(first_repeat(all), "") << "among " << total_ids(all) << " ids";
}

}  // namespace
}  // namespace snowid::daemon_test
