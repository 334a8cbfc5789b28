// snowid::public_id against vectors/public_ids.json (docs/public-id.md).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "snowid/ff1.h"
#include "snowid/public_id.h"
#include "snowid/testing/simulated_clock.h"

namespace snowid {
namespace {

using nlohmann::json;

const json& vectors() {
  static const json doc = [] {
    std::ifstream in(std::string(SNOWID_VECTORS_DIR) + "/public_ids.json");
    return json::parse(in);
  }();
  return doc;
}

std::vector<std::uint8_t> bytes_of(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::uint64_t u64(const json& v) { return std::stoull(v.get<std::string>()); }

class PublicIdVectors : public ::testing::Test {
 protected:
  PublicIdCodec codec(const std::string& keyring) {
    for (const json& k : vectors().at("keyrings")) {
      if (k.at("name") != keyring) continue;
      PublicIdCodec::Options o;
      o.clock = &clock_;
      return std::move(PublicIdCodec::create(
                           PublicIdKeyring::parse(k.at("text").get<std::string>()).value(), o))
          .value();
    }
    ADD_FAILURE() << "no keyring " << keyring;
    std::abort();
  }
  testing::SimulatedClock clock_{wall_from_unix_ms(vectors().at("clock_ms").get<std::int64_t>())};
};

TEST_F(PublicIdVectors, Ff1Radix2Length63) {
  std::map<std::string, std::string> keys;
  for (const json& k : vectors().at("keys")) keys[k.at("name")] = k.at("key");
  for (const json& c : vectors().at("ff1_63")) {
    Ff1Binary63 ff1 = std::move(Ff1Binary63::create(bytes_of(keys.at(c.at("key"))))).value();
    const Ff1Binary63::Tweak tw = ff1.absorb(bytes_of(c.at("tweak"))).value();
    EXPECT_EQ(ff1.encrypt(tw, u64(c.at("x"))).value(), u64(c.at("y"))) << c.dump();
    EXPECT_EQ(ff1.decrypt(tw, u64(c.at("y"))).value(), u64(c.at("x"))) << c.dump();
  }
}

TEST_F(PublicIdVectors, Fingerprints) {
  for (const json& k : vectors().at("keys")) {
    const std::string text = "snowid-public-id-keys 1\n0 primary 2026-01-01T00:00:00Z a " +
                             k.at("key").get<std::string>() + "\n";
    EXPECT_EQ(PublicIdKeyring::parse(text)->slot(0)->fingerprint, k.at("fingerprint"));
  }
}

TEST_F(PublicIdVectors, WrapsAndUnwraps) {
  int checked = 0;
  for (const json& c : vectors().at("wraps")) {
    SCOPED_TRACE(c.dump());
    const PublicIdCodec k = codec(c.at("keyring"));
    const std::uint64_t id = u64(c.at("id"));
    const std::string type = c.at("type");
    EXPECT_EQ(k.wrapping_slot(id), c.at("slot").get<int>());
    EXPECT_EQ(k.wrap(type, id)->view(), c.at("compact").get<std::string>());
    EXPECT_EQ(k.wrap(type, id, PublicIdForm::kSealed)->view(), c.at("sealed").get<std::string>());
    for (const char* form : {"compact", "sealed"}) {
      Result<Unwrapped> u = k.unwrap(c.at(form).get<std::string>());
      if (c.at("unwrap") == "OK") {
        ASSERT_TRUE(u.is_ok()) << u.status().to_string();
        EXPECT_EQ(u->id, id);
        EXPECT_EQ(u->slot, c.at("slot").get<int>());
      } else {
        EXPECT_EQ(public_id_reason(u.status()), c.at("unwrap").get<std::string>());
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST_F(PublicIdVectors, ParseAndRefusals) {
  for (const json& c : vectors().at("parse")) {
    SCOPED_TRACE(c.dump());
    Result<PublicIdParts> p = parse_public_id(c.at("text").get<std::string>());
    ASSERT_TRUE(p.is_ok()) << p.status().to_string();
    EXPECT_EQ(p->type(), c.at("type").get<std::string>());
    EXPECT_EQ(p->slot, c.at("slot").get<int>());
    EXPECT_EQ(p->text().view(), c.at("canonical").get<std::string>());
    if (c.at("form") == "compact") {
      EXPECT_EQ(p->compact, u64(c.at("body")));
    } else {
      const std::vector<std::uint8_t> want = bytes_of(c.at("body"));
      EXPECT_TRUE(std::equal(want.begin(), want.end(), p->sealed.begin()));
    }
  }
  for (const json& c : vectors().at("parse_errors")) {
    SCOPED_TRACE(c.dump());
    Result<PublicIdParts> p = parse_public_id(c.at("text").get<std::string>());
    ASSERT_FALSE(p.is_ok());
    EXPECT_EQ(code_name(p.status().code()), c.at("error").get<std::string>());
    EXPECT_EQ(public_id_reason(p.status()), c.at("reason").get<std::string>());
  }
  for (const json& c : vectors().at("unwrap_errors")) {
    SCOPED_TRACE(c.dump());
    Result<Unwrapped> u = codec(c.at("keyring")).unwrap(c.at("text").get<std::string>());
    ASSERT_FALSE(u.is_ok());
    EXPECT_EQ(code_name(u.status().code()), c.at("error").get<std::string>());
    EXPECT_EQ(public_id_reason(u.status()), c.at("reason").get<std::string>());
  }
  for (const json& c : vectors().at("keyring_errors")) {
    SCOPED_TRACE(c.dump());
    Result<PublicIdKeyring> r = PublicIdKeyring::parse(c.at("text").get<std::string>());
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(code_name(r.status().code()), c.at("error").get<std::string>());
  }
}

}  // namespace
}  // namespace snowid
