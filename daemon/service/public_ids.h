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
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "id_service.h"
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

class PublicIds {
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
};

}  // namespace snowid::daemon
