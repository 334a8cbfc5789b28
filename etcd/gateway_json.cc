#include "gateway_json.h"

#include <array>
#include <charconv>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace snowid::etcd {
namespace {

using nlohmann::json;

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Thrown by the readers below and turned into a Status at each parse_*
// function; never leaves this file.
class BadReply : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string& what) { throw BadReply(what); }

json parse_object(std::string_view body) {
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) bad("not JSON");
  if (!doc.is_object()) bad("not a JSON object");
  return doc;
}

// A member that must be an object when present; nullptr when absent.
const json* object_member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_object()) bad(std::string(name) + " is not an object");
  return &*it;
}

const json* array_member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return nullptr;
  if (!it->is_array()) bad(std::string(name) + " is not an array");
  return &*it;
}

template <typename Int>
Int integer_member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return 0;  // left out: zero
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    Int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) {
      bad(std::string(name) + " is not a 64-bit integer");
    }
    return v;
  }
  if (it->is_number_unsigned()) {
    const auto v = it->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) {
      bad(std::string(name) + " is out of range");
    }
    return static_cast<Int>(v);
  }
  if (it->is_number_integer()) {
    const auto v = it->get<std::int64_t>();
    if (v < 0 && !std::numeric_limits<Int>::is_signed) bad(std::string(name) + " is negative");
    return static_cast<Int>(v);
  }
  bad(std::string(name) + " is not an integer");
}

std::int64_t int64_member(const json& obj, const char* name) {
  return integer_member<std::int64_t>(obj, name);
}

bool bool_member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return false;
  if (!it->is_boolean()) bad(std::string(name) + " is not a boolean");
  return it->get<bool>();
}

std::string string_member(const json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return {};
  if (!it->is_string()) bad(std::string(name) + " is not a string");
  return it->get<std::string>();
}

std::string bytes_member(const json& obj, const char* name) {
  std::optional<std::string> bytes = base64_decode(string_member(obj, name));
  if (!bytes) bad(std::string(name) + " is not base64");
  return std::move(*bytes);
}

Header read_header(const json& obj) {
  Header h;
  if (const json* header = object_member(obj, "header")) {
    h.cluster_id = integer_member<std::uint64_t>(*header, "cluster_id");
    h.member_id = integer_member<std::uint64_t>(*header, "member_id");
    h.revision = int64_member(*header, "revision");
  }
  return h;
}

KeyValue read_kv(const json& obj) {
  if (!obj.is_object()) bad("a key-value is not an object");
  KeyValue kv;
  kv.key = bytes_member(obj, "key");
  kv.value = bytes_member(obj, "value");
  kv.create_revision = int64_member(obj, "create_revision");
  kv.mod_revision = int64_member(obj, "mod_revision");
  kv.version = int64_member(obj, "version");
  kv.lease = int64_member(obj, "lease");
  return kv;
}

std::vector<KeyValue> read_kvs(const json& obj) {
  std::vector<KeyValue> kvs;
  if (const json* array = array_member(obj, "kvs")) {
    for (const json& item : *array) kvs.push_back(read_kv(item));
  }
  return kvs;
}

// Error replies come in two shapes. etcd 3.4 and 3.5 (grpc-gateway v1):
// {"error":"text","code":N,"message":"text"}, and in a stream
// {"error":{"grpc_code":N,"http_code":H,"message":"text"}}. etcd 3.6 and
// later (grpc-gateway v2): {"code":N,"message":"text","details":[]}, and in a
// stream {"error":{"code":N,"message":"text","details":[]}}. No answer has
// both a "code" and a "message" member.
bool is_error_reply(const json& obj) {
  return obj.contains("error") || (obj.contains("code") && obj.contains("message"));
}

// An error reply is never mistaken for an answer, even if it carries some of
// the answer's fields.
void refuse_error(const json& obj) {
  if (is_error_reply(obj)) {
    const auto it = obj.find("message");
    if (it != obj.end() && it->is_string()) bad("error reply: " + it->get<std::string>());
    bad("error reply");
  }
}

// The streaming endpoints wrap each message in {"result": ...}.
const json& unwrap_result(const json& doc) {
  refuse_error(doc);
  if (const json* result = object_member(doc, "result")) return *result;
  return doc;
}

template <typename T, typename F>
Result<T> guarded(std::string_view what, std::string_view body, F&& parse) {
  try {
    const json doc = parse_object(body);
    return parse(doc);
  } catch (const std::exception& e) {
    return Status(Code::kUnavailable,
                  "etcd gateway sent an unreadable " + std::string(what) + " reply: " + e.what());
  } catch (...) {
    return Status(Code::kUnavailable,
                  "etcd gateway sent an unreadable " + std::string(what) + " reply");
  }
}

