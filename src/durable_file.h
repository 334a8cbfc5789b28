// Small state files: read whole, and replaced so that a crash leaves either
// the old content or the new, never a mix. Not part of the public API (the
// host library reads its layout files with read_file_start() too).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/status.h"

namespace snowid::internal {

// What reading the start of a file gave.
struct FileStart {
  std::string text;     // the first bytes, at most max_bytes + 1
  bool opened = false;  // open() succeeded
  int error = 0;        // the errno of open() (if !opened) or read(); 0: read to its end or limit
};

// Reads `fd` into `text` until its end or past `max_bytes` in all (at most
// max_bytes + 1 bytes): the errno of a read that failed, else 0.
int read_up_to(int fd, std::size_t max_bytes, std::string& text);

// Reads `path` up to `max_bytes` + 1 bytes, so that a caller can tell a
// longer file. Each caller words the errors itself.
FileStart read_file_start(const std::string& path, std::size_t max_bytes);

// read_small_file() stops after this many bytes: no record a store keeps is
// this long, so a longer file is corrupt and its parser refuses it.
inline constexpr std::size_t kMaxSmallFileBytes = 4096;

// The whole content of `path` (at most kMaxSmallFileBytes + 1 bytes);
// nullopt if it does not exist. kUnavailable if it cannot be opened or read.
Result<std::optional<std::string>> read_small_file(const std::string& path);

// Renames `tmp` (written and fsynced) over `path` and fsyncs the directory;
// removes `tmp` if the rename fails. kUnavailable naming the step.
Status rename_into_place(const std::string& tmp, const std::string& path);

// Durably replaces `path` with `text`: writes `path`.tmp (created with
// `mode`), fsyncs it, renames it over `path` and fsyncs the directory, since
// the rename is durable only once the directory entry is. kUnavailable on
// any failure, with the temporary file removed where possible. The caller
// serializes writers of one path: they share the temporary name.
Status write_file_durably(const std::string& path, std::string_view text, mode_t mode);

}  // namespace snowid::internal
