#include "state_dir.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

Status make_dirs(const std::string& path) {
  if (path.empty()) return Status(Code::kInvalidArgument, "the state directory path is empty");
  // Each prefix that ends just before a '/', then the whole path.
  for (std::size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      const int err = errno;
      return Status(Code::kUnavailable,
                    "cannot create directory " + prefix + ": " + std::strerror(err));
    }
    if (end == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return Status(Code::kUnavailable, "cannot use directory " + path + ": " + std::strerror(err));
  }
  if (!S_ISDIR(st.st_mode)) {
    return Status(Code::kFailedPrecondition, path + " is not a directory");
  }
  return Status::ok();
}

}  // namespace snowid::cli
