// read_chrony_tracking: chronyc as a child process, its output read through
// a pipe within the timeout.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "chrony_tracking.h"

extern char** environ;

namespace snowid::skew {

Result<ChronyTracking> read_chrony_tracking(const std::string& chronyc, const std::string& socket,
                                            Duration timeout) {
  std::vector<std::string> args{chronyc, "-c", "-n"};
  if (!socket.empty()) {
    args.push_back("-h");
    args.push_back(socket);
  }
  args.push_back("tracking");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Status(Code::kUnavailable, "pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, chronyc.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return Status(Code::kUnavailable, "cannot run " + chronyc + ": errno " + std::to_string(rc));
  }
  std::string text;
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[512];
    const ssize_t n = ::read(out[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (text.size() < 4096) text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return Status(Code::kUnavailable, "chronyc took longer than the timeout");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Status(Code::kUnavailable, "chronyc failed (is chronyd running?)");
  }
  return parse_chrony_tracking(text);
}

}  // namespace snowid::skew
