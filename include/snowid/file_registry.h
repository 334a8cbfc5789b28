// The embedded worker-id registry: one host, no etcd.
//
// Each worker id is a lock file in `<dir>/workers/` held with an advisory
// lock (flock), so processes on one host get distinct ids and a crashed
// process gives its id back through the kernel. Beside each lock file lives
// the id's mark (high-water time, release time); a fence marker written by
// `snowid workers fence` makes the holder stop. acquire() takes the eligible
// id that has rested longest (never-used ids first, lowest first), so one
// host's runs cycle through the block instead of waiting on one id's mark.
//
// Registries on different directories of one host (two users' default state
// directories, two SNOWID_STATE_DIR values) share no lock file. So a holder
// also claims a host-wide name for its id: a Linux abstract Unix socket,
// "@<host_lock_prefix>/r<R>-h<H>", bound (never listening) for the lease's
// life. The kernel lets one socket at a time have the name and frees it when
// the holding process dies, as it frees a flock. An id whose name is taken is
// held, whatever the directory: acquire() passes it by, and a pinned request
// for it gets kResourceExhausted saying that another registry directory on
// this host holds it. Limits:
// - Names are per network namespace: processes in different network
//   namespaces (containers) that use different directories are not kept
//   apart. Give them one directory, or distinct regions.
// - Any local user can bind any name, and so make an id look held (a denial
//   of service, never a duplicate).
// - Across directories the high-water marks are not shared. A holder that
//   follows one of another directory does not wait out that holder's mark:
//   it relies on the time fence of its own directory and on the one host
//   clock, which is past what the previous holder issued unless that holder
//   issued ahead of the clock or the clock has since stepped back.
// - Systems other than Linux have no abstract names; there the guard is off.
//
// Thread safety: as WorkerRegistry. Destroying the registry lets go of every
// lease it still holds, recording nothing (as abandon()); no call may be in
// progress then.
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
  // The prefix of the host-wide name claimed for each held id (see above),
  // "<prefix>/r<R>-h<H>". Registries that use the same prefix never hold the
  // same id at once, whatever their directories; those that must not exclude
  // each other (independent deployments of distinct id spaces, tests running
  // side by side) use distinct prefixes. Empty turns the guard off: then only
  // registries on the same directory exclude each other. At most 64 bytes,
  // no NUL.
  std::string host_lock_prefix = "snowid-worker";
};

// kInvalidArgument for bad options; kUnavailable if the directory cannot be
// created. `clock` must outlive the registry.
//
// release() frees the id even when it cannot record the mark (it returns the
// error then): the mark on disk already covers everything issued, since
// renewals only raise it. abandon() frees the id and writes nothing.
Result<std::unique_ptr<WorkerRegistry>> make_file_registry(const Clock& clock,
                                                           FileRegistryOptions options);

}  // namespace snowid
