// The Unix socket's path policy (server.h): its directory, the stale-socket
// check before bind, and removing at stop only the file this process made.
#pragma once

#include <sys/types.h>

#include <string>

#include "log.h"
#include "snowid/status.h"

namespace snowid::daemon {

// Before binding `path`: checks its length, creates its directory (0755,
// with missing parents), checks that the directory is private when
// `private_dir` is set (ServerOptions::private_socket_dir), and clears a
// stale socket (logged). An error says what is wrong and changes nothing
// beyond the directories made.
Status prepare_socket_path(const std::string& path, bool private_dir, Logger& log);

// The socket file made at bind, to be removed only if it is still ours.
class SocketFile {
 public:
  // Notes the file now at `path` as ours.
  void made(const std::string& path);
  // Removes it if it is still the file made; once.
  void remove();

 private:
  std::string path_;
  bool made_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// strerror(err).
std::string errno_text(int err);

}  // namespace snowid::daemon
