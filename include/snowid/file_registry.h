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
// directories, two SNOWID_STATE_DIR values, containers with their own network
// namespaces) share no lock file. So a holder also claims its id host-wide:
// - a lock file in the host directory (host_dir, default
//   /var/tmp/<host_lock_prefix>, mode 01777, shared by every user), flocked
//   for the lease's life; flock holds across network namespaces and users;
// - a Linux abstract Unix socket, "@<host_lock_prefix>/r<R>-h<H>", bound
//   (never listening) for the lease's life, as before: it keeps apart
//   holders that share a network namespace but not the host directory (an
//   older version, a private /var/tmp).
// The kernel frees both when the holding process dies. An id claimed
// host-wide is held, whatever the directory: acquire() passes it by, and a
// pinned request for it gets kResourceExhausted saying that another registry
// directory on this host holds it.
//
// The host directory also keeps a mark per id, which holders of every
// directory raise with their own: an acquirer takes the later of its
// directory's and the host's high water and release time, so a successor
// through another directory, even with its clock behind, waits out its
// predecessor's mark or refuses; it never issues again what was issued.
// The formats are in file_registry.cc and docs/leases.md.
//
// If the host directory cannot be used (missing and not creatable, a
// symlink, writable by others without the sticky bit, owned by another
// non-root user without the sticky bit, its files unreadable), acquire()
// fails with kUnavailable naming the path and the opt-out, and takes no id;
// an unreadable host mark makes its id unusable (kDataLoss), like the
// directory's.
//
// Limits:
// - Any local user can lock a host file or bind a name, and so make an id
//   look held (a denial of service, never a duplicate). The owner of a sticky
//   host directory that is not root can remove its files.
// - Processes that do not share the host directory (separate mount
//   namespaces with their own /var/tmp, separate hosts) are not kept apart:
//   give them one host_dir, or distinct regions.
// - Systems other than Linux have no abstract names; there only the host
//   directory guards.

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
  // registries on the same directory exclude each other, and host_dir is not
  // used. At most 64 bytes, no NUL.
  std::string host_lock_prefix = "snowid-worker";
  // The host directory (see above): registries that must exclude each other
  // use the same one. Empty: "/var/tmp/<host_lock_prefix>" (then the prefix
  // must not contain '/'). Created with mode 01777 if missing.
  std::string host_dir;
};

// kInvalidArgument for bad options; kUnavailable if the directory cannot be
// created. The host directory is checked (and created) by acquire(). `clock` must outlive the
// registry.
//
// release() frees the id even when it cannot record the mark (it returns the
// error then): the mark on disk already covers everything issued, since
// renewals only raise it. abandon() frees the id and writes nothing.
Result<std::unique_ptr<WorkerRegistry>> make_file_registry(const Clock& clock,
                                                           FileRegistryOptions options);

}  // namespace snowid
