#include <cstring>
#include <string>

#include "aes_ecb.h"
#include "snowid/public_id.h"

namespace snowid {
namespace {

constexpr std::string_view kTweakPrefix = "snowid/public-id/v1/";
constexpr std::uint8_t kSealedVersion = 1;
constexpr std::size_t kBatch = 64;

Status implausible(const std::string& why) {
  return Status(Code::kOutOfRange, "IMPLAUSIBLE: " + why);
}

bool wraps(KeyState s) noexcept { return s == KeyState::kPrimary || s == KeyState::kActive; }

}  // namespace

PublicIdCodec::PublicIdCodec(PublicIdKeyring keys, Options options)
    : keys_(std::move(keys)), options_(std::move(options)) {
  time_shift_ = options_.layout.shift_of(FieldRole::kTime);
  const int width = options_.layout.width_of(FieldRole::kTime);
  time_mask_ = width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
  max_id_ = options_.layout.max_id();
  if (max_id_ >= Ff1Binary63::kDomain) max_id_ = Ff1Binary63::kDomain - 1;
  // The wrapping slots by not_before, latest first (the lower slot first
  // among equals, and the lower slot is the earliest among equals): the
  // first whose window has begun by an id's time wraps it.
  for (int s = 0; s < PublicIdKeyring::kSlots; ++s) {
    const std::optional<KeySlotInfo>& info = keys_.slot(s);
    if (!info || !wraps(info->state)) continue;
    if (earliest_slot_ < 0 || info->not_before < keys_.slot(earliest_slot_)->not_before) {
      earliest_slot_ = s;
    }
    // The first tick whose time is at or after not_before.
    std::int64_t first = options_.layout.ticks_at(info->not_before);
    if (options_.layout.time_of_ticks(first) < info->not_before) ++first;
    Window w{first, s};
    int at = window_count_++;
    while (at > 0 && keys_.slot(windows_[static_cast<std::size_t>(at - 1)].slot)->not_before <
                         info->not_before) {
      windows_[static_cast<std::size_t>(at)] = windows_[static_cast<std::size_t>(at - 1)];
      --at;
    }
    windows_[static_cast<std::size_t>(at)] = w;
  }
}

Result<PublicIdCodec> PublicIdCodec::create(PublicIdKeyring keys, Options options) {
  if (options.layout.index_of(FieldRole::kTime) < 0) {
    return Status(Code::kInvalidArgument, "public ids need a layout with a time field");
  }
  if (options.clock == nullptr) return Status(Code::kInvalidArgument, "public ids need a clock");
  return PublicIdCodec(std::move(keys), std::move(options));
}

int PublicIdCodec::wrapping_slot(std::uint64_t id) const noexcept {
  if (keys_.policy() == KeyPolicy::kNewest) return keys_.primary_slot();
  const auto ticks = static_cast<std::int64_t>((id >> time_shift_) & time_mask_);
  for (int i = 0; i < window_count_; ++i) {
    const Window& w = windows_[static_cast<std::size_t>(i)];
    if (w.first_tick <= ticks) return w.slot;
  }
  return earliest_slot_;
}

Status PublicIdCodec::prepare_into(std::string_view type, PublicIdType& out, int only_slot) const {
  if (Status s = check_public_id_type(type); !s.is_ok()) return s;
  std::memcpy(out.name_.data(), type.data(), type.size());
  out.size_ = type.size();
  std::uint8_t tweak[kTweakPrefix.size() + kMaxPublicIdType];
  std::memcpy(tweak, kTweakPrefix.data(), kTweakPrefix.size());
  std::memcpy(tweak + kTweakPrefix.size(), type.data(), type.size());
  const std::size_t t = kTweakPrefix.size() + type.size();
  // The sealed tag: CBC-MAC under the sealing key of T || 0x80 || 0* (ISO/IEC
  // 9797-1 padding 2), first 7 bytes.
  std::uint8_t padded[sizeof tweak + 16] = {};
  std::memcpy(padded, tweak, t);
  padded[t] = 0x80;
  const std::size_t padded_len = (t + 1 + 15) / 16 * 16;
  for (int s = 0; s < PublicIdKeyring::kSlots; ++s) {
    if (only_slot >= 0 && s != only_slot) continue;
    const PublicIdKeyring::Slot& slot = keys_.slots_[static_cast<std::size_t>(s)];
    if (!slot.info || slot.info->state == KeyState::kRetired) continue;
    Result<Ff1Binary63::Tweak> tw = slot.compact->absorb(std::span<const std::uint8_t>(tweak, t));
    if (!tw.is_ok()) return tw.status();
    out.tweaks[static_cast<std::size_t>(s)] = tw.value();
    std::uint8_t mac[16] = {};
    if (!internal::cbc_mac(*slot.seal, std::span<const std::uint8_t>(padded, padded_len), mac)) {
      return Status(Code::kUnavailable, "libcrypto: AES failed");
    }
    std::memcpy(out.tags[static_cast<std::size_t>(s)].data(), mac, 7);
  }
  return Status::ok();
}

Result<PublicIdType> PublicIdCodec::prepare(std::string_view type) const {
  PublicIdType out;
  if (Status s = prepare_into(type, out, -1); !s.is_ok()) return s;
  return out;
}

Result<PublicIdText> PublicIdCodec::wrap(const PublicIdType& type, std::uint64_t id,
                                         PublicIdForm form) const {
  if (id == 0 || id > max_id_) {
    return Status(Code::kInvalidArgument, "BAD_ID: " + std::to_string(id) +
                                              " is not an id of layout " + options_.layout.name() +
                                              " (1 to " + std::to_string(max_id_) + ")");
  }
  const int slot = wrapping_slot(id);
  const PublicIdKeyring::Slot& key = keys_.slots_[static_cast<std::size_t>(slot)];
  if (form == PublicIdForm::kCompact) {
    Result<std::uint64_t> ct =
        key.compact->encrypt(type.tweaks[static_cast<std::size_t>(slot)], id);
    if (!ct.is_ok()) return ct.status();
    return PublicIdParts::compact_text(type.name(), slot, ct.value());
  }
  PublicIdParts parts;
  std::memcpy(parts.type_chars.data(), type.name_.data(), type.size_);
  parts.type_size = type.size_;
  parts.slot = slot;
  parts.form = form;
  std::uint8_t* b = parts.sealed.data();
  for (int i = 0; i < 8; ++i) b[i] = static_cast<std::uint8_t>(id >> (56 - 8 * i));
  std::memcpy(b + 8, type.tags[static_cast<std::size_t>(slot)].data(), 7);
  b[15] = kSealedVersion;
  if (!key.seal->run(b, b, 1)) return Status(Code::kUnavailable, "libcrypto: AES failed");
  return parts.text();
}

Result<PublicIdText> PublicIdCodec::wrap(std::string_view type, std::uint64_t id,
                                         PublicIdForm form) const {
  PublicIdType prepared;
  const int slot = id == 0 || id > max_id_ ? -1 : wrapping_slot(id);
  if (Status s = prepare_into(type, prepared, slot); !s.is_ok()) return s;
  return wrap(prepared, id, form);
}

Status PublicIdCodec::wrap_many(const PublicIdType& type, std::span<const std::uint64_t> ids,
                                std::span<PublicIdText> out) const {
  if (out.size() != ids.size()) {
    return Status(Code::kInvalidArgument, "wrap_many: as many outputs as ids are needed");
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == 0 || ids[i] > max_id_) {
      return Status(Code::kInvalidArgument,
                    "BAD_ID: ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                        " is not an id of layout " + options_.layout.name());
    }
  }
  std::uint64_t values[kBatch];
  std::size_t where[kBatch];
  int slots[kBatch];
  for (std::size_t base = 0; base < ids.size(); base += kBatch) {
    const std::size_t n = ids.size() - base < kBatch ? ids.size() - base : kBatch;
    for (std::size_t k = 0; k < n; ++k) slots[k] = wrapping_slot(ids[base + k]);
    for (int s = 0; s < PublicIdKeyring::kSlots; ++s) {
      std::size_t m = 0;
      for (std::size_t k = 0; k < n; ++k) {
        if (slots[k] != s) continue;
        values[m] = ids[base + k];
        where[m++] = base + k;
      }
      if (m == 0) continue;
      const PublicIdKeyring::Slot& key = keys_.slots_[static_cast<std::size_t>(s)];
      if (Status st = key.compact->encrypt_many(type.tweaks[static_cast<std::size_t>(s)],
                                                std::span<std::uint64_t>(values, m));
          !st.is_ok()) {
        return st;
      }
      for (std::size_t k = 0; k < m; ++k) {
        out[where[k]] = PublicIdParts::compact_text(type.name(), s, values[k]);
      }
    }
  }
  return Status::ok();
}

Status PublicIdCodec::check_decoded(std::uint64_t id, int slot) const {
  if (id == 0) return implausible("it unwraps to 0, which is never issued");
  if (id > max_id_) return implausible("it unwraps to a value beyond the layout");
  const WallTime t =
      options_.layout.time_of_ticks(static_cast<std::int64_t>((id >> time_shift_) & time_mask_));
  if (t > options_.clock->wall_now() + options_.max_forward) {
    return implausible("it unwraps to an id from the future (" + format_iso8601(t) + ")");
  }
  const KeySlotInfo& info = *keys_.slot(slot);
  if (keys_.policy() == KeyPolicy::kByTime && wraps(info.state) && t < info.not_before) {
    // The earliest wrapping key also wraps the ids from before its window.
    for (int s = 0; s < PublicIdKeyring::kSlots; ++s) {
      const std::optional<KeySlotInfo>& o = keys_.slot(s);
      if (o && wraps(o->state) && o->not_before < info.not_before) {
        return implausible("it unwraps to an id older than its key (" + format_iso8601(t) + ")");
      }
    }
  }
  return Status::ok();
}

Result<Unwrapped> PublicIdCodec::unwrap_parts(const PublicIdType& type,
                                              const PublicIdParts& parts) const {
  const std::optional<KeySlotInfo>& info = keys_.slot(parts.slot);
  if (!info || info->state == KeyState::kRetired) {
    return Status(Code::kNotFound, "UNKNOWN_KEY: public id " + std::string(parts.text().view()) +
                                       " is of key slot " + std::to_string(parts.slot) +
                                       ", which " + (info ? "is retired" : "holds no key"));
  }
  const PublicIdKeyring::Slot& key = keys_.slots_[static_cast<std::size_t>(parts.slot)];
  Unwrapped out;
  out.slot = parts.slot;
  out.form = parts.form;
  if (parts.form == PublicIdForm::kCompact) {
    Result<std::uint64_t> id =
        key.compact->decrypt(type.tweaks[static_cast<std::size_t>(parts.slot)], parts.compact);
    if (!id.is_ok()) return id.status();
    out.id = id.value();
  } else {
    std::uint8_t b[16];
    if (!key.unseal->run(parts.sealed.data(), b, 1)) {
      return Status(Code::kUnavailable, "libcrypto: AES failed");
    }
    const auto& tag = type.tags[static_cast<std::size_t>(parts.slot)];
    if (std::memcmp(b + 8, tag.data(), 7) != 0 || b[15] != kSealedVersion || (b[0] & 0x80) != 0) {
      return Status(Code::kInvalidArgument, "FORGED: public id " +
                                                std::string(parts.text().view()) +
                                                " was not sealed by this keyring for this type");
    }
    for (int i = 0; i < 8; ++i) out.id = out.id << 8 | b[i];
  }
  if (Status s = check_decoded(out.id, parts.slot); !s.is_ok()) return s;
  return out;
}

Result<Unwrapped> PublicIdCodec::unwrap(std::string_view text) const {
  Result<PublicIdParts> parts = parse_public_id(text);
  if (!parts.is_ok()) return parts.status();
  PublicIdType type;
  if (Status s = prepare_into(parts->type(), type, parts->slot); !s.is_ok()) return s;
  return unwrap_parts(type, parts.value());
}

Result<Unwrapped> PublicIdCodec::unwrap(const PublicIdType& expected, std::string_view text) const {
  Result<PublicIdParts> parts = parse_public_id(text);
  if (!parts.is_ok()) return parts.status();
  if (parts->type() != expected.name()) {
    return Status(Code::kInvalidArgument, "WRONG_TYPE: public id of type \"" +
                                              std::string(parts->type()) + "\" where \"" +
                                              std::string(expected.name()) + "\" is expected");
  }
  return unwrap_parts(expected, parts.value());
}

}  // namespace snowid
