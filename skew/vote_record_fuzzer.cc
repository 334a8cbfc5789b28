// libFuzzer target for the vote record reader: whatever it accepts encodes
// back to text it reads the same, and never breaks the format's bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "vote_record.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const snowid::Result<snowid::skew::VoteRecord> r = snowid::skew::parse_vote(text);
  if (!r.is_ok()) {
    FUZZ_CHECK(r.status().code() == snowid::Code::kInvalidArgument);
    FUZZ_CHECK(!r.status().message().empty());
    return 0;
  }
  FUZZ_CHECK(size <= 1024);
  FUZZ_CHECK(r->offset.uncertainty.count() >= 0 && r->delay.count() >= 0);
  FUZZ_CHECK(r->holder_revision > 0);
  const std::string once = snowid::skew::encode_vote(r.value());
  const snowid::Result<snowid::skew::VoteRecord> again = snowid::skew::parse_vote(once);
  FUZZ_CHECK(again.is_ok());
  FUZZ_CHECK(snowid::skew::encode_vote(again.value()) == once);
  return 0;
}
