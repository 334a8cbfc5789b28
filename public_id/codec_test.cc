#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>
#include <vector>

#include "snowid/public_id.h"
#include "snowid/testing/simulated_clock.h"
#include "test_keyrings.h"

namespace snowid {
namespace {

using namespace test_keyrings;
// 2026-01-01T00:00:01Z, worker 5, sequences 0 and 1.
constexpr std::uint64_t kId = 4194324480;

std::uint64_t id_at(const char* when, std::uint64_t sequence = 0) {
  const Layout& l = Layout::snowid_default();
  return l.encode(l.ticks_at(parse_iso8601(when).value()), WorkerId{0, 5}, sequence).value();
}

class Codecs : public ::testing::Test {
 protected:
  PublicIdCodec codec(const std::string& text) {
    Result<PublicIdKeyring> ring = PublicIdKeyring::parse(text);
    EXPECT_TRUE(ring.is_ok()) << ring.status().to_string();
    PublicIdCodec::Options o;
    o.clock = &clock_;
    return std::move(PublicIdCodec::create(std::move(ring).value(), o)).value();
  }
  std::string wrap(const PublicIdCodec& c, std::string_view type, std::uint64_t id,
                   PublicIdForm form = PublicIdForm::kCompact) {
    Result<PublicIdText> t = c.wrap(type, id, form);
    EXPECT_TRUE(t.is_ok()) << t.status().to_string();
    return t.is_ok() ? std::string(t->view()) : std::string();
  }
  std::string unwrap_reason(const PublicIdCodec& c, std::string_view text) {
    Result<Unwrapped> u = c.unwrap(text);
    return u.is_ok() ? "OK" : std::string(public_id_reason(u.status()));
  }

