// The JSON of etcd v3's HTTP gateway: request bodies built from plain structs,
// and replies parsed into plain structs. What the gateway does that a reader
// must expect:
// - 64-bit integers are JSON strings ("ID":"7587..."); numbers are accepted too.
// - Fields equal to zero, false or empty are left out: no "succeeded" when a
//   transaction's compare failed, no "kvs" when a range found nothing, no
//   "TTL" when a keepalive found no lease, no "type" on a PUT event.
// - Keys and values are base64.
// - Replies to requests use snake_case (create_revision, response_range);
//   requests may use either spelling.
// Parsers never throw and never crash on any input: a reply that is not what
// the gateway sends is kUnavailable (a garbled or foreign reply is a transport
// problem, worth retrying elsewhere).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snowid/status.h"

namespace snowid::etcd {

// Standard base64 with padding, as the gateway uses for bytes.
std::string base64_encode(std::string_view bytes);
// Strict: only the standard alphabet, padding required; nullopt otherwise.
std::optional<std::string> base64_decode(std::string_view text);

// The smallest key after every key that starts with `prefix`: a range's end
// for "all keys with this prefix". "\0" (all keys) for an empty prefix.
std::string prefix_end(std::string_view prefix);

// --- Requests ---------------------------------------------------------------

struct Compare {
  enum class Target { kCreate, kMod };
  Target target = Target::kCreate;
  std::string key;
  std::int64_t revision = 0;  // the key's create or mod revision must EQUAL this (0: absent)
};

struct Op {
  enum class Kind { kPut, kRange, kDelete };
  Kind kind = Kind::kRange;
  std::string key;
  std::string value;       // kPut
  std::int64_t lease = 0;  // kPut: attach to this lease (0: none)
  std::string range_end;   // kRange, kDelete: empty for the key alone

  static Op put(std::string key, std::string value, std::int64_t lease = 0);
  static Op range(std::string key);
  static Op remove(std::string key);
};

std::string txn_body(const std::vector<Compare>& compares, const std::vector<Op>& success,
                     const std::vector<Op>& failure);
// `range_end` empty: the key alone.
std::string range_body(std::string_view key, std::string_view range_end = {});
std::string lease_grant_body(std::int64_t ttl_seconds);
// keepalive, revoke: {"ID":"<id>"}.
std::string lease_id_body(std::int64_t id);
std::string time_to_live_body(std::int64_t id);
std::string watch_create_body(std::string_view key, std::int64_t start_revision);
std::string authenticate_body(std::string_view user, std::string_view password);

// --- Replies ----------------------------------------------------------------

struct Header {
  // 0 when the gateway left it out.
  std::uint64_t cluster_id = 0;
  std::uint64_t member_id = 0;
  std::int64_t revision = 0;
};

struct KeyValue {
  std::string key;  // decoded
  std::string value;
  std::int64_t create_revision = 0;
  std::int64_t mod_revision = 0;
  std::int64_t version = 0;
  std::int64_t lease = 0;  // 0: none
};

struct RangeReply {
  Header header;
  std::vector<KeyValue> kvs;
};

struct TxnOpReply {
  Op::Kind kind = Op::Kind::kRange;
  std::vector<KeyValue> kvs;  // kRange
  std::int64_t deleted = 0;   // kDelete
};

struct TxnReply {
  Header header;  // header.revision: the store's revision after the transaction
  bool succeeded = false;
  std::vector<TxnOpReply> responses;
};

struct LeaseGrantReply {
  std::int64_t id = 0;
  std::int64_t ttl = 0;
};

struct KeepAliveReply {
  Header header;
  std::int64_t id = 0;
  // Seconds left; 0 when the gateway left it out: the lease was not found.
  std::int64_t ttl = 0;
};

struct TimeToLiveReply {
  std::int64_t id = 0;
  std::int64_t ttl = 0;  // -1: expired or never existed
  std::int64_t granted_ttl = 0;
};

struct StatusReply {
  Header header;
  std::uint64_t leader = 0;  // member id of the leader; 0: none known
};

struct WatchEvent {
  bool is_delete = false;
  KeyValue kv;
};

// One line of a watch stream.
struct WatchMessage {
  Header header;
  bool created = false;
  bool canceled = false;
  std::int64_t compact_revision = 0;  // > 0: the start revision was compacted away
  std::string cancel_reason;
  std::vector<WatchEvent> events;
};

// An error reply: {"error":..,"message":..,"code":<grpc code>} from unary
// calls, {"error":{"grpc_code":..,"message":..}} inside a stream (etcd 3.4
// and 3.5); {"code":..,"message":..} and {"error":{"code":..,"message":..}}
// from etcd 3.6 on.
struct GatewayError {
  int code =
      0;  // gRPC status code: 3 invalid argument, 5 not found, 14 unavailable, 16 unauthenticated
  std::string message;
};

// The gRPC codes the gateway reports that the registry tells apart.
inline constexpr int kGrpcInvalidArgument = 3;
inline constexpr int kGrpcDeadlineExceeded = 4;
inline constexpr int kGrpcNotFound = 5;
inline constexpr int kGrpcPermissionDenied = 7;
inline constexpr int kGrpcFailedPrecondition = 9;
inline constexpr int kGrpcUnavailable = 14;
inline constexpr int kGrpcUnauthenticated = 16;

// nullopt when `body` is not an error reply (or not JSON at all).
std::optional<GatewayError> parse_error(std::string_view body);

Result<RangeReply> parse_range(std::string_view body);
Result<TxnReply> parse_txn(std::string_view body);
Result<LeaseGrantReply> parse_lease_grant(std::string_view body);
// Unwraps the stream's {"result":{...}}; a plain object is accepted too.
Result<KeepAliveReply> parse_keepalive(std::string_view body);
Result<TimeToLiveReply> parse_time_to_live(std::string_view body);
Result<StatusReply> parse_status(std::string_view body);
// A stream error ({"error":...}) is kUnavailable with its message.
Result<WatchMessage> parse_watch_message(std::string_view line);
// The token; kUnavailable if there is none.
Result<std::string> parse_authenticate(std::string_view body);

}  // namespace snowid::etcd
