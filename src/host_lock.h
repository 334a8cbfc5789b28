// A claim on a name that holds across the whole host (one network
// namespace) with no shared directory: a Linux abstract Unix socket bound to
// the name. The kernel lets one socket at a time have an abstract name, and
// frees it when the last descriptor of the socket closes, so a process that
// dies lets go of its names as it lets go of its flocks. Any local user may
// bind any abstract name: a claim keeps out, it does not authenticate. Not
// part of the public API.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "posix_file.h"
#include "snowid/status.h"

namespace snowid::internal {

// The longest name claim_host_name() takes: sun_path less its leading NUL.
inline constexpr std::size_t kMaxHostNameBytes = 107;

// Whether this system has abstract Unix socket names (Linux). Elsewhere
// claim_host_name() claims nothing and always succeeds.
bool host_names_supported() noexcept;

// Binds a new close-on-exec stream socket, which never listens, to the
// abstract name `name` (sun_path "\0" + name). The socket's descriptor: the
// claim lasts until it is closed (in every process that shares it). nullopt
// when the name is taken: another socket on this host has it.
// kInvalidArgument for an empty name, one longer than kMaxHostNameBytes or
// one with a NUL; kUnavailable when the socket cannot be made or bound.
Result<std::optional<Fd>> claim_host_name(std::string_view name);

}  // namespace snowid::internal
