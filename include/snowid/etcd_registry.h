// The worker-id registry for fleets: etcd v3, through its JSON gateway
// (HTTP/1.1 over libcurl). Part of the snowid::etcd library, not of the core.
//
// Keys, under `<prefix>/<cluster>/workers/<region>/<host>/`:
//   holder  attached to the holder's lease; JSON saying who holds the id
//   mark    the high-water mark, the last release time and whether that
//           release was clean (no lease)
// A free id is taken with one transaction: holder's create_revision == 0 and
// mark's mod_revision unchanged since it was read, then both are written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "snowid/etcd_endpoints.h"
#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/time.h"

namespace snowid {

struct EtcdOptions {
  // Client URLs of the cluster's members, e.g. http://10.0.0.1:2379. Tried in
  // order, moving on when one fails; at least one.
  std::vector<std::string> endpoints;
  // Key prefix and cluster name: keys live under <prefix>/<cluster>/.
  std::string prefix = "/snowid";
  std::string cluster = "default";
  // Gives the region and host widths: the blocks to choose from.
  Layout layout = Layout::snowid_default();
  // How long an expired, fenced or abandoned id rests before reuse, counted
  // from the later of its mark and its release time on the acquirer's clock.
  // Default 10 s: more than the fleet's largest allowed skew (100 ms) plus
  // how long a holder cut off from etcd could go on issuing (stop_after past
  // its last renewal, 8 s) with margin. At most 1 hour. An id given back by a
  // clean release, which records its exact last instant, rests only until
  // the later of that instant and the release time; its successor still
  // waits out max_clock_skew past it (docs/leases.md, "Quarantine").
  Duration quarantine = std::chrono::seconds(10);
  // Deadline of each request to one member; a request that times out has an
  // unknown outcome and is checked before it is retried. Default 2 s.
  Duration request_timeout = std::chrono::seconds(2);
  // TLS: a CA bundle to verify the members with, and a client certificate and
  // key for mutual TLS. Empty: the system's CAs, no client certificate.
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // User and password authentication (etcd's auth API); empty user: none.
  std::string user;
  std::string password;
};

// parse_etcd_endpoints(), the --etcd list, is declared in etcd_endpoints.h
// (included above) and is part of the core.

// OK, or kInvalidArgument naming the option that is out of bounds: the checks
// make_etcd_registry() makes before it connects (docs/protocol.md, "Settings").
Status validate_etcd_options(EtcdOptions options);

// Checks the options and connects (authenticating if a user is set).
// kUnavailable if no member answers; kInvalidArgument for bad options.
// `clock` must outlive the registry.
Result<std::unique_ptr<WorkerRegistry>> make_etcd_registry(const Clock& clock, EtcdOptions options);

// The namespace's store record (docs/leases.md, "When etcd loses data").
// An acquirer that finds neither a record nor any worker key cannot tell a
// new namespace from one whose etcd lost its data, so it makes every id wait
// out what a holder under a lost store could still issue (stop_after, 8 s by
// default). This writes the record of a namespace that has never issued an
// id, so that its first holders need not wait: `snowid workers init`.
// kAlreadyExists if it has one. Never after a loss: it would lift the wait.
Status initialize_etcd_namespace(const Clock& clock, EtcdOptions options);

// Declares that etcd's data was restored from a backup or lost: every id
// counts as marked at now + `in_flight` (the longest a holder of the old
// store may go on issuing: its stop_after), so no acquirer issues what one
// of them may have issued. `snowid workers restored`. Returns that instant.
Result<WallTime> declare_etcd_data_lost(const Clock& clock, EtcdOptions options,
                                        Duration in_flight);

}  // namespace snowid
