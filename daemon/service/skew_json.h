// The skew monitor's view as JSON, for GET /v1/skew (docs/daemon.md, "The
// skew monitor's view"): what the /fleet page draws and `snowid skew status`
// prints. Times since the Unix epoch, offsets, uncertainties and round trips
// are strings of nanoseconds: each can pass 2^53 (a clock set to another
// year), as ids do.
#pragma once

#include <string>

#include "skew_snapshot.h"

namespace snowid::daemon {

// With `history`, the held offsets of the last kSkewHistory, one entry per
// round: {"at_ns": "...", "offsets_ns": {"host": n, ...}}.
std::string skew_json(const SkewSnapshot& snapshot, bool history);

}  // namespace snowid::daemon