  testing::SimulatedClock clock_{parse_iso8601("2029-06-01T00:00:00Z").value()};
};

TEST_F(Codecs, KnownCompactTexts) {
  const PublicIdCodec c = codec(test_keyrings::single());
  EXPECT_EQ(wrap(c, "ord", kId), "ord_c4khywqwtw0xe");
  EXPECT_EQ(wrap(c, "ord", kId + 1), "ord_dvv8ktrft0v6h");
  EXPECT_EQ(wrap(c, "cus", kId), "cus_8drgsx4wg64ss");
  Result<Unwrapped> u = c.unwrap("ORD_C4KHYWQWTW0XE");
  ASSERT_TRUE(u.is_ok()) << u.status().to_string();
  EXPECT_EQ(u->id, kId);
  EXPECT_EQ(u->slot, 1);
}

TEST_F(Codecs, PreparedTypeGivesTheSameTextsAndChecksTheType) {
  const PublicIdCodec c = codec(test_keyrings::single());
  const PublicIdType ord = c.prepare("ord").value();
  EXPECT_EQ(c.wrap(ord, kId)->view(), "ord_c4khywqwtw0xe");
  EXPECT_EQ(c.unwrap(ord, "ord_c4khywqwtw0xe")->id, kId);
  EXPECT_EQ(public_id_reason(c.unwrap(ord, "cus_8drgsx4wg64ss").status()), "WRONG_TYPE");
  EXPECT_EQ(public_id_reason(c.prepare("Ord").status()), "BAD_TYPE");
  EXPECT_EQ(public_id_reason(c.wrap(ord, 0).status()), "BAD_ID");
  EXPECT_EQ(public_id_reason(c.wrap(ord, std::uint64_t{1} << 63).status()), "BAD_ID");
}

// Slot 0 active from 2026, slot 1 primary from mid-2027, slot 2 decrypt,
// slot 3 retired.
std::string four_slots(const char* policy) {
  return kHead + "policy " + policy + "\n" +
         line(0, "active", "2026-01-01T00:00:00Z", "k2026", kKey0) +
         line(1, "primary", "2027-07-01T00:00:00Z", "k2027", kKey1) +
         line(2, "decrypt", "2028-01-01T00:00:00Z", "k2028", kKey2) +
         line(3, "retired", "2025-01-01T00:00:00Z", "k2025", kKey3);
}

// The same keys with `primary` in the given slot and the others decrypt.
std::string only_primary(int slot) {
  const char* keys[] = {kKey0, kKey1, kKey2, kKey3};
  std::string text = kHead;
  for (int s = 0; s < 4; ++s) {
    text += line(s, s == slot ? "primary" : "decrypt", "2026-01-01T00:00:00Z",
                 ("k" + std::to_string(s)).c_str(), keys[s]);
  }
  return text;
}

TEST_F(Codecs, RoundTripsForEverySlotStatePolicyAndForm) {
  const std::vector<std::uint64_t> ids = {
      id_at("2026-01-01T00:00:00Z"), id_at("2026-03-01T12:00:00Z", 7),
      id_at("2027-06-30T23:59:59.999Z", 4095), id_at("2027-07-01T00:00:00Z"),
      id_at("2029-05-31T00:00:00Z", 1)};
  for (PublicIdForm form : {PublicIdForm::kCompact, PublicIdForm::kSealed}) {
    const PublicIdCodec by_time = codec(four_slots("by_time"));
    const PublicIdCodec newest = codec(four_slots("newest"));
    for (std::uint64_t id : ids) {
      SCOPED_TRACE(id);
      const bool before = id < id_at("2027-07-01T00:00:00Z");
      EXPECT_EQ(by_time.wrapping_slot(id), before ? 0 : 1);
      EXPECT_EQ(newest.wrapping_slot(id), 1);
      for (const PublicIdCodec* c : {&by_time, &newest}) {
        const std::string text = wrap(*c, "ord", id, form);
        Result<Unwrapped> u = c->unwrap(text);
        ASSERT_TRUE(u.is_ok()) << u.status().to_string();
        EXPECT_EQ(u->id, id);
        EXPECT_EQ(u->form, form);
        EXPECT_EQ(u->slot, c->wrapping_slot(id));
      }
      // Decrypt-only slot 2 unwraps what its key wrapped elsewhere; retired
      // slot 3 and unused slots do not.
      const std::string by_two = wrap(codec(only_primary(2)), "ord", id, form);
      EXPECT_EQ(by_time.unwrap(by_two)->id, id);
      EXPECT_EQ(unwrap_reason(by_time, wrap(codec(only_primary(3)), "ord", id, form)),
                "UNKNOWN_KEY");
      const PublicIdCodec one_slot = codec(test_keyrings::single());
      EXPECT_EQ(unwrap_reason(one_slot, by_two), "UNKNOWN_KEY");
    }
  }
}

TEST_F(Codecs, RotationKeepsPublicIdsUnderByTime) {
  const std::string k0_primary = line(0, "primary", "2026-01-01T00:00:00Z", "k0", kKey0);
  const std::string k0_active = line(0, "active", "2026-01-01T00:00:00Z", "k0", kKey0);
  const std::string k0_retired = line(0, "retired", "2026-01-01T00:00:00Z", "k0", kKey0);
  const std::string k1_decrypt = line(1, "decrypt", "2029-07-01T00:00:00Z", "k1", kKey1);
  const std::string k1_primary = line(1, "primary", "2029-07-01T00:00:00Z", "k1", kKey1);
  const std::uint64_t old_id = id_at("2028-02-02T00:00:00Z", 3);
  const std::uint64_t new_id = id_at("2029-07-02T00:00:00Z", 3);

  const std::string first = wrap(codec(kHead + k0_primary), "ord", old_id);
  // Added, not yet primary: nothing changes.
  EXPECT_EQ(wrap(codec(kHead + k0_primary + k1_decrypt), "ord", old_id), first);
  // Promoted: older objects keep their public id, newer ones get the new key.
  clock_.set_wall(parse_iso8601("2029-07-03T00:00:00Z").value());
  const PublicIdCodec promoted = codec(kHead + k0_active + k1_primary);
  EXPECT_EQ(wrap(promoted, "ord", old_id), first);
  EXPECT_EQ(promoted.wrapping_slot(new_id), 1);
  EXPECT_EQ(promoted.unwrap(first)->id, old_id);
  // Retired: the old key's public ids are refused.
  const PublicIdCodec retired = codec(kHead + k0_retired + k1_primary);
  EXPECT_EQ(unwrap_reason(retired, first), "UNKNOWN_KEY");
  EXPECT_EQ(retired.unwrap(wrap(promoted, "ord", new_id))->id, new_id);
  // Under newest, a promotion changes every public id.
  const PublicIdCodec newest = codec(kHead + "policy newest\n" + k0_active + k1_primary);
  EXPECT_NE(wrap(newest, "ord", old_id), first);
}

TEST_F(Codecs, ImplausibleDecodesAreRefused) {
  const PublicIdCodec c = codec(test_keyrings::single());
  // A future id (the clock is at 2029-06-01).
  clock_.set_wall(parse_iso8601("2030-01-01T00:00:00Z").value());
  const std::string future = wrap(c, "ord", id_at("2029-12-31T00:00:00Z"));
  clock_.set_wall(parse_iso8601("2029-06-01T00:00:00Z").value());
  EXPECT_EQ(unwrap_reason(c, future), "IMPLAUSIBLE");
  // Random texts mostly decode to implausible times: ids live 69 years, of
  // which under 4 have passed.
  std::mt19937_64 rng(3);
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    PublicIdParts p;
    p.type_chars[0] = 'x';
    p.type_size = 1;
    p.slot = 1;
    p.compact = rng() >> 1;
    if (unwrap_reason(c, p.text().view()) == "IMPLAUSIBLE") ++refused;
  }
  EXPECT_GT(refused, 900);
  // A window check under by_time: an id older than its (not earliest) key.
  const PublicIdCodec two = codec(kHead + line(0, "active", "2026-01-01T00:00:00Z", "a", kKey0) +
                                  line(1, "primary", "2027-01-01T00:00:00Z", "b", kKey1));
  const std::string by_one = wrap(codec(only_primary(1)), "ord", id_at("2026-06-01T00:00:00Z"));
  EXPECT_EQ(unwrap_reason(two, by_one), "IMPLAUSIBLE");
}

TEST_F(Codecs, TypesAreSeparated) {
  const PublicIdCodec c = codec(test_keyrings::single());
  std::mt19937_64 rng(11);
  const std::uint64_t lo = id_at("2026-01-01T00:00:00Z");
  const std::uint64_t hi = id_at("2029-05-01T00:00:00Z");
  int same = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t id = lo + rng() % (hi - lo);
    const std::string ord = wrap(c, "ord", id);
    const std::string as_cus = "cus" + ord.substr(3);
    Result<Unwrapped> u = c.unwrap(as_cus);
    if (u.is_ok() && u->id == id) ++same;
    // The sealed form refuses the swap outright.
    const std::string sealed = wrap(c, "ord", id, PublicIdForm::kSealed);
    EXPECT_EQ(unwrap_reason(c, "cus" + sealed.substr(3)), "FORGED");
  }
  EXPECT_EQ(same, 0);
}

