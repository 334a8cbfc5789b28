// Where the tool keeps state that must survive between runs (the time fences).
#pragma once

#include <string>

#include "registry_open.h"
#include "snowid/status.h"

namespace snowid::cli {

// The state directory: `flag` (from --state-dir) if not empty, else
// $SNOWID_STATE_DIR, else $XDG_STATE_HOME/snowid, else
// $HOME/.local/state/snowid. Empty variables count as unset, and a relative
// $XDG_STATE_HOME is ignored as the XDG specification says. Does not create it.
Result<std::string> find_state_dir(const std::string& flag);

// Creates `path` and any missing parents, like `mkdir -p` (registry_open.h).
using common::make_dirs;

}  // namespace snowid::cli
