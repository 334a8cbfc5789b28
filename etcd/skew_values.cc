#include "skew_values.h"

#include <cstdint>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "vote_record.h"

namespace snowid::etcd {
namespace {

using nlohmann::json;

constexpr json::error_handler_t kReplace = json::error_handler_t::replace;

// What is wrong with a record, thrown inside the reader and caught at its
// boundary.
struct Unreadable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

Status data_loss(std::string_view why, std::string_view what = "skew fence record") {
  return Status(Code::kDataLoss,
                "unreadable " + std::string(what) + " in etcd: " + std::string(why));
}

// A member, or null when it is absent or null.
const json* member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::int64_t integer(const json& v, const std::string& what, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) throw Unreadable(what + " is not an integer");
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) throw Unreadable(what + " is out of range");
    return static_cast<std::int64_t>(u);
  }
  const auto n = v.get<std::int64_t>();
  if (n < lo || n > hi) throw Unreadable(what + " is out of range");
  return n;
}

std::string string_of(const json& obj, const char* name, bool required) {
  const json* v = member(obj, name);
  if (v == nullptr) {
    if (required) throw Unreadable(std::string("\"") + name + "\" is missing");
    return {};
  }
  if (!v->is_string()) throw Unreadable(std::string("\"") + name + "\" is not a string");
  return v->get<std::string>();
}

// An array member's elements; none when absent or null.
const json* array_of(const json& obj, const char* name) {
  const json* v = member(obj, name);
  if (v != nullptr && !v->is_array()) {
    throw Unreadable(std::string("\"") + name + "\" is not an array");
  }
  return v;
}

skew::CastVote vote_of(const json& item, std::size_t i) {
  const std::string where = "votes[" + std::to_string(i) + "]";
  if (!item.is_object()) throw Unreadable(where + " is not an object");
  skew::CastVote vote;
  vote.voter = string_of(item, "voter", true);
  const json* record = member(item, "vote");
  if (record == nullptr || !record->is_object()) {
    throw Unreadable(where + ".vote is not an object");
  }
  // The vote's own strict reader decides, on the object as text.
  Result<skew::VoteRecord> parsed = skew::parse_vote(record->dump(-1, ' ', false, kReplace));
  if (!parsed.is_ok()) throw Unreadable(where + ": " + parsed.status().message());
  vote.record = std::move(parsed).value();
  return vote;
}

WorkerId worker_of(const json& item, std::size_t i) {
  const std::string where = "workers[" + std::to_string(i) + "]";
  if (!item.is_object()) throw Unreadable(where + " is not an object");
  constexpr std::int64_t kMax = std::numeric_limits<std::uint32_t>::max();
  const json* region = member(item, "region");
  const json* host = member(item, "host");
  if (region == nullptr || host == nullptr) throw Unreadable(where + " needs region and host");
  return WorkerId{static_cast<std::uint32_t>(integer(*region, where + ".region", 0, kMax)),
                  static_cast<std::uint32_t>(integer(*host, where + ".host", 0, kMax))};
}

}  // namespace

std::string encode_fence_record(const FenceRecord& record) {
  json votes = json::array();
  for (const skew::CastVote& v : record.votes) {
    // The vote record's own text is JSON of integers, null and [a-z_] words.
    votes.push_back({{"voter", v.voter}, {"vote", json::parse(skew::encode_vote(v.record))}});
  }
  json workers = json::array();
  for (const WorkerId& w : record.workers) {
    workers.push_back({{"region", w.region}, {"host", w.host}});
  }
  const json doc = {{"v", 1},
                    {"target", record.target},
                    {"fencer", record.fencer},
                    {"at_ns", record.at.time_since_epoch().count()},
                    {"votes", std::move(votes)},
                    {"workers", std::move(workers)},
                    {"reason", record.reason}};
  return doc.dump(-1, ' ', false, kReplace);
}

Result<FenceRecord> decode_fence_record(std::string_view text) {
  try {
    const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return data_loss("not a JSON object");
    const json* version = member(doc, "v");
    if (version == nullptr) return data_loss("\"v\" is missing");
    const std::int64_t v = integer(*version, "\"v\"", std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
    if (v != 1) return data_loss("unknown version " + std::to_string(v));
    FenceRecord r;
    r.target = string_of(doc, "target", true);
    r.fencer = string_of(doc, "fencer", false);
    r.reason = string_of(doc, "reason", false);
    const json* at = member(doc, "at_ns");
    if (at == nullptr) return data_loss("\"at_ns\" is missing");
    r.at = WallTime(Duration(integer(*at, "\"at_ns\"", std::numeric_limits<std::int64_t>::min(),
                                     std::numeric_limits<std::int64_t>::max())));
    if (const json* votes = array_of(doc, "votes")) {
      for (std::size_t i = 0; i < votes->size(); ++i) r.votes.push_back(vote_of((*votes)[i], i));
    }
    if (const json* workers = array_of(doc, "workers")) {
      for (std::size_t i = 0; i < workers->size(); ++i) {
        r.workers.push_back(worker_of((*workers)[i], i));
      }
    }
    return r;
  } catch (const std::exception& e) {
    return data_loss(e.what());
  }
}

std::string encode_agent(const AgentValue& agent) {
  return json{{"address", agent.address}}.dump(-1, ' ', false, kReplace);
}

Result<AgentValue> decode_agent(std::string_view text) {
  try {
    const json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) return data_loss("not a JSON object", "skew agent");
    AgentValue a;
    a.address = string_of(doc, "address", false);
    return a;
  } catch (const std::exception& e) {
    return data_loss(e.what(), "skew agent");
  }
}

}  // namespace snowid::etcd
