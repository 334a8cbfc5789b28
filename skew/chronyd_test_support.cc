#include "chronyd_test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "child_process.h"

namespace snowid::skew::testing {

std::string chronyd_path() { return SNOWID_CHRONYD_PATH; }
std::string chronyc_path() { return SNOWID_CHRONYC_PATH; }

std::uint16_t free_udp_port() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

std::unique_ptr<Chronyd> Chronyd::reference(std::uint16_t port,
                                            std::vector<std::string> extra_env) {
  return std::unique_ptr<Chronyd>(new Chronyd("port " + std::to_string(port) +
                                                  "\n"
                                                  "bindaddress 127.0.0.1\n"
                                                  "allow 127.0.0.1\n"
                                                  "local stratum 8\n"
                                                  "cmdport 0\n",
                                              std::move(extra_env)));
}

std::unique_ptr<Chronyd> Chronyd::follower(std::uint16_t reference_port) {
  return std::unique_ptr<Chronyd>(new Chronyd("server 127.0.0.1 port " +
                                              std::to_string(reference_port) +
                                              " minpoll -2 maxpoll -2 iburst\n"
                                              "port 0\n"
                                              "cmdport 0\n"));
}

Chronyd::Chronyd(const std::string& config_lines, std::vector<std::string> extra_env) {
  if (chronyd_path().empty()) {
    error_ = "chronyd not found: run scripts/install-deps (Debian package chrony)";
    return;
  }
  if (::geteuid() != 0) {
    error_ = "chronyd -x needs root (it drops to its own user after start)";
    return;
  }
  if (dir_.path().empty()) {
    error_ = "no temporary directory";
    return;
  }
  // chronyd checks that its socket directory belongs to the user it drops
  // to and is closed to others; that user must be able to reach it.
  ::chmod(dir_.path().c_str(), 0711);
  const std::string run = dir_.file("run");
  ::mkdir(run.c_str(), 0700);
  if (const passwd* user = ::getpwnam("_chrony")) ::chown(run.c_str(), user->pw_uid, user->pw_gid);
  const std::string conf = dir_.file("chronyd.conf");
  std::ofstream(conf) << config_lines << "bindcmdaddress " << command_socket() << "\n"
                      << "pidfile " << dir_.file("run/chronyd.pid") << "\n";
  test_support::SpawnRequest request;
  request.argv = {chronyd_path(), "-x", "-d", "-f", conf, "-L", "0", "-l", dir_.file("log")};
  if (!extra_env.empty()) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    request.env = std::move(env);
  }
  test_support::SpawnedChild child;
  if (const int rc = test_support::spawn_child(request, child); rc != 0) {
    error_ = "cannot start chronyd: errno " + std::to_string(rc);
    return;
  }
  pid_ = child.pid;
  // Started once it has written its pid file (it binds its sockets first).
  for (int i = 0; i < 100; ++i) {
    if (::access(dir_.file("run/chronyd.pid").c_str(), F_OK) == 0) return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      error_ = "chronyd exited at start: " + log();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error_ = "chronyd wrote no pid file in 2 s: " + log();
}

Chronyd::~Chronyd() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

std::string Chronyd::log() const {
  std::ifstream in(dir_.file("log"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace snowid::skew::testing