json op_json(const Op& op) {
  json body;
  switch (op.kind) {
    case Op::Kind::kPut: {
      json put = {{"key", base64_encode(op.key)}, {"value", base64_encode(op.value)}};
      if (op.lease != 0) put["lease"] = std::to_string(op.lease);
      body["request_put"] = std::move(put);
      break;
    }
    case Op::Kind::kRange: {
      json range = {{"key", base64_encode(op.key)}};
      if (!op.range_end.empty()) range["range_end"] = base64_encode(op.range_end);
      body["request_range"] = std::move(range);
      break;
    }
    case Op::Kind::kDelete: {
      json del = {{"key", base64_encode(op.key)}};
      if (!op.range_end.empty()) del["range_end"] = base64_encode(op.range_end);
      body["request_delete_range"] = std::move(del);
      break;
    }
  }
  return body;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                            (std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                            std::uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t n = std::uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    if (rest == 2) n |= std::uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::array<int, 256> value{};
  value.fill(-1);
  for (std::size_t k = 0; k < kAlphabet.size(); ++k) {
    value[static_cast<unsigned char>(kAlphabet[k])] = static_cast<int>(k);
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    std::uint32_t n = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int v = 0;
      if (k >= 4 - static_cast<std::size_t>(pad)) {
        if (c != '=') return std::nullopt;
      } else {
        v = value[static_cast<unsigned char>(c)];
        if (v < 0) return std::nullopt;
      }
      n = (n << 6) | static_cast<std::uint32_t>(v);
    }
    // Padding bits must be zero, so that each text has one meaning.
    if (pad == 1 && (n & 0xff) != 0) return std::nullopt;
    if (pad == 2 && (n & 0xffff) != 0) return std::nullopt;
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    auto& c = reinterpret_cast<unsigned char&>(end.back());
    if (c < 0xff) {
      ++c;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

Op Op::put(std::string key, std::string value, std::int64_t lease) {
  Op op;
  op.kind = Kind::kPut;
  op.key = std::move(key);
  op.value = std::move(value);
  op.lease = lease;
  return op;
}

Op Op::range(std::string key) {
  Op op;
  op.kind = Kind::kRange;
  op.key = std::move(key);
  return op;
}

Op Op::remove(std::string key) {
  Op op;
  op.kind = Kind::kDelete;
  op.key = std::move(key);
  return op;
}

std::string txn_body(const std::vector<Compare>& compares, const std::vector<Op>& success,
                     const std::vector<Op>& failure) {
  json body = json::object();
  json cmp = json::array();
  for (const Compare& c : compares) {
    json item = {{"key", base64_encode(c.key)}, {"result", "EQUAL"}};
    if (c.target == Compare::Target::kCreate) {
      item["target"] = "CREATE";
      item["create_revision"] = std::to_string(c.revision);
    } else {
      item["target"] = "MOD";
      item["mod_revision"] = std::to_string(c.revision);
    }
    cmp.push_back(std::move(item));
  }
  body["compare"] = std::move(cmp);
  json ok = json::array();
  for (const Op& op : success) ok.push_back(op_json(op));
  body["success"] = std::move(ok);
  json not_ok = json::array();
  for (const Op& op : failure) not_ok.push_back(op_json(op));
  body["failure"] = std::move(not_ok);
  return body.dump();
}

std::string range_body(std::string_view key, std::string_view range_end) {
  json body = {{"key", base64_encode(key)}};
  if (!range_end.empty()) body["range_end"] = base64_encode(range_end);
  return body.dump();
}

std::string lease_grant_body(std::int64_t ttl_seconds) {
  return json{{"TTL", std::to_string(ttl_seconds)}}.dump();
}

std::string lease_id_body(std::int64_t id) { return json{{"ID", std::to_string(id)}}.dump(); }

std::string time_to_live_body(std::int64_t id) {
  return json{{"ID", std::to_string(id)}, {"keys", false}}.dump();
}

std::string watch_create_body(std::string_view key, std::int64_t start_revision) {
  json create = {{"key", base64_encode(key)}, {"start_revision", std::to_string(start_revision)}};
  return json{{"create_request", std::move(create)}}.dump();
}

std::string authenticate_body(std::string_view user, std::string_view password) {
  json body = {{"name", std::string(user)}, {"password", std::string(password)}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<GatewayError> parse_error(std::string_view body) {
  try {
    const json doc = json::parse(body.begin(), body.end(), nullptr, false);
    if (!doc.is_object() || !is_error_reply(doc)) return std::nullopt;
    const auto it = doc.find("error");
    GatewayError e;
    if (it != doc.end() && it->is_object()) {  // inside a stream
      e.code = integer_member<int>(*it, it->contains("grpc_code") ? "grpc_code" : "code");
      e.message = string_member(*it, "message");
    } else {
      e.code = integer_member<int>(doc, "code");
      e.message = string_member(doc, "message");
      if (e.message.empty() && it != doc.end() && it->is_string())
        e.message = it->get<std::string>();
    }
    if (e.message.empty()) e.message = "error without a message";
    return e;
  } catch (...) {
    // An error reply we cannot read is still an error.
    return GatewayError{0, "unreadable error reply"};
  }
}

Result<RangeReply> parse_range(std::string_view body) {
  return guarded<RangeReply>("range", body, [](const json& doc) {
    refuse_error(doc);
    RangeReply r;
    r.header = read_header(doc);
    r.kvs = read_kvs(doc);
    return r;
  });
}

Result<TxnReply> parse_txn(std::string_view body) {
  return guarded<TxnReply>("txn", body, [](const json& doc) {
    refuse_error(doc);
    TxnReply r;
    r.header = read_header(doc);
    r.succeeded = bool_member(doc, "succeeded");
    if (const json* responses = array_member(doc, "responses")) {
      for (const json& item : *responses) {
        if (!item.is_object()) bad("a txn response is not an object");
        TxnOpReply op;
        if (const json* range = object_member(item, "response_range")) {
          op.kind = Op::Kind::kRange;
          op.kvs = read_kvs(*range);
        } else if (const json* del = object_member(item, "response_delete_range")) {
          op.kind = Op::Kind::kDelete;
          op.deleted = int64_member(*del, "deleted");
        } else if (object_member(item, "response_put") != nullptr) {
          op.kind = Op::Kind::kPut;
        } else {
          bad("a txn response of unknown kind");
        }
        r.responses.push_back(std::move(op));
      }
    }
    return r;
  });
}

Result<LeaseGrantReply> parse_lease_grant(std::string_view body) {
  return guarded<LeaseGrantReply>("lease grant", body, [](const json& doc) {
    refuse_error(doc);
    LeaseGrantReply r;
    r.id = int64_member(doc, "ID");
    r.ttl = int64_member(doc, "TTL");
    const std::string error = string_member(doc, "error");
    if (!error.empty()) bad(error);
    if (r.id == 0) bad("no lease ID");
    return r;
  });
}

Result<KeepAliveReply> parse_keepalive(std::string_view body) {
  return guarded<KeepAliveReply>("keepalive", body, [](const json& doc) {
    const json& result = unwrap_result(doc);
    KeepAliveReply r;
    r.header = read_header(result);
    r.id = int64_member(result, "ID");
    r.ttl = int64_member(result, "TTL");
    return r;
  });
}

Result<TimeToLiveReply> parse_time_to_live(std::string_view body) {
  return guarded<TimeToLiveReply>("lease timetolive", body, [](const json& doc) {
    refuse_error(doc);
    TimeToLiveReply r;
    r.id = int64_member(doc, "ID");
    r.ttl = int64_member(doc, "TTL");
    r.granted_ttl = int64_member(doc, "grantedTTL");
    return r;
  });
}

Result<StatusReply> parse_status(std::string_view body) {
  return guarded<StatusReply>("status", body, [](const json& doc) {
    refuse_error(doc);
    StatusReply r;
    r.header = read_header(doc);
    r.leader = integer_member<std::uint64_t>(doc, "leader");
    return r;
  });
}

Result<WatchMessage> parse_watch_message(std::string_view line) {
  return guarded<WatchMessage>("watch", line, [](const json& doc) {
    const json& result = unwrap_result(doc);
    WatchMessage m;
    m.header = read_header(result);
    m.created = bool_member(result, "created");
    m.canceled = bool_member(result, "canceled");
    m.compact_revision = int64_member(result, "compact_revision");
    m.cancel_reason = string_member(result, "cancel_reason");
    if (const json* events = array_member(result, "events")) {
      for (const json& item : *events) {
        if (!item.is_object()) bad("a watch event is not an object");
        WatchEvent e;
        const auto type = item.find("type");
        if (type == item.end() || type->is_null() || *type == "PUT" || *type == 0) {
          e.is_delete = false;
        } else if (*type == "DELETE" || *type == 1) {
          e.is_delete = true;
        } else {
          bad("a watch event of unknown type");
        }
        if (const json* kv = object_member(item, "kv")) e.kv = read_kv(*kv);
        m.events.push_back(std::move(e));
      }
    }
    return m;
  });
}

Result<std::string> parse_authenticate(std::string_view body) {
  return guarded<std::string>("authenticate", body, [](const json& doc) {
    refuse_error(doc);
    std::string token = string_member(doc, "token");
    if (token.empty()) bad("no token");
    return token;
  });
}

}  // namespace snowid::etcd
