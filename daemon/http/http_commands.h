// The commands of the table (commands.h) over HTTP: a route, its query and
// body into a Request; the Answer into a response. The routes are the rows'
// method and path ("{}" one path segment: an id or a sequence name); Allow
// lists the methods of the path's rows, with HEAD beside GET where that row
// is safe. HEAD on an unsafe row is refused (405, Allow: GET) rather than
// answered as GET: it would issue ids or take numbers that nobody sees.
// Parameters come from the query (and the PUT's JSON body, never the same
// one twice), plain decimal digits; a value outside the row's bounds is 400
// "<param> must be a decimal number from <low> to <high>, got \"<text>\"".
// /v1/ids without a count, or count=1, is NEXTID (counted as one single
// request); any other count, NEXTIDS; with a type, NEXTPUBID or NEXTPUBIDS
// alike. A row with items takes one, the "{}" segment (a public id, or the
// id to wrap).
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <string_view>

#include "commands.h"
#include "http_handler.h"

namespace snowid::daemon {

// The rows served at one path.
struct RouteMatch {
  std::array<const CommandRow*, 4> rows{};
  std::size_t count = 0;
  std::string_view subject;  // the "{}" segment
  bool found() const noexcept { return count > 0; }
};

// The rows whose path matches `path` exactly (no trailing slash forgiven).
RouteMatch match_command_route(std::string_view path);

// Answers `request` for a path the rows serve, after the checks every route
// shares (the target, the token). Sets `deferred` instead for the work that
// must wait on the ticket table.
// `caller` is who asks, for the unwrap route.
HttpResponse answer_command(const Commands& commands, const RouteMatch& match,
                            const HttpRequest& request, const ParsedTarget& target,
                            const PublicIdCaller& caller, std::function<HttpResponse()>& deferred);

}  // namespace snowid::daemon
