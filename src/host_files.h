// The files of the file registry's host directory (file_registry.cc lists
// them), which every user and every network namespace of the host shares:
// the checks that make the directory safe to share, and opening and writing
// its files so that another user can use them too. Not part of the public
// API.
#pragma once

#include <string>
#include <string_view>

#include "posix_file.h"
#include "snowid/status.h"

namespace snowid::internal {

// The mode of the host directory: anyone may create files, only their owner
// (or root) may remove or replace them.
inline constexpr unsigned kHostDirMode = 01777;
// The mode of its files, whatever the umask: every user's registries lock
// and write them.
inline constexpr unsigned kHostFileMode = 0666;

// Creates `dir` with kHostDirMode (whatever the umask) unless it exists, then
// checks that it can be trusted: a directory and not a symlink to one; not
// writable by group or others unless sticky (else anyone could remove a held
// lock file); owned by root or by this process's user unless sticky.
// kUnavailable naming the path and what is wrong otherwise.
Status prepare_host_dir(const std::string& dir);

// Opens the lock file `path` of the host directory, creating it empty with
// kHostFileMode if missing, never through a symlink. Read-only when another
// user's file cannot be opened for writing: flock needs no more.
// kUnavailable on failure.
Result<Fd> open_host_lock_file(const std::string& path);

// The content of the file `path` of the host directory (at most a little
// over kMaxSmallFileBytes); nullopt if it does not exist. Never through a
// symlink, and never blocking on a FIFO someone put there: kUnavailable for
// anything but a regular file, or if it cannot be read.
Result<std::optional<std::string>> read_host_file(const std::string& path);

// Durably records `text` in the mark `path` of the host directory. A new
// mark is written to a temporary file of this process (kHostFileMode),
// fsynced and renamed into place. An existing one is rewritten in place, as
// the sticky directory lets no one replace another user's file: the record
// is written at offset 0, the file cut to its length and fsynced. A mark
// record fits one disk sector and, as its values only grow, never gets
// shorter. The caller holds the mark's mark-lock, which every reader and
// writer takes. kUnavailable on failure.
Status write_host_mark(const std::string& path, std::string_view text);

}  // namespace snowid::internal
