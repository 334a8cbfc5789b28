// Edits of a public-id keyring file (docs/public-id.md section 5) that keep
// its comments and layout: a slot's state changed, a slot line added. Every
// result is parsed as a keyring before it is written, and the file is
// replaced atomically with mode 0600. Keys pass through unchanged and are
// never shown.
#pragma once

#include <string>

#include "snowid/public_id_keyring.h"
#include "snowid/status.h"

namespace snowid::cli {

// The file's text after checking its mode and contents as load() does.
Result<std::string> read_keyring_text(const std::string& path);

// `text` with the state of `slot`'s line set to `state`; FAILED_PRECONDITION
// when the slot has no line.
Result<std::string> with_slot_state(const std::string& text, int slot, KeyState state);

// Writes `text` (a valid keyring) to `path`: a temporary file of mode 0600
// beside it, synced, then renamed over it. `create`: the file must not exist.
Status write_keyring_text(const std::string& path, const std::string& text, bool create);

}  // namespace snowid::cli
