// Where the registry keeps each worker id in etcd:
//   <prefix>/<cluster>/workers/<region>/<host>/holder
//   <prefix>/<cluster>/workers/<region>/<host>/mark
// with region and host in decimal, and the namespace's store record at
//   <prefix>/<cluster>/store
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/layout.h"

namespace snowid::etcd {

class WorkerKeys {
 public:
  // `prefix` without a trailing '/'; `cluster` without any '/'.
  WorkerKeys(std::string_view prefix, std::string_view cluster);

  // Every worker key of the cluster starts with this.
  const std::string& all() const noexcept { return base_; }
  // Every key of one region starts with this.
  std::string region(std::uint32_t region) const;
  std::string holder(WorkerId worker) const;
  std::string mark(WorkerId worker) const;
  const std::string& store() const noexcept { return store_; }

  struct Parsed {
    WorkerId worker;
    bool is_holder = false;  // else the mark
  };
  // The worker and kind of one of this cluster's keys; nullopt for any other
  // key (a foreign or malformed one, which callers skip).
  std::optional<Parsed> parse(std::string_view key) const;

 private:
  std::string base_;   // "<prefix>/<cluster>/workers/"
  std::string store_;  // "<prefix>/<cluster>/store"
};

}  // namespace snowid::etcd
