// What one registry has seen of etcd's store, so that it notices when etcd
// lost or rolled back its data (docs/leases.md, "When etcd loses data"):
// a reply from another cluster, a revision lower than one already seen, a
// store record with another incarnation, a mark lower than one this process
// stored. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "gateway_json.h"
#include "mutex.h"
#include "snowid/time.h"

namespace snowid::etcd {

class StoreHistory {
 public:
  // Notes the header of a reply that reflects every write committed before
  // it was sent: a linearizable range or a transaction (never a keepalive,
  // whose header may come from a member that is behind). Returns why the
  // store is not the one seen before, or nullopt. Either way the header is
  // what later replies are compared with.
  std::optional<std::string> observe(const Header& header);

  // The incarnation of the store record last read or written; empty before.
  std::string incarnation() const;
  void adopt(const std::string& incarnation);

  // Notes the high-water mark this process stored for a grant.
  void stored_mark(const std::string& token, WallTime high_water);
  // Why the mark read back for a grant shows that the store lost writes (it
  // is absent, or lower than what this process stored), or nullopt.
  std::optional<std::string> check_mark(const std::string& token,
                                        std::optional<WallTime> read) const;
  void forget(const std::string& token);

  // A loss noticed that could not be recorded in the store yet: the next
  // acquire or renewal records it.
  void set_pending(std::string reason);
  bool has_pending() const;
  std::optional<std::string> take_pending();

 private:
  mutable internal::Mutex mu_;
  std::uint64_t cluster_id_ GUARDED_BY(mu_) = 0;  // 0: none seen
  std::int64_t revision_ GUARDED_BY(mu_) = 0;     // the highest seen since the last loss
  std::string incarnation_ GUARDED_BY(mu_);
  std::map<std::string, WallTime> marks_ GUARDED_BY(mu_);
  std::optional<std::string> pending_ GUARDED_BY(mu_);
};

}  // namespace snowid::etcd
