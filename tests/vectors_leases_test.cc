// Checks the etcd registry's pure parts against vectors/leases.json (schema
// in vectors/README.md): keys, holder, mark and store values, quarantine,
// wait_until and the bounds of the timing and etcd options. Every expected
// value there was derived from docs/protocol.md, independently of this code.
#include <gtest/gtest.h>

#include <charconv>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "snowid/etcd_registry.h"
#include "snowid/lease.h"
#include "snowid/lease_keeper.h"
#include "snowid/testing/simulated_clock.h"
#include "worker_keys.h"
#include "worker_values.h"

#ifndef SNOWID_VECTORS_DIR
#error "SNOWID_VECTORS_DIR must name the vectors directory"
#endif

namespace snowid::etcd {
namespace {

using nlohmann::json;

const json& file() {
  static const json j = [] {
    const std::string path = std::string(SNOWID_VECTORS_DIR) + "/leases.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return json::parse(in);
  }();
  return j;
}

std::int64_t i64(const json& j) {
  const std::string s = j.get<std::string>();
  std::int64_t v = 0;
  const auto [end, err] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (err != std::errc() || end != s.data() + s.size()) throw std::runtime_error("bad number " + s);
  return v;
}

Duration ms(std::int64_t n) { return std::chrono::milliseconds(n); }
WallTime at_ms(const json& j) { return wall_from_unix_ms(j.get<std::int64_t>()); }
WallTime at_ns(const json& j) { return WallTime(Duration(i64(j))); }
std::string code_of(const Status& s) { return std::string(code_name(s.code())); }

std::optional<WallTime> optional_ms(const json& obj, const char* name) {
  if (!obj.contains(name)) return std::nullopt;
  return at_ms(obj.at(name));
}

TEST(LeaseVectors, NamespacesAreCheckedLikeTheRegistryOptions) {
  ASSERT_EQ(file().at("schema"), "snowid-vectors/leases/1");
  for (const json& c : file().at("namespaces")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    EtcdOptions o;
    o.endpoints = {"http://127.0.0.1:2379"};
    o.prefix = c.at("prefix").get<std::string>();
    o.cluster = c.at("cluster").get<std::string>();
    const Status s = validate_etcd_options(o);
    EXPECT_EQ(code_of(s), c.value("error", std::string("OK"))) << s.to_string();
  }
}

TEST(LeaseVectors, KeysOfAWorker) {
  for (const json& c : file().at("keys")) {
    const WorkerKeys keys(c.at("prefix").get<std::string>(), c.at("cluster").get<std::string>());
    const WorkerId w{c.at("region").get<std::uint32_t>(), c.at("host").get<std::uint32_t>()};
    EXPECT_EQ(keys.holder(w), c.at("holder").get<std::string>());
    EXPECT_EQ(keys.mark(w), c.at("mark").get<std::string>());
    EXPECT_EQ(keys.region(w.region), c.at("region_prefix").get<std::string>());
    EXPECT_EQ(keys.all(), c.at("workers_prefix").get<std::string>());
    EXPECT_EQ(keys.store(), c.at("store").get<std::string>());
  }
}

TEST(LeaseVectors, KeysAreParsedOrSkipped) {
  for (const json& c : file().at("key_parses")) {
    SCOPED_TRACE(c.at("key").get<std::string>());
    const WorkerKeys keys(c.at("prefix").get<std::string>(), c.at("cluster").get<std::string>());
    const std::optional<WorkerKeys::Parsed> p = keys.parse(c.at("key").get<std::string>());
    ASSERT_EQ(p.has_value(), c.contains("parsed"));
    if (!p) continue;
    const json& want = c.at("parsed");
    EXPECT_EQ(p->worker.region, want.at("region").get<std::uint32_t>());
    EXPECT_EQ(p->worker.host, want.at("host").get<std::uint32_t>());
    EXPECT_EQ(p->is_holder, want.at("kind") == "holder");
  }
}

void expect_holder(const HolderValue& v, const json& want) {
  EXPECT_EQ(v.info.host, want.at("host").get<std::string>());
  EXPECT_EQ(v.info.pid, want.at("pid").get<std::int64_t>());
  EXPECT_EQ(unix_ms(v.info.started), want.at("started_ms").get<std::int64_t>());
  EXPECT_EQ(v.info.address, want.at("address").get<std::string>());
  EXPECT_EQ(v.lease, i64(want.at("lease")));
}

TEST(LeaseVectors, HolderValues) {
  for (const json& c : file().at("holders")) {
    const json& v = c.at("value");
    HolderInfo info{v.at("host").get<std::string>(), v.at("pid").get<std::int64_t>(),
                    at_ms(v.at("started_ms")), v.at("address").get<std::string>()};
    const std::string text = encode_holder(info, i64(v.at("lease")));
    EXPECT_EQ(text, c.at("text").get<std::string>());
    Result<HolderValue> back = decode_holder(c.at("text").get<std::string>());
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    expect_holder(back.value(), c.contains("decoded") ? c.at("decoded") : v);
  }
  for (const json& c : file().at("holder_reads")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    Result<HolderValue> r = decode_holder(c.at("text").get<std::string>());
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    expect_holder(r.value(), c.at("value"));
  }
  for (const json& c : file().at("holder_errors")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    Result<HolderValue> r = decode_holder(c.at("text").get<std::string>());
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>());
  }
}

void expect_mark(const MarkValue& m, const json& want) {
  auto got = [](const std::optional<WallTime>& t) {
    return t ? std::optional<std::int64_t>(unix_ms(*t)) : std::nullopt;
  };
  auto wanted = [&](const char* name) {
    return want.contains(name) ? std::optional<std::int64_t>(want.at(name).get<std::int64_t>())
                               : std::nullopt;
  };
  EXPECT_EQ(got(m.high_water), wanted("high_water_ms"));
  EXPECT_EQ(got(m.released_at), wanted("released_at_ms"));
  EXPECT_EQ(got(m.clean_release), wanted("clean_release_ms"));
}

MarkValue mark_from_ms(const json& v) {
  MarkValue m;
  m.high_water = optional_ms(v, "high_water_ms");
  m.released_at = optional_ms(v, "released_at_ms");
  m.clean_release = optional_ms(v, "clean_release_ms");
  return m;
}

TEST(LeaseVectors, MarkValues) {
  for (const json& c : file().at("marks")) {
    const json& v = c.at("value");
    MarkValue m;
    if (v.contains("high_water_ns")) m.high_water = at_ns(v.at("high_water_ns"));
    if (v.contains("released_at_ns")) m.released_at = at_ns(v.at("released_at_ns"));
    if (v.contains("clean_release_ns")) m.clean_release = at_ns(v.at("clean_release_ns"));
    EXPECT_EQ(encode_mark(m), c.at("text").get<std::string>());
    Result<MarkValue> back = decode_mark(c.at("text").get<std::string>());
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    expect_mark(back.value(), c.at("decoded"));
  }
  for (const json& c : file().at("mark_reads")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    Result<MarkValue> r = decode_mark(c.at("text").get<std::string>());
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    expect_mark(r.value(), c.at("value"));
    EXPECT_EQ(released_clean(r.value()), c.at("clean").get<bool>());
  }
  for (const json& c : file().at("mark_errors")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    Result<MarkValue> r = decode_mark(c.at("text").get<std::string>());
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>());
  }
}

