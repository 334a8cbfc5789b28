// The keyring behind public ids (docs/public-id.md section 5): up to four key
// slots, each with a state, a start time and a name, and the policy that
// picks the wrapping key. Key bytes never leave the keyring: they are not
// printed, logged or returned, and are wiped when it is destroyed; keys are
// told apart by fingerprint.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

class Ff1Binary63;
namespace internal {
class AesEcb;
}

// Part of the keyring file format: the words are stable.
enum class KeyState : std::uint8_t {
  kPrimary = 0,  // wraps new ids; exactly one slot is primary
  kActive = 1,   // wraps ids of its own time window (policy by_time); unwraps
  kDecrypt = 2,  // unwraps only: a key being rolled out, or one withdrawn from wrapping
  kRetired = 3,  // neither: its public ids are refused with UNKNOWN_KEY
};
std::string_view key_state_name(KeyState state) noexcept;  // "primary", ...

// Which slot wraps an id.
enum class KeyPolicy : std::uint8_t {
  // The primary or active slot with the latest not_before at or before the
  // id's own creation time (the earliest such slot also covers older ids).
  // An object keeps its public id across rotations. The default.
  kByTime = 0,
  // Always the primary slot: a rotation changes every public id.
  kNewest = 1,
};
std::string_view key_policy_name(KeyPolicy policy) noexcept;  // "by_time", "newest"

// What may be shown of a slot.
struct KeySlotInfo {
  int slot = 0;  // 0 to 3, as carried in the public id
  KeyState state = KeyState::kRetired;
  WallTime not_before{};
  std::string name;
  std::string fingerprint;  // 8 hex digits: HMAC-SHA256(key, "snowid key fingerprint")[0..4]
};

class PublicIdKeyring {
 public:
  static constexpr int kSlots = 4;
  static constexpr std::string_view kHeader = "snowid-public-id-keys 1";

  // The keyring file's text. INVALID_ARGUMENT names the line and what is
  // wrong with it: the header, a slot number, state, time, name or key; a
  // slot, name or key given twice; more than 4 slots; no primary or two.
  static Result<PublicIdKeyring> parse(std::string_view text);
  // Reads and parses the file at `path`. FAILED_PRECONDITION when group or
  // others may read or write it (it must be mode 0600 or stricter, as ssh
  // asks of private keys), NOT_FOUND when it does not exist, INVALID_ARGUMENT
  // beyond 64 KiB. The mode is that of the open file that is read.
  static Result<PublicIdKeyring> load(const std::string& path);

  ~PublicIdKeyring();
  PublicIdKeyring(PublicIdKeyring&&) noexcept;
  PublicIdKeyring& operator=(PublicIdKeyring&&) noexcept;

  KeyPolicy policy() const noexcept { return policy_; }
  // The slot's description, or nothing for an unused slot.
  const std::optional<KeySlotInfo>& slot(int slot) const noexcept {
    return slots_[static_cast<std::size_t>(slot)].info;
  }
  int primary_slot() const noexcept { return primary_; }

 private:
  friend class PublicIdCodec;
  struct Slot {
    std::optional<KeySlotInfo> info;
    std::unique_ptr<Ff1Binary63> compact;            // FF1 under the key itself
    std::unique_ptr<internal::AesEcb> seal, unseal;  // AES under the derived sealing key
  };
  PublicIdKeyring();

  std::array<Slot, kSlots> slots_;
  KeyPolicy policy_ = KeyPolicy::kByTime;
  int primary_ = -1;
};

// A fresh keyring line for `slot`: 32 random bytes from the operating
// system's generator (through libcrypto), in the file's grammar. The caller
// writes it to the keyring file; the key is not kept.
Result<std::string> new_keyring_line(int slot, KeyState state, WallTime not_before,
                                     std::string_view name);

}  // namespace snowid
