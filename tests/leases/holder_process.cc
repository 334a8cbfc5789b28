#include "holder_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>

extern char** environ;

namespace snowid::leases_test {

long long mono_ns_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

std::unique_ptr<HolderProcess> HolderProcess::spawn(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return nullptr;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return nullptr;
  }
  std::unique_ptr<HolderProcess> p(new HolderProcess());
  p->pid_ = pid;
  const int fd = fds[0];
  p->reader_ = std::thread([raw = p.get(), fd] { raw->read_loop(fd); });
  return p;
}

HolderProcess::~HolderProcess() {
  if (!reaped_ && pid_ > 0) {
    kill(pid_, SIGCONT);
    kill(pid_, SIGKILL);
    waitpid(pid_, &status_, 0);
    reaped_ = true;
  }
  if (reader_.joinable()) reader_.join();
}

void HolderProcess::read_loop(int fd) {
  std::string pending;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      std::string line = pending.substr(start, nl - start);
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      std::lock_guard<std::mutex> lock(mu_);
      if (j.is_discarded() || !j.is_object()) {
        garbage_.push_back(std::move(line));
      } else {
        lines_.push_back(std::move(j));
      }
    }
    pending.erase(0, start);
    cv_.notify_all();
  }
  close(fd);
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

std::optional<nlohmann::json> HolderProcess::wait_for(
    const std::function<bool(const nlohmann::json&)>& pred, Duration timeout, std::size_t from) {
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

std::vector<nlohmann::json> HolderProcess::lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lines_;
}

std::vector<std::string> HolderProcess::garbage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return garbage_;
}

void HolderProcess::signal(int sig) {
  if (!reaped_ && pid_ > 0) kill(pid_, sig);
}

std::optional<int> HolderProcess::wait_exit(Duration timeout) {
  if (reaped_) return WIFEXITED(status_) ? WEXITSTATUS(status_) : -WTERMSIG(status_);
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const pid_t r = waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      if (reader_.joinable()) reader_.join();
      return WIFEXITED(status_) ? WEXITSTATUS(status_) : -WTERMSIG(status_);
    }
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace snowid::leases_test
