#include "worker_values.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <system_error>
#include <vector>

#include "snowid/lease_rules.h"

namespace snowid::etcd {
namespace {

using nlohmann::json;

// Milliseconds that a WallTime (64-bit nanoseconds) can hold.
constexpr std::int64_t kMaxMs = std::numeric_limits<std::int64_t>::max() / 1'000'000 - 1;

std::int64_t ceil_ms(WallTime t) {
  return std::chrono::ceil<std::chrono::milliseconds>(t).time_since_epoch().count();
}

Status data_loss(std::string_view what, std::string_view why) {
  return Status(Code::kDataLoss,
                "unreadable " + std::string(what) + " value in etcd: " + std::string(why));
}

std::optional<json> parse_object(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  return doc;
}

// An integer member within [lo, hi]; nullopt when absent; throws when malformed.
std::optional<std::int64_t> int_member(const json& obj, const char* name, std::int64_t lo,
                                       std::int64_t hi) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) throw std::runtime_error(std::string(name) + " is not an integer");
  std::int64_t v = 0;
  if (it->is_number_unsigned()) {
    const auto u = it->get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi))
      throw std::runtime_error(std::string(name) + " too large");
    v = static_cast<std::int64_t>(u);
  } else {
    v = it->get<std::int64_t>();
  }
  if (v < lo || v > hi) throw std::runtime_error(std::string(name) + " out of range");
  return v;
}

std::string string_member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) throw std::runtime_error(std::string(name) + " is not a string");
  return it->get<std::string>();
}

std::string hex(std::int64_t v) {
  char buf[17];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, static_cast<std::uint64_t>(v), 16);
  return std::string(buf, end);
}

