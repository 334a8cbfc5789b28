#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace snowid::test_support {
namespace {

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void close_pair(int (&fds)[2]) {
  for (int& fd : fds) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
}

void wait_for_exit(pid_t pid, int& status) {
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

int exit_code_of(int wait_status) noexcept {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return -WTERMSIG(wait_status);
  return -999;
}

int spawn_child(const SpawnRequest& request, SpawnedChild& child) {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if ((request.pipe_stdout && ::pipe2(out, O_CLOEXEC) != 0) ||
      (request.pipe_stderr && ::pipe2(err, O_CLOEXEC) != 0)) {
    const int e = errno;
    close_pair(out);
    close_pair(err);
    return e;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (request.null_stdin) {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (request.pipe_stdout) posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  if (request.pipe_stderr) posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  std::vector<std::string> args = request.argv;
  std::vector<char*> arg_ptrs = pointers(args);
  std::vector<std::string> env = request.env.value_or(std::vector<std::string>());
  std::vector<char*> env_ptrs = pointers(env);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, arg_ptrs[0], &actions, nullptr, arg_ptrs.data(),
                             request.env ? env_ptrs.data() : environ);
  posix_spawn_file_actions_destroy(&actions);
  for (int* write_end : {&out[1], &err[1]}) {
    if (*write_end >= 0) ::close(*write_end);
    *write_end = -1;
  }
  if (rc != 0) {
    close_pair(out);
    close_pair(err);
    return rc;
  }
  child.pid = pid;
  child.out = out[0];
  child.err = err[0];
  return 0;
}

ProcessResult run_to_completion(const SpawnRequest& request, std::chrono::milliseconds timeout) {
  ProcessResult result;
  SpawnRequest piped = request;
  piped.pipe_stdout = true;
  piped.pipe_stderr = true;
  SpawnedChild child;
  if (const int rc = spawn_child(piped, child); rc != 0) {
    result.err = "cannot start " + request.argv.at(0) + ": " + std::strerror(rc);
    result.exit_code = 127;
    return result;
  }
  const auto until = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_count = 2;
  bool timed_out = false;
  while (open_count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  if (timed_out) ::kill(child.pid, SIGKILL);
  for (pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int status = 0;
  wait_for_exit(child.pid, status);
  result.exit_code = timed_out ? -1000 : exit_code_of(status);
  return result;
}

JsonLineProcess::JsonLineProcess(SpawnRequest request, Stream lines_on) {
  request.pipe_stdout = lines_on == Stream::kStdout;
  request.pipe_stderr = lines_on == Stream::kStderr;
  SpawnedChild child;
  if (const int rc = spawn_child(request, child); rc != 0) {
    start_error_ = "cannot start " + request.argv.at(0) + ": " + std::strerror(rc);
    reaped_ = true;
    status_ = 127 << 8;
    closed_ = true;
    return;
  }
  pid_ = child.pid;
  const int fd = lines_on == Stream::kStdout ? child.out : child.err;
  reader_ = std::thread([this, fd] { read_loop(fd); });
}

JsonLineProcess::~JsonLineProcess() { kill_and_reap(); }

void JsonLineProcess::kill_and_reap() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    wait_for_exit(pid_, status_);
    reaped_ = true;
  }
  if (reader_.joinable()) reader_.join();
}

void JsonLineProcess::read_loop(int fd) {
  std::string pending;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    std::lock_guard<std::mutex> lock(mu_);
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = pending.substr(start, nl - start);
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      raw_.push_back(line);
      if (j.is_discarded() || !j.is_object()) {
        garbage_.push_back(std::move(line));
      } else {
        lines_.push_back(std::move(j));
      }
    }
    pending.erase(0, start);
    cv_.notify_all();
  }
  ::close(fd);
  std::lock_guard<std::mutex> lock(mu_);
  if (!pending.empty()) {
    raw_.push_back(pending);
    garbage_.push_back(pending);
  }
  closed_ = true;
  cv_.notify_all();
}

std::optional<nlohmann::json> JsonLineProcess::wait_for(
    const std::function<bool(const nlohmann::json&)>& pred, std::chrono::nanoseconds timeout,
    std::size_t from) {
  std::unique_lock<std::mutex> lock(mu_);
  std::size_t next = from;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (; next < lines_.size(); ++next) {
      if (pred(lines_[next])) return lines_[next];
    }
    if (closed_) return std::nullopt;
    if (cv_.wait_until(lock, until) == std::cv_status::timeout) {
      for (; next < lines_.size(); ++next) {
        if (pred(lines_[next])) return lines_[next];
      }
      return std::nullopt;
    }
  }
}

std::vector<nlohmann::json> JsonLineProcess::lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

std::size_t JsonLineProcess::line_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_.size();
}

std::vector<std::string> JsonLineProcess::raw_lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return raw_;
}

std::vector<std::string> JsonLineProcess::garbage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return garbage_;
}

void JsonLineProcess::signal(int sig) {
  if (!reaped_ && pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> JsonLineProcess::wait_exit(std::chrono::nanoseconds timeout) {
  if (reaped_) return exit_code_of(status_);
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
      reaped_ = true;
      if (reader_.joinable()) reader_.join();
      return exit_code_of(status_);
    }
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool JsonLineProcess::alive() {
  if (reaped_) return false;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so wait_exit() still sees the status.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    return false;
  }
  return info.si_pid == 0;
}

}  // namespace snowid::test_support
