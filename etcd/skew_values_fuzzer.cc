// libFuzzer target for the skew monitor's values in etcd (skew_values.h):
// the fence record and the agent value. Neither reader may crash, throw or
// hang; each refuses with kDataLoss and a message, or returns a value that
// encodes to text it reads the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "skew_values.h"
#include "vote_record.h"

namespace {

using snowid::Code;
using snowid::Result;
namespace etcd = snowid::etcd;

void check_fence_record(std::string_view text) {
  const Result<etcd::FenceRecord> r = etcd::decode_fence_record(text);
  if (!r.is_ok()) {
    FUZZ_CHECK(r.status().code() == Code::kDataLoss);
    FUZZ_CHECK(!r.status().message().empty());
    return;
  }
  for (const snowid::skew::CastVote& v : r->votes) FUZZ_CHECK(v.record.holder_revision > 0);
  const std::string once = etcd::encode_fence_record(r.value());
  const Result<etcd::FenceRecord> again = etcd::decode_fence_record(once);
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(again->target == r->target && again->fencer == r->fencer && again->at == r->at);
  FUZZ_CHECK(again->reason == r->reason && again->workers == r->workers);
  FUZZ_CHECK(again->votes.size() == r->votes.size());
  for (std::size_t i = 0; i < r->votes.size(); ++i) {
    FUZZ_CHECK(again->votes[i].voter == r->votes[i].voter);
    FUZZ_CHECK(snowid::skew::encode_vote(again->votes[i].record) ==
               snowid::skew::encode_vote(r->votes[i].record));
  }
  FUZZ_CHECK(etcd::encode_fence_record(again.value()) == once);
}

void check_agent(std::string_view text) {
  const Result<etcd::AgentValue> r = etcd::decode_agent(text);
  if (!r.is_ok()) {
    FUZZ_CHECK(r.status().code() == Code::kDataLoss);
    FUZZ_CHECK(!r.status().message().empty());
    return;
  }
  const std::string once = etcd::encode_agent(r.value());
  const Result<etcd::AgentValue> again = etcd::decode_agent(once);
  FUZZ_CHECK(again.is_ok() && again->address == r->address);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_fence_record(text);
  check_agent(text);
  return 0;
}
