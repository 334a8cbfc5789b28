#include "sequence_setup.h"

#include <string>
#include <string_view>

#if SNOWID_DAEMON_SEQUENCE_STORES
#include "ticket_store_url.h"
#endif

namespace snowid::daemon {

SequenceServiceOptions sequence_service_options(const Settings& s) {
  SequenceServiceOptions o;
  o.buffer = buffer_options(s);
  o.max_range = s.max_range;
  o.max_sequences = s.max_sequences;
#if SNOWID_DAEMON_SEQUENCE_STORES
  if (s.sequences != "off") o.store_description = sequences::redact_ticket_store_url(s.sequences);
#endif
  return o;
}

SequenceBufferOptions buffer_options(const Settings& s) {
  SequenceBufferOptions o;
  o.step = s.sequence_step;
  o.refill_at = static_cast<double>(s.sequence_refill) / 100.0;
  o.wait_timeout = s.sequence_wait_timeout;
  o.adaptive = s.sequence_adaptive;
  o.min_step = s.sequence_min_step;
  o.max_step = s.sequence_max_step;
  o.target_range_life = s.sequence_range_life;
  return o;
}

#if SNOWID_DAEMON_SEQUENCE_STORES
Result<std::unique_ptr<TicketStore>> open_sequences(const Settings& s, const Clock& clock,
                                                    Logger& log) {
  if (s.sequences == "off") {
    log.info("sequence store", {{"kind", "off"}});
    return std::unique_ptr<TicketStore>();
  }
  const std::string shown = sequences::redact_ticket_store_url(s.sequences);
  const Result<std::string_view> kind = sequences::ticket_store_kind(s.sequences);
  if (!kind.is_ok()) {
    return Status(Code::kInvalidArgument, "sequences: " + kind.status().message());
  }
  sequences::TicketStoreOpenOptions o;
  o.timeout = s.sequence_store_timeout;
  // One connection for each pool thread that may wait on it, and the
  // fetchers' few.
  o.connections = s.sequence_threads + kFetcherConnections;
  Result<std::unique_ptr<TicketStore>> store = sequences::open_ticket_store(s.sequences, clock, o);
  if (!store.is_ok()) {
    return Status(store.status().code(),
                  "sequences: cannot open " + shown + ": " + store.status().message());
  }
  const bool postgres = kind.value() == "postgresql";
  log.info(
      "sequence store",
      {{"kind", kind.value()}, {"url", shown}, {"connected", postgres ? "on first use" : "yes"}});
  return store;
}
#else
Result<std::unique_ptr<TicketStore>> open_sequences(const Settings& s, const Clock&, Logger& log) {
  if (s.sequences != "off") {
    return Status(Code::kInvalidArgument,
                  "sequences: this snowidd was built without the sequence stores; set "
                  "sequences = off");
  }
  log.info("sequence store", {{"kind", "off"}});
  return std::unique_ptr<TicketStore>();
}
#endif

}  // namespace snowid::daemon
