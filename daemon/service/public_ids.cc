#include "public_ids.h"

#include <utility>

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

Status PublicIds::reload(const std::string& path) {
  Status s = load(path);
  (s.is_ok() ? reloads_ : reload_failures_).fetch_add(1, std::memory_order_relaxed);
  return s;
}

}  // namespace snowid::daemon
