// Comparing a client's credentials with the configured token.
#pragma once

#include <string_view>

namespace snowid::daemon {

// True when `given` equals `expected`, in time that depends only on the
// length of `expected`, so that a wrong token does not tell how much of it
// was right (nor how long the right one is, beyond what a match shows).
bool same_secret(std::string_view given, std::string_view expected) noexcept;

}  // namespace snowid::daemon
