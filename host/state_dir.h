// The state directory: where a process keeps what must survive its restarts
// on this host (the time fences, the file registry, the default sequence
// store). The tool and the daemon find it by this one rule, so that both
// reach the same fences and the same registry.
#pragma once

#include <string>

#include "environment.h"
#include "snowid/status.h"

namespace snowid::host {

// Who asks: a service (snowidd) may fall back to the system's state
// directory as root; a tool run by hand never writes there unasked.
enum class StateDirFallback { kNone, kSystemForRoot };

// The directory when no flag, setting or $SNOWID_STATE_DIR names one:
// $XDG_STATE_HOME/snowid (a relative $XDG_STATE_HOME is ignored, as the XDG
// specification says), else $HOME/.local/state/snowid, else, with
// kSystemForRoot, /var/lib/snowid for root. kFailedPrecondition, saying how to
// name one, if none applies. Empty variables count as unset. Creates nothing.
Result<std::string> default_state_dir(const Environment& env, StateDirFallback fallback);

// `given` (a flag or setting) if not empty, else $SNOWID_STATE_DIR, else
// default_state_dir(env, fallback).
Result<std::string> find_state_dir(const std::string& given, const Environment& env,
                                   StateDirFallback fallback);

}  // namespace snowid::host
