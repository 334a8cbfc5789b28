#include "state_dir.h"

namespace snowid::host {

Result<std::string> default_state_dir(const Environment& env, StateDirFallback fallback) {
  if (auto xdg = nonempty(env, "XDG_STATE_HOME"); xdg && xdg->front() == '/') {
    return *xdg + "/snowid";
  }
  if (auto home = nonempty(env, "HOME")) return *home + "/.local/state/snowid";
  if (fallback == StateDirFallback::kSystemForRoot && env.uid() == 0) {
    return std::string("/var/lib/snowid");
  }
  return Status(Code::kFailedPrecondition,
                "no state directory: give --state-dir, or set SNOWID_STATE_DIR or HOME");
}

Result<std::string> find_state_dir(const std::string& given, const Environment& env,
                                   StateDirFallback fallback) {
  if (!given.empty()) return given;
  if (auto dir = nonempty(env, "SNOWID_STATE_DIR")) return *dir;
  return default_state_dir(env, fallback);
}

}  // namespace snowid::host
