// Keyring texts for tests. The keys are published test keys, never for use.
#pragma once

#include <string>

namespace snowid::test_keyrings {

// The AES-256 key of NIST's FF1 samples, and three others.
inline constexpr const char* kKey0 =
    "2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94";
inline constexpr const char* kKey1 =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
inline constexpr const char* kKey2 =
    "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100";
inline constexpr const char* kKey3 =
    "a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5";

inline const std::string kHead = "snowid-public-id-keys 1\n";

inline std::string line(int slot, const char* state, const char* not_before, const char* name,
                        const char* key) {
  return std::to_string(slot) + " " + state + " " + not_before + " " + name + " " + key + "\n";
}

// One primary key in slot 1, from the layout's epoch.
inline std::string single() {
  return kHead + line(1, "primary", "2026-01-01T00:00:00Z", "k2026", kKey0);
}

}  // namespace snowid::test_keyrings
