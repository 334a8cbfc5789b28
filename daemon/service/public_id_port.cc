#include "public_id_port.h"

namespace snowid::daemon {

bool parse_unwrap_callers(std::string_view word, UnwrapCallers& out) noexcept {
  if (word == "local") {
    out = UnwrapCallers::kLocal;
  } else if (word == "token") {
    out = UnwrapCallers::kToken;
  } else if (word == "any") {
    out = UnwrapCallers::kAny;
  } else {
    return false;
  }
  return true;
}

bool unwrap_allowed(UnwrapCallers who, const PublicIdCaller& caller) noexcept {
  switch (who) {
    case UnwrapCallers::kLocal:
      return caller.unix_socket || caller.loopback;
    case UnwrapCallers::kToken:
      return caller.unix_socket || caller.token;
    case UnwrapCallers::kAny:
      return true;
  }
  return false;
}

std::string_view public_id_word(std::string_view message) noexcept {
  std::size_t n = 0;
  while (n < message.size() && ((message[n] >= 'A' && message[n] <= 'Z') || message[n] == '_')) {
    ++n;
  }
  if (n == 0 || n >= message.size() || message[n] != ':') return {};
  return message.substr(0, n);
}

}  // namespace snowid::daemon
