#include "address.h"

#include <arpa/inet.h>

#include <optional>
#include <string>

#include "setting_values.h"

namespace snowid::daemon {

bool Address::is_loopback() const noexcept {
  if (ipv6) {
    in6_addr a{};
    return ::inet_pton(AF_INET6, host.c_str(), &a) == 1 && IN6_IS_ADDR_LOOPBACK(&a);
  }
  return host.starts_with("127.");
}

std::string Address::to_string() const {
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Address> parse_address(std::string_view text) {
  auto fail = [&](std::string why) -> Result<Address> {
    return invalid("must be host:port (A.B.C.D:PORT, [IPV6]:PORT or localhost:PORT), " + why +
                   ": \"" + std::string(text) + "\"");
  };
  Address out;
  std::string_view port;
  if (text.starts_with("[")) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return fail("no closing ]");
    out.host = std::string(text.substr(1, close - 1));
    out.ipv6 = true;
    in6_addr a{};
    if (::inet_pton(AF_INET6, out.host.c_str(), &a) != 1) return fail("not an IPv6 address");
    if (close + 1 >= text.size() || text[close + 1] != ':') return fail("no port");
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return fail("no port");
    out.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
    if (out.host == "localhost") out.host = "127.0.0.1";
    in_addr a{};
    if (out.host.find(':') != std::string::npos) return fail("IPv6 needs brackets");
    if (::inet_pton(AF_INET, out.host.c_str(), &a) != 1) return fail("not an IPv4 address");
  }
  const std::optional<std::int64_t> p = port.size() <= 5 ? parse_int(port) : std::nullopt;
  if (!p || *p < 0 || *p > 65535) return fail("port must be 0..65535");
  out.port = static_cast<std::uint16_t>(*p);
  return out;
}

}  // namespace snowid::daemon
