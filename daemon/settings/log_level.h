// The log's levels, as the log_level setting names them.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace snowid::daemon {

enum class LogLevel : std::uint8_t { kDebug, kInfo, kWarn, kError };

// LogLevel's names, in its order.
inline constexpr std::array<std::string_view, 4> kLogLevelNames = {"debug", "info", "warn",
                                                                   "error"};

constexpr std::string_view log_level_name(LogLevel level) noexcept {
  return kLogLevelNames[static_cast<std::size_t>(level)];
}

}  // namespace snowid::daemon
