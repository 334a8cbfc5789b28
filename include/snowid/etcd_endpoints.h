// The etcd endpoint list: the text of --etcd, SNOWID_ETCD and
// SNOWID_ETCD_ENDPOINTS, read by the etcd registry (etcd_registry.h) and by
// every front end that takes that text (snowidd's settings, the `snowid`
// tool). It lives in the core, with no dependency, so that a front end built
// without the etcd registry still reads the list by the same rules and words
// its errors the same way.
#pragma once

#include <string>
#include <vector>

#include "snowid/status.h"

namespace snowid {

// Parses "URL[,URL...]". Each URL is http:// or https://, then a host name,
// an IPv4 address or a bracketed IPv6 address, then ":PORT" (1 to 65535),
// with at most one trailing '/'; blanks (spaces, tabs) around a URL are
// ignored. The URLs come back normalised: no blanks, no trailing slash.
// kInvalidArgument otherwise, with one message that names the bad URL, says
// what is wrong and what is expected:
//   bad etcd endpoint "URL": WHY (expected http://HOST:PORT or https://HOST:PORT)
// An empty or blank text is refused like any other bad URL; a caller with a
// word for "none" (such as "off") checks for it first.
Result<std::vector<std::string>> parse_etcd_endpoints(const std::string& text);

}  // namespace snowid
