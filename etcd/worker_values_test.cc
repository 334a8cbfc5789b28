#include "worker_values.h"

#include <gtest/gtest.h>

#include "worker_keys.h"

namespace snowid::etcd {
namespace {

TEST(WorkerKeys, BuildAndParseTheKeysOfOneCluster) {
  const WorkerKeys keys("/snowid", "prod");
  EXPECT_EQ(keys.all(), "/snowid/prod/workers/");
  EXPECT_EQ(keys.region(2), "/snowid/prod/workers/2/");
  EXPECT_EQ(keys.holder({2, 17}), "/snowid/prod/workers/2/17/holder");
  EXPECT_EQ(keys.mark({0, 255}), "/snowid/prod/workers/0/255/mark");
  const auto h = keys.parse("/snowid/prod/workers/2/17/holder");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->worker, (WorkerId{2, 17}));
  EXPECT_TRUE(h->is_holder);
  EXPECT_FALSE(keys.parse("/snowid/prod/workers/2/17/mark")->is_holder);
  for (const char* foreign :
       {"/snowid/prodx/workers/2/17/holder", "/snowid/prod/workers/2/17",
        "/snowid/prod/workers/02/1/mark", "/snowid/prod/workers/2/1/markx",
        "/snowid/prod/workers/a/1/mark", "/snowid/prod/workers/4294967296/1/mark",
        "/snowid/prod/workers//1/mark"}) {
    EXPECT_FALSE(keys.parse(foreign).has_value()) << foreign;
  }
}

TEST(HolderValue, RoundTripsWhatOperatorsSee) {
  HolderInfo info{"web-1", 4242, wall_from_unix_ms(1772359200123), "10.0.0.5:7000"};
  const std::string text = encode_holder(info, 0x694d7f3a1c2b9e05);
  EXPECT_NE(text.find(R"("lease":"694d7f3a1c2b9e05")"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("started":"2026-03-01T10:00:00.123Z")"), std::string::npos) << text;
  Result<HolderValue> back = decode_holder(text);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->info.host, "web-1");
  EXPECT_EQ(back->info.pid, 4242);
  EXPECT_EQ(back->info.started, info.started);
  EXPECT_EQ(back->info.address, "10.0.0.5:7000");
  EXPECT_EQ(back->lease, 0x694d7f3a1c2b9e05);
}

TEST(HolderValue, UnreadableValuesAreDataLoss) {
  for (const char* bad : {"", "{}", "[1]", R"({"lease":"xyz"})", R"({"lease":"1","pid":"7"})",
                          R"({"lease":"1","started":"yesterday"})"}) {
    Result<HolderValue> r = decode_holder(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), Code::kDataLoss) << bad;
    }
  }
}

TEST(MarkValue, RoundsTheHighWaterMarkUpToTheMillisecond) {
  MarkValue m;
  m.high_water = wall_from_unix_ms(1000) + std::chrono::microseconds(1);
  const std::string text = encode_mark(m);
  EXPECT_EQ(text, R"({"high_water_ms":1001})");
  Result<MarkValue> back = decode_mark(text);
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(back->high_water, wall_from_unix_ms(1001));
  EXPECT_FALSE(back->released_at.has_value());

  m.released_at = wall_from_unix_ms(900);
  back = decode_mark(encode_mark(m));
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(back->released_at, wall_from_unix_ms(900));
  for (const char* bad : {"x", R"({"high_water_ms":"1"})", R"({"high_water_ms":1e300})",
                          R"({"released_at_ms":99999999999999999})"}) {
    Result<MarkValue> r = decode_mark(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), Code::kDataLoss);
    }
  }
}

