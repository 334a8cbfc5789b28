// The daemon's public-id keyring (docs/public-id.md): the codec in use, the
// one readers take for each request, and its replacement on SIGHUP.
//
// Readers take the codec with current(): one load of a
// std::atomic<std::shared_ptr>, no mutex and no allocation (libstdc++ guards
// the pointer with a spin bit held for a few instructions, so readers never
// wait on a reload's file reading or key setup). Wrap and unwrap on it are
// the library's: lock-free and allocation-free. A reload builds the new codec
// off to the side and swaps it in; requests that hold the old one finish on
// it. A file that does not load leaves the codec in use as it was.
//
// Messages never hold key bytes: the library's refusals name the line and the
// problem, and a keyring is described by its slots' states and fingerprints.
//
// It is the command table's PublicIdPort: WRAP, UNWRAP and the issuing forms
// take the codec once per command, and count what they did.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "id_service.h"
#include "public_id_port.h"
#include "snowid/layout.h"
#include "snowid/public_id.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

// "0:primary:1a2b3c4d 1:decrypt:5e6f7a8b": a keyring's used slots, with
// their state and fingerprint, for the log.
std::string describe_keyring(const PublicIdKeyring& keys);

class PublicIds;
// The figures of INFO's PublicIds section and /metrics.
PublicIdKeyringStats keyring_stats(const PublicIds& ids);

class PublicIds final : public PublicIdPort {
 public:
  // `clock` must outlive this.
  PublicIds(Layout layout, const Clock& clock) : layout_(layout), clock_(clock) {}

  // Loads the keyring file at `path` (empty: public ids off) and, if it is
  // valid, puts it in use. The library's codes: FAILED_PRECONDITION for a
  // file group or others may read, NOT_FOUND, INVALID_ARGUMENT; the message
  // starts with the path.
  Status load(const std::string& path);
  // As load(), counted as a reload or a reload failure.
  Status reload(const std::string& path);

  // The codec in use, or null while public ids are off.
  std::shared_ptr<const PublicIdCodec> current() const noexcept {
    return codec_.load(std::memory_order_acquire);
  }

  // Who may unwrap, from now on (public_id_unwrap; SIGHUP changes it).
  void set_unwrap_callers(UnwrapCallers who) noexcept {
    unwrap_callers_.store(who, std::memory_order_relaxed);
  }

  // PublicIdPort.
  bool on() const noexcept override { return current() != nullptr; }
  Status check_type(std::string_view type) const override;
  Status wrap(std::string_view type, std::span<const std::uint64_t> ids,
              std::vector<std::string>& out) const override;
  Result<UnwrappedId> unwrap(std::string_view text) const override;
  bool may_unwrap(const PublicIdCaller& caller) const noexcept override;

  // What WRAP, UNWRAP and the issuing forms did: ids wrapped, public ids
  // unwrapped, and the refusals of each (an unwrap refused to the caller is
  // counted as denied, not as a refusal).
  struct Counts {
    std::uint64_t wrapped = 0;
    std::uint64_t wrap_refusals = 0;
    std::uint64_t unwrapped = 0;
    std::uint64_t unwrap_refusals = 0;
    std::uint64_t unwrap_denied = 0;
  };
  Counts counts() const noexcept;

  std::uint64_t reloads() const noexcept { return reloads_.load(std::memory_order_relaxed); }
  std::uint64_t reload_failures() const noexcept {
    return reload_failures_.load(std::memory_order_relaxed);
  }

 private:
  Layout layout_;
  const Clock& clock_;
  std::atomic<std::shared_ptr<const PublicIdCodec>> codec_;
  std::atomic<std::uint64_t> reloads_{0};
  std::atomic<std::uint64_t> reload_failures_{0};
  std::atomic<UnwrapCallers> unwrap_callers_{UnwrapCallers::kLocal};
  mutable std::atomic<std::uint64_t> wrapped_{0};
  mutable std::atomic<std::uint64_t> wrap_refusals_{0};
  mutable std::atomic<std::uint64_t> unwrapped_{0};
  mutable std::atomic<std::uint64_t> unwrap_refusals_{0};
  mutable std::atomic<std::uint64_t> unwrap_denied_{0};
};

}  // namespace snowid::daemon
