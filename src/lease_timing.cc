// Validation of LeaseTiming, the names of lease states and the rules of
// lease_rules.h: the small, pure part of the lease code, kept apart so that
// it can be read against the bounds documented in lease.h and lease_keeper.h.
#include <algorithm>
#include <string>
#include <string_view>

#include "snowid/lease.h"
#include "snowid/lease_keeper.h"
#include "snowid/lease_rules.h"

namespace snowid {
namespace {

// "10 s", "250 ms", "15 us" or "7 ns": the coarsest unit that shows the
// value exactly, so a message never rounds a bad setting into a good one.
std::string duration_text(Duration d) {
  const std::int64_t ns = d.count();
  if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000) + " s";
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + " ms";
  if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + " us";
  return std::to_string(ns) + " ns";
}

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

}  // namespace

Status validate(const LeaseTiming& t) {
  // etcd grants TTLs in whole seconds; a fraction would be rounded by the
  // registry and the holder's stop deadline computed from a TTL it never got.
  if (t.ttl % std::chrono::seconds(1) != Duration::zero() || t.ttl < std::chrono::seconds(2) ||
      t.ttl > std::chrono::hours(1)) {
    return invalid("ttl must be whole seconds from 2 s to 1 hour, not " + duration_text(t.ttl));
  }
  if (t.renew_every <= Duration::zero()) {
    return invalid("renew_every must be more than 0, not " + duration_text(t.renew_every));
  }
  // A holder must renew at least once before it stops issuing, and must stop
  // before the registry can let the lease expire and grant the id again.
  if (t.stop_after <= t.renew_every) {
    return invalid("stop_after (" + duration_text(t.stop_after) +
                   ") must be more than renew_every (" + duration_text(t.renew_every) + ")");
  }
  if (t.stop_after >= t.ttl) {
    return invalid("stop_after (" + duration_text(t.stop_after) + ") must be less than ttl (" +
                   duration_text(t.ttl) + ")");
  }
  if (t.max_clock_skew < Duration::zero() || t.max_clock_skew > std::chrono::minutes(1)) {
    return invalid("max_clock_skew must be from 0 to 1 minute, not " +
                   duration_text(t.max_clock_skew));
  }
  return Status::ok();
}

std::string_view lease_state_name(LeaseState state) noexcept {
  switch (state) {
    case LeaseState::kHeld:
      return "HELD";
    case LeaseState::kUncertain:
      return "UNCERTAIN";
    case LeaseState::kLost:
      return "LOST";
    case LeaseState::kReleased:
      return "RELEASED";
  }
  return "UNKNOWN";
}

std::string to_string(WorkerId w) {
  return std::to_string(w.region) + "/" + std::to_string(w.host);
}

std::optional<WallTime> later(std::optional<WallTime> a, std::optional<WallTime> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

std::optional<WallTime> quarantine_end(std::optional<WallTime> released_at,
                                       std::optional<WallTime> high_water, Duration quarantine) {
  const std::optional<WallTime> last = later(released_at, high_water);
  if (!last) return std::nullopt;
  return *last + quarantine;
}

}  // namespace snowid
