// What every worker-id registry shares beyond the contract of lease.h: how a
// worker id is named in messages, and the quarantine rule, written once for
// the file registry, etcd and the in-memory registry.
#pragma once

#include <optional>
#include <string>

#include "snowid/layout.h"
#include "snowid/time.h"

namespace snowid {

// "region/host", as messages and operators name a worker id ("0/17").
std::string to_string(WorkerId w);

// The later of two optional instants; nullopt only if both are.
std::optional<WallTime> later(std::optional<WallTime> a, std::optional<WallTime> b);

// An id that is not held is free again `quarantine` after the later of its
// last release and its high-water mark (docs/leases.md, "Quarantine").
// nullopt: free since forever (neither instant is known). etcd frees a
// cleanly released id earlier (docs/protocol.md, "Quarantine").
std::optional<WallTime> quarantine_end(std::optional<WallTime> released_at,
                                       std::optional<WallTime> high_water, Duration quarantine);

}  // namespace snowid
