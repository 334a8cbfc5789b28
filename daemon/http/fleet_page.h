// The /fleet page (fleet_page.html, compiled in): a self-contained HTML
// document that draws GET /v1/skew?history=1 every second.
#pragma once

#include <string_view>

namespace snowid::daemon {

extern const std::string_view kFleetPage;

}  // namespace snowid::daemon
