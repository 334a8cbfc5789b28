// PublicIdKeyring::parse on arbitrary text: an accepted keyring has exactly
// one primary slot, at most four slots with distinct names and fingerprints,
// and a refusal never repeats a key.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "snowid/public_id_keyring.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  snowid::Result<snowid::PublicIdKeyring> ring = snowid::PublicIdKeyring::parse(text);
  if (!ring.is_ok()) {
    FUZZ_CHECK(ring.status().code() == snowid::Code::kInvalidArgument);
    FUZZ_CHECK(!ring.status().message().empty());
    return 0;
  }
  int primaries = 0;
  std::set<std::string> names, fingerprints;
  for (int s = 0; s < snowid::PublicIdKeyring::kSlots; ++s) {
    const auto& info = ring->slot(s);
    if (!info) continue;
    FUZZ_CHECK(info->slot == s);
    FUZZ_CHECK(info->fingerprint.size() == 8);
    FUZZ_CHECK(names.insert(info->name).second);
    FUZZ_CHECK(fingerprints.insert(info->fingerprint).second);
    if (info->state == snowid::KeyState::kPrimary) {
      ++primaries;
      FUZZ_CHECK(ring->primary_slot() == s);
    }
  }
  FUZZ_CHECK(primaries == 1);
  return 0;
}