std::optional<std::int64_t> parse_hex(std::string_view s) {
  std::uint64_t v = 0;
  if (s.empty() || s.size() > 16) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

template <typename Int>
std::optional<Int> parse_decimal(std::string_view s) {
  Int v = 0;
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

std::string encode_holder(const HolderInfo& info, std::int64_t lease) {
  json doc = {{"host", info.host},
              {"pid", info.pid},
              // Before 1970 cannot be read back; no process started then.
              {"started", format_iso8601(std::max(info.started, WallTime{}))},
              {"address", info.address},
              {"lease", hex(lease)}};
  // A host name that is not UTF-8 is stored with replacement characters.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<HolderValue> decode_holder(std::string_view text) {
  try {
    const std::optional<json> doc = parse_object(text);
    if (!doc) return data_loss("holder", "not a JSON object");
    HolderValue v;
    v.info.host = string_member(*doc, "host");
    v.info.pid = int_member(*doc, "pid", std::numeric_limits<std::int64_t>::min(),
                            std::numeric_limits<std::int64_t>::max())
                     .value_or(0);
    v.info.address = string_member(*doc, "address");
    const std::string started = string_member(*doc, "started");
    if (!started.empty()) {
      Result<WallTime> t = parse_iso8601(started);
      if (!t.is_ok()) return data_loss("holder", "bad start time: " + t.status().message());
      v.info.started = t.value();
    }
    const std::optional<std::int64_t> lease = parse_hex(string_member(*doc, "lease"));
    if (!lease) return data_loss("holder", "bad lease id");
    v.lease = *lease;
    return v;
  } catch (const std::exception& e) {
    return data_loss("holder", e.what());
  }
}

std::string encode_mark(const MarkValue& mark) {
  json doc = json::object();
  if (mark.high_water) doc["high_water_ms"] = ceil_ms(*mark.high_water);
  if (mark.released_at) doc["released_at_ms"] = ceil_ms(*mark.released_at);
  if (mark.clean_release) doc["clean_release_ms"] = ceil_ms(*mark.clean_release);
  return doc.dump();
}

Result<MarkValue> decode_mark(std::string_view text) {
  try {
    const std::optional<json> doc = parse_object(text);
    if (!doc) return data_loss("mark", "not a JSON object");
    MarkValue m;
    if (const auto hw = int_member(*doc, "high_water_ms", -kMaxMs, kMaxMs)) {
      m.high_water = wall_from_unix_ms(*hw);
    }
    if (const auto at = int_member(*doc, "released_at_ms", -kMaxMs, kMaxMs)) {
      m.released_at = wall_from_unix_ms(*at);
    }
    if (const auto clean = int_member(*doc, "clean_release_ms", -kMaxMs, kMaxMs)) {
      m.clean_release = wall_from_unix_ms(*clean);
    }
    return m;
  } catch (const std::exception& e) {
    return data_loss("mark", e.what());
  }
}

std::string encode_store(const StoreValue& store) {
  json doc = {{"incarnation", store.incarnation}};
  if (store.high_water) doc["high_water_ms"] = ceil_ms(*store.high_water);
  doc["reason"] = store.reason;
  doc["written_ms"] = ceil_ms(store.written_at);
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<StoreValue> decode_store(std::string_view text) {
  try {
    const std::optional<json> doc = parse_object(text);
    if (!doc) return data_loss("store", "not a JSON object");
    StoreValue v;
    v.incarnation = string_member(*doc, "incarnation");
    if (v.incarnation.size() != 16 || !parse_hex(v.incarnation)) {
      return data_loss("store", "bad incarnation");
    }
    if (const auto hw = int_member(*doc, "high_water_ms", -kMaxMs, kMaxMs)) {
      v.high_water = wall_from_unix_ms(*hw);
    }
    v.reason = string_member(*doc, "reason");
    if (const auto at = int_member(*doc, "written_ms", -kMaxMs, kMaxMs)) {
      v.written_at = wall_from_unix_ms(*at);
    }
    return v;
  } catch (const std::exception& e) {
    return data_loss("store", e.what());
  }
}

bool released_clean(const MarkValue& mark) {
  return mark.clean_release && mark.high_water && mark.released_at &&
         ceil_ms(*mark.clean_release) == ceil_ms(*mark.high_water);
}

std::optional<WallTime> grant_previous_high_water(std::optional<WallTime> mark,
                                                  std::optional<WallTime> store) {
  return later(mark, store);
}

// After a clean release, free from the later of the two instants, without
// quarantine. The quarantine covers the clock skew between hosts and the
// longest a holder that lost its lease could go on issuing. A clean release
// commits only while its holder key is still the holder's own, after the
// holder stopped issuing, and records its exact last instant: nothing goes
// on issuing. The skew is covered by the acquirer itself, which waits until
// its clock is max_clock_skew past the mark (LeaseKeeper::wait_until). An
// expired, fenced or abandoned id, or a mark from before clean releases were
// recorded, keeps the quarantine (docs/leases.md, "Quarantine").
std::optional<WallTime> free_from(const MarkValue& mark, Duration quarantine) {
  if (released_clean(mark)) return later(mark.released_at, mark.high_water);
  return quarantine_end(mark.released_at, mark.high_water, quarantine);
}

std::string encode_token(const GrantToken& t) {
  return "etcd:" + hex(t.lease) + ":" + std::to_string(t.create_revision) + ":" +
         std::to_string(t.worker.region) + ":" + std::to_string(t.worker.host);
}

Result<GrantToken> decode_token(std::string_view text) {
  const Status bad(Code::kInvalidArgument,
                   "not a grant of the etcd registry: \"" + std::string(text.substr(0, 80)) + "\"");
  if (!text.starts_with("etcd:")) return bad;
  text.remove_prefix(5);
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t colon = text.find(':');
    parts.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (parts.size() != 4) return bad;
  const auto lease = parse_hex(parts[0]);
  const auto rev = parse_decimal<std::int64_t>(parts[1]);
  const auto region = parse_decimal<std::uint32_t>(parts[2]);
  const auto host = parse_decimal<std::uint32_t>(parts[3]);
  if (!lease || *lease == 0 || !rev || *rev <= 0 || !region || !host) return bad;
  return GrantToken{*lease, *rev, WorkerId{*region, *host}};
}

}  // namespace snowid::etcd
