// A listener's address, as the http and tcp settings give it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "snowid/status.h"

namespace snowid::daemon {

// `host` is an IPv4 or IPv6 literal (IPv6 without the brackets),
// "localhost" already turned into 127.0.0.1. Port 0: the kernel picks a free
// port (for tests).
struct Address {
  std::string host;
  std::uint16_t port = 0;
  bool ipv6 = false;

  bool is_loopback() const noexcept;
  // "127.0.0.1:7390" or "[::1]:7390".
  std::string to_string() const;
  friend bool operator==(const Address&, const Address&) = default;
};

// Parses "A.B.C.D:PORT", "[IPV6]:PORT" or "localhost:PORT", port 0..65535.
// kInvalidArgument naming what is wrong (without a setting name).
Result<Address> parse_address(std::string_view text);

}  // namespace snowid::daemon
