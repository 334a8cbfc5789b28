// libFuzzer target for everything the etcd registry reads from outside: the
// endpoint list (--etcd, SNOWID_ETCD_ENDPOINTS), the gateway's JSON replies,
// the values and keys stored in etcd, and grant tokens. None may crash or
// hang; each either refuses with its documented code or returns something
// that survives a round trip.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "gateway_json.h"
#include "snowid/etcd_registry.h"
#include "worker_keys.h"
#include "worker_values.h"

namespace {

using snowid::Code;
namespace etcd = snowid::etcd;

void check_endpoints(const std::string& text) {
  snowid::Result<std::vector<std::string>> r = snowid::parse_etcd_endpoints(text);
  if (!r.is_ok()) {
    FUZZ_CHECK(r.status().code() == Code::kInvalidArgument);
    FUZZ_CHECK(!r.status().message().empty());
    return;
  }
  std::size_t commas = 0;
  for (const char c : text) commas += c == ',' ? 1 : 0;
  FUZZ_CHECK(r->size() == commas + 1);
  std::string joined;
  for (const std::string& url : r.value()) {
    FUZZ_CHECK(url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0);
    FUZZ_CHECK(url.find_first_of(", \t/?#@", url.find("//") + 2) == std::string::npos);
    if (!joined.empty()) joined += ",";
    joined += url;
  }
  // Normalised output parses to itself.
  snowid::Result<std::vector<std::string>> again = snowid::parse_etcd_endpoints(joined);
  FUZZ_CHECK(again.is_ok() && again.value() == r.value());
}

template <typename T>
void check_reply(const snowid::Result<T>& r) {
  if (!r.is_ok()) FUZZ_CHECK(r.status().code() == Code::kUnavailable);
}

void check_replies(std::string_view body) {
  check_reply(etcd::parse_range(body));
  check_reply(etcd::parse_txn(body));
  check_reply(etcd::parse_lease_grant(body));
  check_reply(etcd::parse_keepalive(body));
  check_reply(etcd::parse_time_to_live(body));
  check_reply(etcd::parse_status(body));
  check_reply(etcd::parse_watch_message(body));
  check_reply(etcd::parse_authenticate(body));
  if (const auto e = etcd::parse_error(body)) FUZZ_CHECK(!e->message.empty());
  // A reply that is an error is never read as an answer.
  if (etcd::parse_error(body)) FUZZ_CHECK(!etcd::parse_range(body).is_ok());
}

void check_values(std::string_view text) {
  snowid::Result<etcd::HolderValue> holder = etcd::decode_holder(text);
  if (holder.is_ok()) {
    snowid::Result<etcd::HolderValue> again =
        etcd::decode_holder(etcd::encode_holder(holder->info, holder->lease));
    FUZZ_CHECK(again.is_ok());
    FUZZ_CHECK(again->lease == holder->lease && again->info.pid == holder->info.pid);
    FUZZ_CHECK(again->info.host == holder->info.host);
  } else {
    FUZZ_CHECK(holder.status().code() == Code::kDataLoss);
  }
  snowid::Result<etcd::MarkValue> mark = etcd::decode_mark(text);
  if (mark.is_ok()) {
    snowid::Result<etcd::MarkValue> again = etcd::decode_mark(etcd::encode_mark(mark.value()));
    FUZZ_CHECK(again.is_ok());
    FUZZ_CHECK(again->high_water == mark->high_water && again->released_at == mark->released_at);
  } else {
    FUZZ_CHECK(mark.status().code() == Code::kDataLoss);
  }
  snowid::Result<etcd::GrantToken> token = etcd::decode_token(text);
  if (token.is_ok()) {
    snowid::Result<etcd::GrantToken> again = etcd::decode_token(etcd::encode_token(token.value()));
    FUZZ_CHECK(again.is_ok() && again->lease == token->lease &&
               again->create_revision == token->create_revision && again->worker == token->worker);
  } else {
    FUZZ_CHECK(token.status().code() == Code::kInvalidArgument);
  }
  const etcd::WorkerKeys keys("/snowid", "default");
  if (const auto parsed = keys.parse(text)) {
    const std::string rebuilt =
        parsed->is_holder ? keys.holder(parsed->worker) : keys.mark(parsed->worker);
    FUZZ_CHECK(rebuilt == text);
  }
  // Base64: canonical text round-trips both ways.
  if (const auto bytes = etcd::base64_decode(text)) FUZZ_CHECK(etcd::base64_encode(*bytes) == text);
  FUZZ_CHECK(etcd::base64_decode(etcd::base64_encode(text)) == std::string(text));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_endpoints(text);
  check_replies(text);
  check_values(text);
  return 0;
}
