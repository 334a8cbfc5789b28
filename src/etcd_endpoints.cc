// parse_etcd_endpoints (snowid/etcd_endpoints.h): the --etcd list.
#include "snowid/etcd_endpoints.h"

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace snowid {
namespace {

Status invalid(std::string_view url, std::string_view why) {
  return Status(Code::kInvalidArgument, "bad etcd endpoint \"" + std::string(url) +
                                            "\": " + std::string(why) +
                                            " (expected http://HOST:PORT or https://HOST:PORT)");
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// A DNS name or an IPv4 address: labels of letters, digits, '-' and '_',
// separated by single dots, none starting or ending with '-'.
bool valid_host_name(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  std::size_t label = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    const char c = host[i];
    if (c == '.') {
      if (label == 0 || host[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    if (!is_alnum(c) && c != '-' && c != '_') return false;
    if (c == '-' && label == 0) return false;
    if (++label > 63) return false;
  }
  return label > 0 && host.back() != '-';
}

// The inside of "[...]": hex digits, ':' and '.' (an embedded IPv4 tail).
bool valid_ipv6(std::string_view host) {
  if (host.size() < 2 || host.size() > 45) return false;
  int colons = 0;
  for (const char c : host) {
    if (c == ':') {
      ++colons;
    } else if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '.') {
      return false;
    }
  }
  return colons >= 2;
}

Result<std::string> parse_one(std::string_view text) {
  const std::string_view url = trim(text);
  if (url.empty()) return invalid(url, "empty");
  std::string_view rest = url;
  std::string scheme;
  if (rest.starts_with("http://")) {
    scheme = "http://";
  } else if (rest.starts_with("https://")) {
    scheme = "https://";
  } else {
    return invalid(url, "the scheme must be http or https");
  }
  rest.remove_prefix(scheme.size());
  // A single trailing slash is harmless; any other path is not an endpoint.
  if (rest.ends_with("/")) rest.remove_suffix(1);
  if (rest.find_first_of("/?#@") != std::string_view::npos) {
    return invalid(url, "a path, query or user name is not allowed");
  }
  std::string_view host;
  std::string_view port;
  if (rest.starts_with("[")) {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos) return invalid(url, "unclosed '['");
    host = rest.substr(1, close - 1);
    if (!valid_ipv6(host)) return invalid(url, "bad IPv6 address");
    const std::string_view after = rest.substr(close + 1);
    if (!after.starts_with(":")) return invalid(url, "no port");
    port = after.substr(1);
  } else {
    const std::size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return invalid(url, "no port");
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (!valid_host_name(host)) return invalid(url, "bad host name");
  }
  if (port.empty() || port.size() > 5) return invalid(url, "bad port");
  unsigned value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') return invalid(url, "bad port");
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) return invalid(url, "the port must be from 1 to 65535");
  // Normalised: no trailing slash, no surrounding blanks.
  return scheme + std::string(rest);
}

}  // namespace

Result<std::vector<std::string>> parse_etcd_endpoints(const std::string& text) {
  std::vector<std::string> out;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    Result<std::string> one = parse_one(rest.substr(0, comma));
    if (!one.is_ok()) return one.status();
    out.push_back(std::move(one).value());
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace snowid
