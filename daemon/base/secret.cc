#include "secret.h"

#include <cstddef>

namespace snowid::daemon {

bool same_secret(std::string_view given, std::string_view expected) noexcept {
  unsigned diff = given.size() == expected.size() ? 0U : 1U;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const char g = i < given.size() ? given[i] : '\0';
    diff |= static_cast<unsigned char>(g ^ expected[i]);
  }
  return diff == 0;
}

}  // namespace snowid::daemon
