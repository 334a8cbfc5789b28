#include "cli_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "temp_dir.h"

extern char** environ;

namespace snowid::cli::testing {
namespace {

std::vector<std::string> child_environment(const CliRun& run) {
  std::vector<std::pair<std::string, std::optional<std::string>>> changes;
  for (const char* name :
       {"SNOWID_STATE_DIR", "XDG_STATE_HOME", "HOME", "SNOWID_REGION", "SNOWID_ETCD_ENDPOINTS",
        "SNOWID_ETCD_PREFIX", "SNOWID_ETCD_CLUSTER", "SNOWID_ETCD_CA", "SNOWID_ETCD_CERT",
        "SNOWID_ETCD_KEY", "SNOWID_ETCD_USER", "SNOWID_ETCD_PASSWORD", "SNOWID_SEQUENCES",
        "SNOWID_REGISTRY",
        // An orchestrator's variables would make the file registry refuse to
        // start (host_sharing.h); the tests that need them set them.
        "KUBERNETES_SERVICE_HOST", "ECS_CONTAINER_METADATA_URI", "ECS_CONTAINER_METADATA_URI_V4",
        "NOMAD_ALLOC_ID"}) {
    changes.emplace_back(name, std::nullopt);
  }
  // The host-wide id locks are shared by every process of the machine: each
  // test process gets names of its own, so tests running side by side (each
  // with its own state directory) do not take each other's ids.
  changes.emplace_back("SNOWID_HOST_LOCK", "snowid-cli-test-" + std::to_string(::getpid()));
  // And a host directory of its own, removed when the test process exits.
  static const test_support::TempDir host_dir("snowid-cli-host");
  changes.emplace_back("SNOWID_HOST_DIR", host_dir.path() + "/host");
  changes.insert(changes.end(), run.env.begin(), run.env.end());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool changed = false;
    for (const auto& c : changes) changed = changed || c.first == name;
    if (!changed) env.push_back(entry);
  }
  // Later changes override earlier ones for the same name.
  for (std::size_t i = 0; i < changes.size(); ++i) {
    bool overridden = false;
    for (std::size_t j = i + 1; j < changes.size(); ++j) {
      overridden = overridden || changes[j].first == changes[i].first;
    }
    if (!overridden && changes[i].second)
      env.push_back(changes[i].first + "=" + *changes[i].second);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  for (std::string& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
}

// Starts the binary with pipes for stdin, stdout and stderr; returns its pid
// and the parent's ends of the pipes.
pid_t spawn(const CliRun& run, int& in_fd, int& out_fd, int& err_fd) {
  // A child that exits before reading all its input must not kill the test.
  static const bool sigpipe_ignored = [] { return ::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;
  int in[2], out[2], err[2];
  check(::pipe2(in, O_CLOEXEC) == 0 && ::pipe2(out, O_CLOEXEC) == 0 && ::pipe2(err, O_CLOEXEC) == 0,
        "pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);

  std::vector<std::string> argv_strings = {SNOWID_CLI_PATH};
  argv_strings.insert(argv_strings.end(), run.args.begin(), run.args.end());
  std::vector<std::string> env_strings = child_environment(run);
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<char*> envp = pointers(env_strings);
  // The child gets the default SIGPIPE action back, as from a shell.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, SNOWID_CLI_PATH, &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    errno = rc;
    check(false, "posix_spawn " SNOWID_CLI_PATH);
  }
  in_fd = in[1];
  out_fd = out[0];
  err_fd = err[0];
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) check(errno == EINTR, "waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

CliResult run_cli(const CliRun& run) {
  int in_fd = -1, out_fd = -1, err_fd = -1;
  const pid_t pid = spawn(run, in_fd, out_fd, err_fd);

  // Feed stdin while draining stdout and stderr, so no pipe fills up.
  CliResult result;
  std::size_t written = 0;
  if (run.input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  } else {
    ::fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  while (out_open || err_open || in_fd >= 0) {
    pollfd fds[3] = {{out_open ? out_fd : -1, POLLIN, 0},
                     {err_open ? err_fd : -1, POLLIN, 0},
                     {in_fd, POLLOUT, 0}};
    if (::poll(fds, 3, -1) < 0) {
      check(errno == EINTR, "poll");
      continue;
    }
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        (i == 0 ? out_open : err_open) = false;
      }
    }
    if (in_fd >= 0 && fds[2].revents != 0) {
      const ssize_t n = ::write(in_fd, run.input.data() + written, run.input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      // The child may exit without reading everything (EPIPE): stop feeding.
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == run.input.size()) {
        ::close(in_fd);
        in_fd = -1;
      }
    }
  }
  result.exit_code = wait_exit(pid);
  return result;
}

CliResult run_cli(std::vector<std::string> args, std::string input) {
  CliRun run;
  run.args = std::move(args);
  run.input = std::move(input);
  return run_cli(run);
}

CliProcess::CliProcess(const CliRun& run) {
  pid_ = spawn(run, in_, out_, errfd_);
  if (!run.input.empty()) write(run.input);
}

CliProcess::~CliProcess() {
  if (finished_) return;
  ::kill(pid_, SIGKILL);
  for (int fd : {in_, out_, errfd_}) {
    if (fd >= 0) ::close(fd);
  }
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

bool CliProcess::write(const std::string& text) {
  if (in_ < 0) return false;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(in_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void CliProcess::close_input() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

void CliProcess::pump(int timeout_ms) {
  pollfd fds[2] = {{out_, POLLIN, 0}, {errfd_, POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) <= 0) return;
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds[i].revents == 0) continue;
    int& fd = i == 0 ? out_ : errfd_;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      (i == 0 ? out_buf_ : err_).append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      ::close(fd);
      fd = -1;
    }
  }
}

std::optional<std::string> CliProcess::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const auto nl = out_buf_.find('\n'); nl != std::string::npos) {
      std::string line = out_buf_.substr(0, nl);
      out_buf_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (out_ < 0 || left.count() <= 0) return std::nullopt;
    pump(static_cast<int>(left.count()));
  }
}

bool CliProcess::wait_for_err(const std::string& text, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (err_.find(text) != std::string::npos) return true;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if ((out_ < 0 && errfd_ < 0) || left.count() <= 0) return false;
    pump(static_cast<int>(left.count()));
  }
}

void CliProcess::send_signal(int sig) { check(::kill(pid_, sig) == 0, "kill"); }

CliResult CliProcess::finish() {
  close_input();
  while (out_ >= 0 || errfd_ >= 0) pump(-1);
  CliResult result;
  result.exit_code = wait_exit(pid_);
  finished_ = true;
  result.out = std::move(out_buf_);
  result.err = err_;
  return result;
}

bool is_one_line_error(const std::string& err) {
  return err.rfind("snowid: ", 0) == 0 && err.size() > 9 && err.back() == '\n' &&
         err.find('\n') == err.size() - 1;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TempDir::TempDir() : test_support::TempDir("snowid-cli-test") { check(!path().empty(), "mkdtemp"); }

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const std::string p = file(name);
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f.good()) throw std::runtime_error("cannot write " + p);
  return p;
}

std::string TempDir::read(const std::string& name) const {
  std::ifstream f(file(name), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

}  // namespace snowid::cli::testing
