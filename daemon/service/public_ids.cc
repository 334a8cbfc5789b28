#include "public_ids.h"

#include <utility>

#include "ascii.h"

namespace snowid::daemon {

std::string describe_keyring(const PublicIdKeyring& keys) {
  std::string out;
  for (int slot = 0; slot < PublicIdKeyring::kSlots; ++slot) {
    const std::optional<KeySlotInfo>& info = keys.slot(slot);
    if (!info) continue;
    if (!out.empty()) out += ' ';
    out += std::to_string(slot) + ":" + std::string(key_state_name(info->state)) + ":" +
           info->fingerprint;
  }
  return out;
}

PublicIdKeyringStats keyring_stats(const PublicIds& ids) {
  PublicIdKeyringStats out;
  out.reloads = ids.reloads();
  out.reload_failures = ids.reload_failures();
  const PublicIds::Counts counts = ids.counts();
  out.wrapped = counts.wrapped;
  out.wrap_refusals = counts.wrap_refusals;
  out.unwrapped = counts.unwrapped;
  out.unwrap_refusals = counts.unwrap_refusals;
  out.unwrap_denied = counts.unwrap_denied;
  const std::shared_ptr<const PublicIdCodec> codec = ids.current();
  if (codec == nullptr) return out;
  const PublicIdKeyring& keys = codec->keys();
  out.on = true;
  for (int slot = 0; slot < PublicIdKeyring::kSlots; ++slot) {
    if (const std::optional<KeySlotInfo>& info = keys.slot(slot)) {
      ++out.slots_by_state[static_cast<std::size_t>(info->state)];
    }
  }
  out.primary_slot = keys.primary_slot();
  out.primary_fingerprint = keys.slot(out.primary_slot)->fingerprint;
  return out;
}

Status PublicIds::load(const std::string& path) {
  if (path.empty()) {
    codec_.store(nullptr, std::memory_order_release);
    return Status::ok();
  }
  Result<PublicIdKeyring> keys = PublicIdKeyring::load(path);
  if (!keys.is_ok()) return Status(keys.status().code(), path + ": " + keys.status().message());
  PublicIdCodec::Options options;
  options.layout = layout_;
  options.clock = &clock_;
  Result<PublicIdCodec> codec = PublicIdCodec::create(std::move(keys).value(), options);
  if (!codec.is_ok()) return Status(codec.status().code(), path + ": " + codec.status().message());
  codec_.store(std::make_shared<const PublicIdCodec>(std::move(codec).value()),
               std::memory_order_release);
  return Status::ok();
}

namespace {

constexpr std::string_view kOff = "public ids are off";

}  // namespace

Status PublicIds::check_type(std::string_view type) const {
  if (current() == nullptr) return Status(Code::kFailedPrecondition, std::string(kOff));
  return check_public_id_type(type);
}

Status PublicIds::wrap(std::string_view type, std::span<const std::uint64_t> ids,
                       std::vector<std::string>& out) const {
  const std::shared_ptr<const PublicIdCodec> codec = current();
  Status s = codec == nullptr ? Status(Code::kFailedPrecondition, std::string(kOff)) : Status::ok();
  if (s.is_ok()) {
    Result<PublicIdType> prepared = codec->prepare(type);
    if (prepared.is_ok()) {
      // The compact form, several ids per AES call; the texts live in a
      // fixed-size buffer until they are copied out.
      std::vector<PublicIdText> texts(ids.size());
      s = codec->wrap_many(prepared.value(), ids, texts);
      if (s.is_ok()) {
        out.clear();
        out.reserve(ids.size());
        for (const PublicIdText& t : texts) out.emplace_back(t.view());
      }
    } else {
      s = prepared.status();
    }
  }
  if (s.is_ok()) {
    wrapped_.fetch_add(ids.size(), std::memory_order_relaxed);
  } else {
    wrap_refusals_.fetch_add(1, std::memory_order_relaxed);
  }
  return s;
}

Result<UnwrappedId> PublicIds::unwrap(std::string_view text) const {
  const std::shared_ptr<const PublicIdCodec> codec = current();
  if (codec == nullptr) {
    unwrap_refusals_.fetch_add(1, std::memory_order_relaxed);
    return Status(Code::kFailedPrecondition, std::string(kOff));
  }
  Result<Unwrapped> u = codec->unwrap(text);
  if (!u.is_ok()) {
    unwrap_refusals_.fetch_add(1, std::memory_order_relaxed);
    return u.status();
  }
  unwrapped_.fetch_add(1, std::memory_order_relaxed);
  UnwrappedId out;
  out.id = u.value().id;
  out.slot = u.value().slot;
  out.sealed = u.value().form == PublicIdForm::kSealed;
  // The type is the text's own, before its last "_": unwrap accepted the
  // text, so that part is the type's canonical spelling but for case, and
  // needs no second parse.
  out.type = lower_ascii(text.substr(0, text.rfind('_')));
  return out;
}

bool PublicIds::may_unwrap(const PublicIdCaller& caller) const noexcept {
  if (unwrap_allowed(unwrap_callers_.load(std::memory_order_relaxed), caller)) return true;
  unwrap_denied_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

PublicIds::Counts PublicIds::counts() const noexcept {
  Counts c;
  c.wrapped = wrapped_.load(std::memory_order_relaxed);
  c.wrap_refusals = wrap_refusals_.load(std::memory_order_relaxed);
  c.unwrapped = unwrapped_.load(std::memory_order_relaxed);
  c.unwrap_refusals = unwrap_refusals_.load(std::memory_order_relaxed);
  c.unwrap_denied = unwrap_denied_.load(std::memory_order_relaxed);
  return c;
}

Status PublicIds::reload(const std::string& path) {
  Status s = load(path);
  (s.is_ok() ? reloads_ : reload_failures_).fetch_add(1, std::memory_order_relaxed);
  return s;
}

}  // namespace snowid::daemon