void expect_store(const StoreValue& v, const json& want) {
  EXPECT_EQ(v.incarnation, want.at("incarnation").get<std::string>());
  EXPECT_EQ(v.high_water.has_value(), want.contains("high_water_ms"));
  if (v.high_water) EXPECT_EQ(unix_ms(*v.high_water), want.at("high_water_ms").get<std::int64_t>());
  EXPECT_EQ(v.reason, want.at("reason").get<std::string>());
  EXPECT_EQ(unix_ms(v.written_at), want.at("written_ms").get<std::int64_t>());
}

TEST(LeaseVectors, StoreRecords) {
  for (const json& c : file().at("stores")) {
    const json& v = c.at("value");
    StoreValue s;
    s.incarnation = v.at("incarnation").get<std::string>();
    if (v.contains("high_water_ns")) s.high_water = at_ns(v.at("high_water_ns"));
    s.reason = v.at("reason").get<std::string>();
    s.written_at = at_ns(v.at("written_ns"));
    EXPECT_EQ(encode_store(s), c.at("text").get<std::string>());
    Result<StoreValue> back = decode_store(c.at("text").get<std::string>());
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    expect_store(back.value(), c.at("decoded"));
  }
  for (const json& c : file().at("store_reads")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    Result<StoreValue> r = decode_store(c.at("text").get<std::string>());
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    expect_store(r.value(), c.at("value"));
  }
  for (const json& c : file().at("store_errors")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    Result<StoreValue> r = decode_store(c.at("text").get<std::string>());
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(code_of(r.status()), c.at("error").get<std::string>());
  }
}