TEST(StoreValue, RoundTripsAndKeepsTheRecordsKey) {
  EXPECT_EQ(WorkerKeys("/snowid", "prod").store(), "/snowid/prod/store");
  EXPECT_FALSE(WorkerKeys("/snowid", "prod").parse("/snowid/prod/store"));
  StoreValue v;
  v.incarnation = "3f9c0a7d5e2b4c18";
  v.high_water = wall_from_unix_ms(1'772'359'208'123) + std::chrono::microseconds(1);
  v.reason = "etcd's revision went back";
  v.written_at = wall_from_unix_ms(1'772'359'200'123);
  const std::string text = encode_store(v);
  EXPECT_EQ(text,
            "{\"high_water_ms\":1772359208124,\"incarnation\":\"3f9c0a7d5e2b4c18\","
            "\"reason\":\"etcd's revision went back\",\"written_ms\":1772359200123}");
  Result<StoreValue> back = decode_store(text);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->incarnation, v.incarnation);
  EXPECT_EQ(back->high_water, wall_from_unix_ms(1'772'359'208'124));
  EXPECT_EQ(back->reason, v.reason);
  v.high_water.reset();
  back = decode_store(encode_store(v));
  ASSERT_TRUE(back.is_ok());
  EXPECT_FALSE(back->high_water);
}

TEST(StoreValue, UnreadableRecordsAreDataLoss) {
  for (const char* bad :
       {"", "[]", "{}", "{\"incarnation\":\"12\"}", "{\"incarnation\":\"zzzzzzzzzzzzzzzz\"}",
        "{\"incarnation\":\"3f9c0a7d5e2b4c18\",\"high_water_ms\":\"x\"}"}) {
    Result<StoreValue> r = decode_store(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kDataLoss) << bad;
  }
}

TEST(MarkValue, ACleanReleaseRoundTripsAndVouchesOnlyForTheHighWaterItRecorded) {
  MarkValue m;
  m.high_water = wall_from_unix_ms(1772359200123);
  m.released_at = wall_from_unix_ms(1772359200150);
  m.clean_release = m.high_water;
  const std::string text = encode_mark(m);
  EXPECT_EQ(text, R"({"clean_release_ms":1772359200123,"high_water_ms":1772359200123,)"
                  R"("released_at_ms":1772359200150})");
  Result<MarkValue> back = decode_mark(text);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->clean_release, m.high_water);
  EXPECT_TRUE(released_clean(back.value()));

  // A later holder raised the mark: what the release vouched for is stale.
  MarkValue raised = back.value();
  raised.high_water = wall_from_unix_ms(1772359208200);
  EXPECT_FALSE(released_clean(raised));
  // No release time, or no clean release at all (a fence, an expiry).
  MarkValue no_release = back.value();
  no_release.released_at.reset();
  EXPECT_FALSE(released_clean(no_release));
  MarkValue plain = back.value();
  plain.clean_release.reset();
  EXPECT_FALSE(released_clean(plain));
}

TEST(MarkValue, ValuesFromBeforeCleanReleasesReadAsNotClean) {
  Result<MarkValue> old = decode_mark(R"({"high_water_ms":1001,"released_at_ms":900})");
  ASSERT_TRUE(old.is_ok()) << old.status().to_string();
  EXPECT_EQ(old->high_water, wall_from_unix_ms(1001));
  EXPECT_FALSE(old->clean_release.has_value());
  EXPECT_FALSE(released_clean(old.value()));
  // An unknown member is ignored, as older versions ignore clean_release_ms.
  EXPECT_TRUE(decode_mark(R"({"high_water_ms":1,"future_ms":2})").is_ok());
  Result<MarkValue> bad = decode_mark(R"({"high_water_ms":1,"clean_release_ms":"1"})");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), Code::kDataLoss);
}

TEST(GrantToken, RoundTripsAndRefusesForeignTokens) {
  const GrantToken t{0x7fffffffffffffff, 123, WorkerId{3, 255}};
  Result<GrantToken> back = decode_token(encode_token(t));
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->lease, t.lease);
  EXPECT_EQ(back->create_revision, 123);
  EXPECT_EQ(back->worker, t.worker);
  for (const char* bad : {"", "etcd:", "etcd:1:2:3", "etcd:1:2:3:4:5", "file:1:2:3:4",
                          "etcd:0:2:3:4", "etcd:1:0:3:4", "etcd:1:02:3:4", "etcd:g:2:3:4"}) {
    Result<GrantToken> r = decode_token(bad);
    EXPECT_FALSE(r.is_ok()) << bad;
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    }
  }
}

}  // namespace
}  // namespace snowid::etcd
