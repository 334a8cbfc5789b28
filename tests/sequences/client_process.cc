#include "client_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "child_process.h"

namespace snowid::sequence_scenarios {

ClientProcess::ClientProcess(const std::string& program, const std::vector<std::string>& args) {
  test_support::SpawnRequest request;
  request.argv.push_back(program);
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  request.pipe_stdout = true;
  request.pipe_stderr = true;
  test_support::SpawnedChild child;
  if (const int rc = test_support::spawn_child(request, child); rc != 0) {
    start_error_ = "cannot start " + program + ": " + std::strerror(rc);
    reaped_ = true;
    closed_ = true;
    return;
  }
  pid_ = child.pid;
  reader_ = std::thread([this, out = child.out, err = child.err] { read_loop(out, err); });
}

ClientProcess::~ClientProcess() {
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    reap(0);
  }
  if (reader_.joinable()) reader_.join();
}

void ClientProcess::read_loop(int out_fd, int err_fd) {
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_count = 2;
  std::vector<char> buf(1 << 16);
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf.data(), buf.size());
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (i == 1) {
        err_.append(buf.data(), static_cast<std::size_t>(got));
        continue;
      }
      pending_.append(buf.data(), static_cast<std::size_t>(got));
      std::size_t start = 0;
      for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
        const char* first = pending_.data() + start;
        const char* last = pending_.data() + nl;
        std::int64_t n = 0;
        const auto [ptr, ec] = std::from_chars(first, last, n);
        if (ec == std::errc() && ptr == last && first != last) {
          numbers_.push_back(n);
        } else {
          bad_lines_.emplace_back(first, last);
        }
      }
      pending_.erase(0, start);
      cv_.notify_all();
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

bool ClientProcess::wait_for_numbers(std::size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return numbers_.size() >= n || closed_; }) &&
         numbers_.size() >= n;
}

std::size_t ClientProcess::number_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return numbers_.size();
}

void ClientProcess::signal(int sig) {
  if (!reaped_) ::kill(pid_, sig);
}

void ClientProcess::reap(int options) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, options)) < 0 && errno == EINTR) {
  }
  if (r == pid_) {
    reaped_ = true;
    exit_code_ = test_support::exit_code_of(status);
  }
}

std::optional<int> ClientProcess::wait_exit(std::chrono::milliseconds timeout) {
  // The output closes when the child exits (it shares its pipes with no
  // one), so waiting for the reader covers both.
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [this] { return closed_; })) {
      lock.unlock();
      ::kill(pid_, SIGKILL);
      reap(0);
      return std::nullopt;
    }
  }
  if (!reaped_) reap(0);
  if (reader_.joinable()) reader_.join();
  return exit_code_;
}

std::vector<std::int64_t> ClientProcess::numbers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return numbers_;
}

std::vector<std::string> ClientProcess::bad_lines() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bad_lines_;
}

std::string ClientProcess::unterminated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

std::string ClientProcess::err_text() const {
  std::lock_guard<std::mutex> lock(mu_);
  return err_;
}

std::optional<nlohmann::json> ClientProcess::summary() const {
  std::string err = err_text();
  while (!err.empty() && err.back() == '\n') err.pop_back();
  const std::size_t nl = err.rfind('\n');
  const std::string last = nl == std::string::npos ? err : err.substr(nl + 1);
  nlohmann::json j = nlohmann::json::parse(last, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

}  // namespace snowid::sequence_scenarios
