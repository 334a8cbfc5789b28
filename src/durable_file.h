// Small state files: read whole, and replaced so that a crash leaves either
// the old content or the new, never a mix. Not part of the public API.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/status.h"

namespace snowid::internal {

// read_small_file() stops after this many bytes: no record a store keeps is
// this long, so a longer file is corrupt and its parser refuses it.
inline constexpr std::size_t kMaxSmallFileBytes = 4096;

// The whole content of `path` (at most a little over kMaxSmallFileBytes);
// nullopt if it does not exist. kUnavailable if it cannot be opened or read.
Result<std::optional<std::string>> read_small_file(const std::string& path);

// Durably replaces `path` with `text`: writes `path`.tmp (created with
// `mode`), fsyncs it, renames it over `path` and fsyncs the directory, since
// the rename is durable only once the directory entry is. kUnavailable on
// any failure, with the temporary file removed where possible. The caller
// serializes writers of one path: they share the temporary name.
Status write_file_durably(const std::string& path, std::string_view text, mode_t mode);

}  // namespace snowid::internal
