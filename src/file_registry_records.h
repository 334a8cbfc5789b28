// The records the file registry keeps for each worker id (file_registry.cc
// describes the files): the mark, the fence marker and the holder text in the
// lock file, each with its writer and reader. These are on-disk formats: a
// change must still read what earlier versions wrote. Not part of the public
// API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "snowid/lease.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::internal {

// A non-negative decimal number of at most 18 digits, the whole of `text`.
std::optional<std::int64_t> parse_int(std::string_view text);

// ---- The mark ----

struct Mark {
  std::optional<WallTime> high_water;
  std::optional<WallTime> released_at;
};

// "snowid-mark 1 high_water=MS released_at=MS\n": Unix milliseconds rounded
// up (a mark may only be later than the instant it records), "-" when absent.
std::string format_mark(const Mark& m);

// nullopt: the file does not exist. kDataLoss when it cannot be read: an id
// whose mark is lost must never be handed out as if it had never been used.
Result<std::optional<Mark>> read_mark(const std::string& path);
// The mark in `text`, the content of the file `path` (for messages).
// kDataLoss when it is not a whole mark record.
Result<Mark> parse_mark(std::string_view text, const std::string& path);
// The mark in what a reader of `path` gave (nullopt: no file), its error
// passed on as it is.
Result<std::optional<Mark>> parse_mark_file(const Result<std::optional<std::string>>& text,
                                            const std::string& path);

// ---- The fence marker ----

struct FenceMarker {
  std::string token;
  WallTime fenced_at{};
};

// "snowid-fenced 1 TOKEN MS\n": the holder with that token was revoked at MS.
std::string format_marker(const FenceMarker& f);

// nullopt if there is none. An unreadable marker is reported as one naming
// no token: callers that hold the lease treat it as their own (stopping is
// safe), others ignore it.
Result<std::optional<FenceMarker>> read_marker(const std::string& path);

// ---- The holder text in the lock file ----

struct HolderText {
  std::string token;
  HolderInfo info;
};

// "snowid-holder 1" then the lines token=, host=, pid=, started=, address=,
// then "end". Control characters in the host and address become '?'.
std::string format_holder(const std::string& token, const HolderInfo& h);

// nullopt when the text is not a complete holder record.
std::optional<HolderText> parse_holder(std::string_view s);

// "HOST pid PID" for messages; "an unknown holder" when there is none.
std::string holder_text(const std::optional<HolderText>& h);

}  // namespace snowid::internal
