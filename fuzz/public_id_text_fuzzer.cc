// parse_public_id on arbitrary bytes: a parsed id prints back as the input
// folded to lower case (every accepted text is canonical), and parses to the
// same parts again; a refusal carries a reason word. Accepted texts are also
// unwrapped under a fixed test keyring, which must answer without crashing.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "snowid/public_id.h"

namespace {

const snowid::PublicIdCodec& codec() {
  static const snowid::PublicIdCodec c = [] {
    const std::string text =
        "snowid-public-id-keys 1\n"
        "0 active 2026-01-01T00:00:00Z a "
        "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94\n"
        "1 primary 2027-01-01T00:00:00Z b "
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
    return std::move(snowid::PublicIdCodec::create(snowid::PublicIdKeyring::parse(text).value()))
        .value();
  }();
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  snowid::Result<snowid::PublicIdParts> parts = snowid::parse_public_id(text);
  if (!parts.is_ok()) {
    FUZZ_CHECK(parts.status().code() == snowid::Code::kInvalidArgument);
    FUZZ_CHECK(!snowid::public_id_reason(parts.status()).empty());
    return 0;
  }
  std::string folded(text);
  for (char& c : folded) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  const snowid::PublicIdText canonical = parts->text();
  FUZZ_CHECK(canonical.view() == folded);
  snowid::Result<snowid::PublicIdParts> again = snowid::parse_public_id(canonical.view());
  FUZZ_CHECK(again.is_ok() && again->slot == parts->slot && again->form == parts->form &&
             again->compact == parts->compact && again->sealed == parts->sealed &&
             again->type() == parts->type());
  FUZZ_CHECK(parts->slot >= 0 && parts->slot < 4);
  FUZZ_CHECK(parts->compact < (std::uint64_t{1} << 63));

  snowid::Result<snowid::Unwrapped> u = codec().unwrap(text);
  if (u.is_ok()) {
    // What unwraps wraps back to the same text.
    snowid::Result<snowid::PublicIdText> back = codec().wrap(parts->type(), u->id, u->form);
    FUZZ_CHECK(back.is_ok());
    if (u->slot == codec().wrapping_slot(u->id) && u->form == snowid::PublicIdForm::kCompact) {
      FUZZ_CHECK(back->view() == folded);
    }
  } else {
    FUZZ_CHECK(!snowid::public_id_reason(u.status()).empty());
  }
  return 0;
}