TEST_F(Codecs, SealedIdsWithAnyChangedSymbolAreRefused) {
  const PublicIdCodec c = codec(four_slots("by_time"));
  const std::string text = wrap(c, "ord", kId, PublicIdForm::kSealed);
  ASSERT_EQ(text.size(), 4u + 26u);
  const std::string alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  int checked = 0;
  for (std::size_t at = 4; at < text.size(); ++at) {
    for (char sym : alphabet) {
      if (sym == text[at]) continue;
      std::string forged = text;
      forged[at] = sym;
      const std::string reason = unwrap_reason(c, forged);
      ASSERT_TRUE(reason == "FORGED" || reason == "UNKNOWN_KEY") << forged << " " << reason;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 26 * 31);
}

TEST_F(Codecs, WrapManyEqualsWrapAcrossSlots) {
  const PublicIdCodec c = codec(four_slots("by_time"));
  const PublicIdType ord = c.prepare("ord").value();
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < 500; ++i)
    ids.push_back(id_at("2027-06-30T23:59:59.990Z") + (static_cast<std::uint64_t>(i) << 18));
  std::vector<PublicIdText> out(ids.size());
  ASSERT_TRUE(c.wrap_many(ord, ids, out).is_ok());
  std::set<int> slots;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ASSERT_EQ(out[i].view(), c.wrap(ord, ids[i])->view()) << i;
    slots.insert(c.wrapping_slot(ids[i]));
  }
  EXPECT_EQ(slots, (std::set<int>{0, 1}));
  ids[7] = 0;
  const Status s = c.wrap_many(ord, ids, out);
  EXPECT_EQ(public_id_reason(s), "BAD_ID");
  EXPECT_NE(s.message().find("ids[7]"), std::string::npos);
  EXPECT_FALSE(c.wrap_many(ord, ids, std::span<PublicIdText>(out.data(), 3)).is_ok());
}

TEST_F(Codecs, ThreadsShareOneCodec) {
  const PublicIdCodec c = codec(four_slots("by_time"));
  const PublicIdType ord = c.prepare("ord").value();
  std::vector<std::string> want;
  for (std::uint64_t i = 0; i < 2000; ++i) want.emplace_back(c.wrap(ord, kId + (i << 20))->view());
  std::vector<int> wrong(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (std::uint64_t i = 0; i < want.size(); ++i) {
          Result<PublicIdText> w = c.wrap(ord, kId + (i << 20));
          Result<Unwrapped> u = c.unwrap(ord, want[i]);
          if (!w.is_ok() || w->view() != want[i] || !u.is_ok() || u->id != kId + (i << 20))
            ++wrong[t];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace snowid