TEST(LeaseVectors, QuarantineEligibility) {
  for (const json& c : file().at("eligibility")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    const std::optional<WallTime> from =
        c.contains("mark") ? free_from(mark_from_ms(c.at("mark")), ms(c.at("quarantine_ms")))
                           : std::nullopt;
    const WallTime now = at_ms(c.at("now_ms"));
    const bool eligible = !c.at("held").get<bool>() && (!from || now >= *from);
    EXPECT_EQ(eligible, c.at("eligible").get<bool>());
    if (!c.at("held").get<bool>()) {
      EXPECT_EQ(from.has_value(), c.contains("free_from_ms"));
      if (from) EXPECT_EQ(unix_ms(*from), c.at("free_from_ms").get<std::int64_t>());
    }
  }
}

// A registry that grants one id with a given previous high-water mark, so
// that the keeper's wait_until can be read off.
class GrantingRegistry final : public WorkerRegistry {
 public:
  explicit GrantingRegistry(std::optional<WallTime> previous) : previous_(previous) {}
  Result<LeaseGrant> acquire(const LeaseRequest& request) override {
    LeaseGrant g;
    g.worker = WorkerId{request.region, 0};
    g.token = "vector";
    g.previous_high_water = previous_;
    return g;
  }
  using WorkerRegistry::renew;
  Status renew(const LeaseGrant&, WallTime, Duration) override { return Status::ok(); }
  Status release(const LeaseGrant&, WallTime) override { return Status::ok(); }
  void abandon(const LeaseGrant&) noexcept override {}
  Result<bool> wait_lost(const LeaseGrant&, Duration) override { return false; }
  void wake_waiters() noexcept override {}
  Result<std::vector<WorkerRecord>> list(std::optional<std::uint32_t>) override {
    return std::vector<WorkerRecord>{};
  }
  Status fence(WorkerId) override { return Status::ok(); }

 private:
  std::optional<WallTime> previous_;
};

TEST(LeaseVectors, WaitUntilOfANewHolder) {
  for (const json& c : file().at("wait_until")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    const std::optional<WallTime> previous = grant_previous_high_water(
        optional_ms(c, "previous_high_water_ms"), optional_ms(c, "store_high_water_ms"));
    testing::SimulatedClock clock(wall_from_unix_ms(1772359200000));
    GrantingRegistry registry(previous);
    LeaseKeeperOptions o;
    o.timing.max_clock_skew = ms(c.at("max_clock_skew_ms").get<std::int64_t>());
    Result<std::unique_ptr<LeaseKeeper>> k = LeaseKeeper::acquire(clock, registry, o);
    ASSERT_TRUE(k.is_ok()) << k.status().to_string();
    const std::optional<WallTime> until = k.value()->wait_until();
    ASSERT_EQ(until.has_value(), c.contains("wait_until_ms"));
    if (until) EXPECT_EQ(unix_ms(*until), c.at("wait_until_ms").get<std::int64_t>());
  }
}

TEST(LeaseVectors, TimingBounds) {
  for (const json& c : file().at("timings")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    LeaseTiming t;
    t.ttl = ms(c.at("ttl_ms").get<std::int64_t>());
    t.renew_every = ms(c.at("renew_every_ms").get<std::int64_t>());
    t.stop_after = ms(c.at("stop_after_ms").get<std::int64_t>());
    t.max_clock_skew = ms(c.at("max_clock_skew_ms").get<std::int64_t>());
    const Status s = validate(t);
    EXPECT_EQ(code_of(s), c.value("error", std::string("OK"))) << s.to_string();
  }
  for (const json& c : file().at("etcd_options")) {
    SCOPED_TRACE(c.at("note").get<std::string>());
    EtcdOptions o;
    o.endpoints = {"http://127.0.0.1:2379"};
    o.quarantine = ms(c.at("quarantine_ms").get<std::int64_t>());
    o.request_timeout = ms(c.at("request_timeout_ms").get<std::int64_t>());
    const Status s = validate_etcd_options(o);
    EXPECT_EQ(code_of(s), c.value("error", std::string("OK"))) << s.to_string();
  }
}

}  // namespace
}  // namespace snowid::etcd
