// Public ids (docs/public-id.md): an id wrapped under a secret key so that it
// shows neither its creation time nor how many ids came before it.
//
//   compact  "ord_c4khywqwtw0xe"   type, "_", 13 symbols: a 2-bit key slot and
//            FF1 (AES-256, radix 2, n = 63) of the id; any 13 symbols unwrap
//   sealed   type, "_", 26 symbols: a 2-bit slot and one AES-256 block holding
//            the id and a tag; a forged or mistyped one is refused without lookup
//
// The symbols are Crockford's base32 in lower case. Every refusal's message
// starts with a stable reason word (see PublicIdReason) so that tools and
// protocols can name it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "snowid/ff1.h"
#include "snowid/layout.h"
#include "snowid/public_id_keyring.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid {

enum class PublicIdForm : std::uint8_t { kCompact = 0, kSealed = 1 };

// The reason words, first in every refusal's message.
//   BAD_TYPE          the type before "_" breaks its grammar (INVALID_ARGUMENT)
//   NO_TYPE           no "_" separator, or nothing before it (INVALID_ARGUMENT)
//   BAD_LENGTH        not 13 (compact) or 26 (sealed) symbols (INVALID_ARGUMENT)
//   AMBIGUOUS_SYMBOL  i, l, o or u: never written, the hint names 1 or 0 (INVALID_ARGUMENT)
//   BAD_SYMBOL        any other character outside the alphabet (INVALID_ARGUMENT)
//   WRONG_TYPE        a valid public id of another type than asked for (INVALID_ARGUMENT)
//   UNKNOWN_KEY       its slot is empty or retired (NOT_FOUND)
//   FORGED            a sealed id whose tag does not match (INVALID_ARGUMENT)
//   IMPLAUSIBLE       it unwraps to 0, to a time in the future or before its
//                     key's window (OUT_OF_RANGE)
//   BAD_ID            wrap was given 0 or a value beyond the layout (INVALID_ARGUMENT)
// The word of a refusal, or "" for another status.
std::string_view public_id_reason(const Status& status) noexcept;

// A type: 1 to 63 of a-z and "_", starting and ending with a letter (the
// TypeID prefix grammar).
inline constexpr std::size_t kMaxPublicIdType = 63;
Status check_public_id_type(std::string_view type);

// Room for the longest public id, with no allocation.
class PublicIdText {
 public:
  static constexpr std::size_t kCapacity = kMaxPublicIdType + 1 + 26;
  std::string_view view() const noexcept { return {data_.data(), size_}; }

 private:
  friend class PublicIdCodec;
  friend struct PublicIdParts;
  std::array<char, kCapacity> data_{};
  std::size_t size_ = 0;
};

// A public id taken apart without any key: what `snowid public-id check`
// shows. Upper case is folded; the fields are canonical.
struct PublicIdParts {
  PublicIdForm form = PublicIdForm::kCompact;
  std::array<char, kMaxPublicIdType> type_chars{};
  std::size_t type_size = 0;
  int slot = 0;
  std::uint64_t compact = 0;              // the FF1 ciphertext, below 2^63 (compact form)
  std::array<std::uint8_t, 16> sealed{};  // the AES block (sealed form)

  std::string_view type() const noexcept { return {type_chars.data(), type_size}; }
  // The canonical lower-case text of these parts.
  PublicIdText text() const noexcept;
  // The text of a compact public id of `type` (at most kMaxPublicIdType
  // bytes), `slot` and `compact`, without building the parts first.
  static PublicIdText compact_text(std::string_view type, int slot, std::uint64_t compact) noexcept;
};
Result<PublicIdParts> parse_public_id(std::string_view text);

// One type's tweak and tag, derived once per keyring: the hot path's handle.
class PublicIdType {
 public:
  std::string_view name() const noexcept { return {name_.data(), size_}; }

 private:
  friend class PublicIdCodec;
  std::array<char, kMaxPublicIdType> name_{};
  std::size_t size_ = 0;
  std::array<Ff1Binary63::Tweak, PublicIdKeyring::kSlots> tweaks{};
  std::array<std::array<std::uint8_t, 7>, PublicIdKeyring::kSlots> tags{};
};

struct Unwrapped {
  std::uint64_t id = 0;
  int slot = 0;
  PublicIdForm form = PublicIdForm::kCompact;
};

// Wraps and unwraps under one keyring. Immutable: every method is const,
// thread-safe and lock-free, and wrap, unwrap and wrap_many with a
// PublicIdType make no heap allocation once the calling thread has used the
// keyring's keys (refusals allocate their message).
class PublicIdCodec {
 public:
  struct Options {
    // Ids are read with this layout: their time picks the key (by_time) and
    // bounds what unwrap accepts.
    Layout layout = Layout::snowid_default();
    // The clock that says what "the future" is for unwrap; not owned.
    const Clock* clock = &system_clock();
    // How far past now a decoded time may be (clocks of issuers differ).
    Duration max_forward = std::chrono::minutes(5);
  };

  static Result<PublicIdCodec> create(PublicIdKeyring keys, Options options);
  static Result<PublicIdCodec> create(PublicIdKeyring keys) { return create(std::move(keys), {}); }

  const PublicIdKeyring& keys() const noexcept { return keys_; }

  // BAD_TYPE for a type outside the grammar.
  Result<PublicIdType> prepare(std::string_view type) const;

  // The slot that wraps `id` under the keyring's policy.
  int wrapping_slot(std::uint64_t id) const noexcept;

  Result<PublicIdText> wrap(const PublicIdType& type, std::uint64_t id,
                            PublicIdForm form = PublicIdForm::kCompact) const;
  // As above; prepares the type on every call (a few more AES blocks).
  Result<PublicIdText> wrap(std::string_view type, std::uint64_t id,
                            PublicIdForm form = PublicIdForm::kCompact) const;
  // Compact form, several ids per AES call; out.size() must equal ids.size().
  // Stops at the first refused id: its index is in the message.
  Status wrap_many(const PublicIdType& type, std::span<const std::uint64_t> ids,
                   std::span<PublicIdText> out) const;

  // The type is the one the text names; WRONG_TYPE when `expected` differs.
  Result<Unwrapped> unwrap(std::string_view text) const;
  Result<Unwrapped> unwrap(const PublicIdType& expected, std::string_view text) const;

 private:
  PublicIdCodec(PublicIdKeyring keys, Options options);
  Status prepare_into(std::string_view type, PublicIdType& out, int only_slot) const;
  Result<Unwrapped> unwrap_parts(const PublicIdType& type, const PublicIdParts& parts) const;
  Status check_decoded(std::uint64_t id, int slot) const;

  PublicIdKeyring keys_;
  Options options_;
  // by_time: the wrapping slots, latest window first, each with the first
  // tick of its window; an id earlier than every window goes to the
  // earliest. Derived once from the keyring, so wrapping_slot() compares
  // ticks only.
  struct Window {
    std::int64_t first_tick = 0;
    int slot = 0;
  };
  std::array<Window, PublicIdKeyring::kSlots> windows_{};
  int window_count_ = 0;
  int earliest_slot_ = -1;
  int time_shift_ = 0;
  std::uint64_t time_mask_ = 0;
  std::uint64_t max_id_ = 0;
};

}  // namespace snowid
