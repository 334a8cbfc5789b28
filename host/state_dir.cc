#include "state_dir.h"

#include <cstdlib>

namespace snowid::cli {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

}  // namespace

Result<std::string> find_state_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (std::string dir = env("SNOWID_STATE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = env("XDG_STATE_HOME"); !xdg.empty() && xdg.front() == '/') {
    return xdg + "/snowid";
  }
  if (std::string home = env("HOME"); !home.empty()) return home + "/.local/state/snowid";
  return Status(Code::kFailedPrecondition,
                "no state directory: give --state-dir or set SNOWID_STATE_DIR or HOME");
}

}  // namespace snowid::cli
