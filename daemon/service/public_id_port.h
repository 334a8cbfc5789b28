// What the command table needs of public ids (docs/public-id.md), without
// OpenSSL: the daemon's keyring (public_ids.h, in snowid_daemon_public_ids)
// implements it; a snowidd built without public ids has none, and the
// commands answer PUBLIC_IDS_OFF.
//
// Thread-safe: one port serves every connection.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "snowid/status.h"

namespace snowid::daemon {

// Who asks, as the transport knows it: what public_id_unwrap decides on.
struct PublicIdCaller {
  bool unix_socket = false;  // the Unix socket (guarded by its file mode)
  bool loopback = false;     // a TCP or HTTP peer on 127.0.0.0/8 or ::1
  bool token = false;        // the http_token was given (HTTP bearer, RESP AUTH)
};

// Who may unwrap (the public_id_unwrap setting): unwrap answers, for any
// text, which id it stands for, so it is an oracle for the keyed
// permutation and is offered to trusted callers only.
enum class UnwrapCallers : std::uint8_t {
  kLocal,  // the Unix socket and loopback peers (the default)
  kToken,  // the Unix socket and callers that gave the token
  kAny,    // everyone who may use the daemon at all
};
// "local", "token", "any"; false for another word.
bool parse_unwrap_callers(std::string_view word, UnwrapCallers& out) noexcept;
bool unwrap_allowed(UnwrapCallers who, const PublicIdCaller& caller) noexcept;

// The reason word that starts a keyring refusal's message ("UNKNOWN_KEY: ..."),
// or "" when it starts with none.
std::string_view public_id_word(std::string_view message) noexcept;

inline constexpr std::string_view kPublicIdsOffWord = "PUBLIC_IDS_OFF";
inline constexpr std::string_view kPublicIdsOffMessage =
    "public ids are off: set public_id_keys to a keyring file";
inline constexpr std::string_view kUnwrapDeniedMessage =
    "unwrapping is not allowed to this caller (public_id_unwrap)";

// One public id, unwrapped.
struct UnwrappedId {
  std::uint64_t id = 0;
  std::string type;
  int slot = 0;
  bool sealed = false;
};

class PublicIdPort {
 public:
  virtual ~PublicIdPort() = default;

  // False while no keyring is in use.
  virtual bool on() const noexcept = 0;
  // Refuses a type outside the grammar (BAD_TYPE), or any type while off
  // (FAILED_PRECONDITION), before ids are issued for it.
  virtual Status check_type(std::string_view type) const = 0;
  // The compact public id of each of `ids`, under the keyring in use, into
  // `out` (one per id, in order). A refusal's message starts with the
  // library's reason word (BAD_TYPE, BAD_ID).
  virtual Status wrap(std::string_view type, std::span<const std::uint64_t> ids,
                      std::vector<std::string>& out) const = 0;
  // The id a public id of either form stands for. A refusal's message starts
  // with the library's reason word (UNKNOWN_KEY, FORGED, IMPLAUSIBLE...).
  virtual Result<UnwrappedId> unwrap(std::string_view text) const = 0;
  // Whether `caller` may unwrap under the running setting; a refusal is
  // counted.
  virtual bool may_unwrap(const PublicIdCaller& caller) const noexcept = 0;
};

}  // namespace snowid::daemon
