// The embedded worker-id registry: one host, no etcd.
//
// Each worker id is a lock file in `<dir>/workers/` held with an advisory
// lock (flock), so processes on one host get distinct ids and a crashed
// process gives its id back through the kernel. Beside each lock file lives
// the id's mark (high-water time, release time); a fence marker written by
// `snowid workers fence` makes the holder stop. acquire() takes the eligible
// id that has rested longest (never-used ids first, lowest first), so one
// host's runs cycle through the block instead of waiting on one id's mark.
#pragma once

#include <memory>
#include <string>

#include "snowid/layout.h"
#include "snowid/lease.h"
#include "snowid/time.h"

namespace snowid {

struct FileRegistryOptions {
  // The state directory; created (mode 0700) if missing.
  std::string dir;
  // Gives the region and host widths: the blocks to choose from.
  Layout layout = Layout::snowid_default();
  // How long a released or abandoned id rests before reuse. Default 0: the
  // quarantine must outlast the skew between holders plus how long a crashed
  // holder could go on issuing, and here both are nil: one host has one
  // clock, and the kernel frees a lock only when every process holding it
  // is gone. The high-water mark still applies. At most 1 hour.
  Duration quarantine = Duration::zero();
  // How often wait_lost() looks for a fence marker. Default 20 ms, so a fence
  // stops the holder well within 100 ms.
  Duration poll_every = std::chrono::milliseconds(20);
};

// kInvalidArgument for bad options; kUnavailable if the directory cannot be
// created. `clock` must outlive the registry.
Result<std::unique_ptr<WorkerRegistry>> make_file_registry(const Clock& clock,
                                                           FileRegistryOptions options);

}  // namespace snowid
