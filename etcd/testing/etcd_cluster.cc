#include "testing/etcd_cluster.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "snowid/etcd_registry.h"

extern char** environ;

namespace snowid::etcd::testing {
namespace {

namespace fs = std::filesystem;
using Steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Ports that nothing listens on now. They stay free in practice for the
// second it takes etcd to bind them; start() retries if one was taken.
Result<std::vector<int>> free_ports(int n) {
  std::vector<int> fds;
  std::vector<int> ports;
  Status error;
  for (int i = 0; i < n && error.is_ok(); ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
      error = Status(Code::kUnavailable, "socket() failed");
      break;
    }
    fds.push_back(fd);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      error = Status(Code::kUnavailable, "could not find a free loopback port");
      break;
    }
    ports.push_back(ntohs(addr.sin_port));
  }
  for (const int fd : fds) ::close(fd);
  if (!error.is_ok()) return error;
  return ports;
}

// Starts `bin` (looked up on PATH unless it has a '/') with `args`; its
// output goes to `log_file`.
Result<pid_t> spawn_process(const std::string& bin, const std::vector<std::string>& args,
                            const std::string& log_file) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(bin.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  env_strings.emplace_back("ETCDCTL_API=3");
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, bin.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status(Code::kNotFound, "cannot run " + bin + ": " + std::strerror(rc) +
                                       " (scripts/install-etcd installs etcd; set "
                                       "SNOWID_ETCD_BIN and SNOWID_ETCDCTL_BIN to its binaries)");
  }
  return pid;
}

// Runs a command to completion (at most `timeout`); OK if it exits with 0.
Status run(const std::string& bin, const std::vector<std::string>& args,
           const std::string& log_file, Duration timeout = 30s) {
  Result<pid_t> pid = spawn_process(bin, args, log_file);
  if (!pid.is_ok()) return pid.status();
  const auto deadline = Steady::now() + timeout;
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid.value(), &status, WNOHANG);
    if (r == pid.value()) break;
    if (r < 0) return Status(Code::kUnavailable, bin + ": waitpid failed");
    if (Steady::now() > deadline) {
      ::kill(pid.value(), SIGKILL);
      ::waitpid(pid.value(), &status, 0);
      return Status(Code::kUnavailable, bin + " did not finish in time");
    }
    std::this_thread::sleep_for(10ms);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string cmd = bin;
    for (const std::string& a : args) cmd += " " + a;
    return Status(Code::kUnavailable, "failed: " + cmd + " (see " + log_file + ")");
  }
  return Status::ok();
}

size_t append_to_string(char* ptr, size_t size, size_t nmemb, void* user) {
  static_cast<std::string*>(user)->append(ptr, size * nmemb);
  return size * nmemb;
}

std::uint64_t id_field(const nlohmann::json& obj, const char* name) {
  const auto it = obj.find(name);
  if (it == obj.end()) return 0;
  if (it->is_string()) return std::stoull(it->get<std::string>());
  if (it->is_number_unsigned()) return it->get<std::uint64_t>();
  return 0;
}

std::string tail_of_file(const std::string& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  if (all.size() > max_bytes) all = all.substr(all.size() - max_bytes);
  return all;
}

}  // namespace

Result<std::unique_ptr<EtcdCluster>> EtcdCluster::start(EtcdClusterOptions options) {
  if (options.members < 1) return Status(Code::kInvalidArgument, "at least one member");
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::unique_ptr<EtcdCluster> c(new EtcdCluster());
  c->options_ = std::move(options);
  c->etcd_bin_ = env_or("SNOWID_ETCD_BIN", "etcd");

  std::string templ = (fs::temp_directory_path() / "snowid-etcd-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr) {
    return Status(Code::kUnavailable, "cannot make a temporary directory");
  }
  c->dir_ = templ;
  if (c->options_.tls) {
    if (const Status s = c->make_certificates(); !s.is_ok()) return s;
  }

  // Ports are chosen before etcd binds them, so another process may take one
  // in between: try again with fresh ports a few times.
  Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    for (int i = 0; i < c->size(); ++i) c->stop(i);
    c->members_.clear();
    const int n = c->options_.members;
    Result<std::vector<int>> ports = free_ports(2 * n);
    if (!ports.is_ok()) return ports.status();
    const std::string scheme = c->options_.tls ? "https" : "http";
    std::string initial;
    for (int i = 0; i < n; ++i) {
      Member m;
      m.name = "m" + std::to_string(i);
      m.client_url = scheme + "://127.0.0.1:" + std::to_string(ports.value()[2 * i]);
      m.peer_url = "http://127.0.0.1:" + std::to_string(ports.value()[2 * i + 1]);
      m.data_dir = c->dir_ + "/" + m.name + ".etcd";
      m.log_file = c->dir_ + "/" + m.name + ".log";
      fs::remove_all(m.data_dir);
      if (!initial.empty()) initial += ",";
      initial += m.name + "=" + m.peer_url;
      c->members_.push_back(std::move(m));
    }
    c->cluster_args_ = {"--initial-cluster=" + initial, "--initial-cluster-state=new",
                        "--initial-cluster-token=" + fs::path(c->dir_).filename().string()};
    last = Status::ok();
    for (int i = 0; i < n && last.is_ok(); ++i) last = c->spawn(i);
    if (!last.is_ok() && last.code() == Code::kNotFound) return last;  // not installed
    const auto deadline = Steady::now() + 20s;
    for (int i = 0; i < n && last.is_ok(); ++i) {
      last = c->wait_ready(i, std::chrono::duration_cast<Duration>(deadline - Steady::now()));
    }
    if (last.is_ok()) return c;
  }
  return last;
}

EtcdCluster::~EtcdCluster() {
  for (Member& m : members_) {
    if (m.running) {
      ::kill(m.pid, SIGCONT);
      ::kill(m.pid, SIGTERM);
    }
  }
  for (int i = 0; i < size(); ++i) stop(i);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::vector<std::string> EtcdCluster::endpoints() const {
  std::vector<std::string> out;
  for (const Member& m : members_) out.push_back(m.client_url);
  return out;
}

const std::string& EtcdCluster::endpoint(int i) const {
  return members_.at(static_cast<std::size_t>(i)).client_url;
}

Status EtcdCluster::make_certificates() {
  const std::string openssl = env_or("SNOWID_OPENSSL_BIN", "openssl");
  const std::string log = dir_ + "/openssl.log";
  ca_file_ = dir_ + "/ca.crt";
  ca_key_ = dir_ + "/ca.key";
  server_cert_ = dir_ + "/server.crt";
  server_key_ = dir_ + "/server.key";
  client_cert_ = dir_ + "/client.crt";
  client_key_ = dir_ + "/client.key";
  const std::vector<std::string> ec_key = {"-newkey", "ec", "-pkeyopt",
                                           "ec_paramgen_curve:prime256v1", "-nodes"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  Status s = run(openssl,
                 with({"req", "-x509", "-days", "2", "-subj", "/CN=snowid test CA", "-keyout",
                       ca_key_, "-out", ca_file_, "-addext", "basicConstraints=critical,CA:TRUE",
                       "-addext", "keyUsage=critical,keyCertSign,cRLSign"},
                      ec_key),
                 log);
  if (!s.is_ok()) return s;
  struct Leaf {
    std::string name, cert, key, ext;
  };
  const std::vector<Leaf> leaves = {
      {"127.0.0.1", server_cert_, server_key_,
       "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"},
      {"root", client_cert_, client_key_, "extendedKeyUsage=clientAuth\n"}};
  for (const Leaf& leaf : leaves) {
    const std::string csr = leaf.cert + ".csr";
    const std::string ext = leaf.cert + ".ext";
    std::ofstream(ext) << leaf.ext;
    s = run(openssl,
            with({"req", "-subj", "/CN=" + leaf.name, "-keyout", leaf.key, "-out", csr}, ec_key),
            log);
    if (!s.is_ok()) return s;
    s = run(openssl,
            {"x509", "-req", "-in", csr, "-CA", ca_file_, "-CAkey", ca_key_, "-CAcreateserial",
             "-days", "2", "-out", leaf.cert, "-extfile", ext},
            log);
    if (!s.is_ok()) return s;
  }
  return Status::ok();
}

Status EtcdCluster::spawn(int i) {
  Member& m = members_.at(static_cast<std::size_t>(i));
  std::vector<std::string> args = {"--name=" + m.name,
                                   "--data-dir=" + m.data_dir,
                                   "--listen-client-urls=" + m.client_url,
                                   "--advertise-client-urls=" + m.client_url,
                                   "--listen-peer-urls=" + m.peer_url,
                                   "--initial-advertise-peer-urls=" + m.peer_url,
                                   "--logger=zap",
                                   "--log-outputs=stderr"};
  args.insert(args.end(), cluster_args_.begin(), cluster_args_.end());
  if (options_.tls) {
    args.push_back("--cert-file=" + server_cert_);
    args.push_back("--key-file=" + server_key_);
    if (options_.client_cert_auth) {
      args.push_back("--client-cert-auth");
      args.push_back("--trusted-ca-file=" + ca_file_);
    }
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  Result<pid_t> pid = spawn_process(etcd_bin_, args, m.log_file);
  if (!pid.is_ok()) return pid.status();
  m.pid = pid.value();
  m.running = true;
  return Status::ok();
}

void EtcdCluster::stop(int i) {
  Member& m = members_.at(static_cast<std::size_t>(i));
  if (!m.running) return;
  ::kill(m.pid, SIGCONT);
  ::kill(m.pid, SIGTERM);
  const auto deadline = Steady::now() + 5s;
  int status = 0;
  while (::waitpid(m.pid, &status, WNOHANG) == 0) {
    if (Steady::now() > deadline) {
      ::kill(m.pid, SIGKILL);
      ::waitpid(m.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  m.running = false;
}

namespace {

// Every thread of `pid` is stopped (state 'T' in /proc/<pid>/task/*/stat).
bool all_threads_stopped(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return true;  // gone: nothing left to answer
  bool stopped = true;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream stat(dir + "/" + e->d_name + "/stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size()) continue;
    if (line[paren + 2] != 'T' && line[paren + 2] != 't') {
      stopped = false;
      break;
    }
  }
  ::closedir(d);
  return stopped;
}

}  // namespace

Status EtcdCluster::signal(int i, int sig) {
  Member& m = members_.at(static_cast<std::size_t>(i));
  if (!m.running) return Status(Code::kFailedPrecondition, m.name + " is not running");
  if (::kill(m.pid, sig) != 0) return Status(Code::kUnavailable, "kill failed");
  if (sig == SIGKILL) {
    int status = 0;
    ::waitpid(m.pid, &status, 0);
    m.running = false;
  }
  if (sig == SIGSTOP) {
    // kill() returns before the stop takes effect: a request in flight could
    // still be answered. Stopped means every thread shows state T.
    for (int i = 0; i < 200 && !all_threads_stopped(m.pid); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return Status::ok();
}

Status EtcdCluster::restart(int i) {
  stop(i);
  if (const Status s = spawn(i); !s.is_ok()) return s;
  return wait_ready(i, 20s);
}

Status EtcdCluster::initialize_namespace(const std::string& cluster, const std::string& prefix) {
  EtcdOptions o;
  o.endpoints = endpoints();
  o.prefix = prefix;
  o.cluster = cluster;
  if (options_.tls) {
    o.ca_file = ca_file_;
    if (options_.client_cert_auth) {
      o.cert_file = client_cert_;
      o.key_file = client_key_;
    }
  }
  return initialize_etcd_namespace(system_clock(), std::move(o));
}

Status EtcdCluster::back_up(int i, const std::string& to) {
  stop(i);
  std::error_code ec;
  std::filesystem::copy(members_.at(static_cast<std::size_t>(i)).data_dir, to,
                        std::filesystem::copy_options::recursive, ec);
  if (ec) return Status(Code::kUnavailable, "cannot copy the data directory: " + ec.message());
  if (const Status s = spawn(i); !s.is_ok()) return s;
  return wait_ready(i, 20s);
}

Status EtcdCluster::restart_on(int i, const std::string& from) {
  stop(i);
  const std::string& data = members_.at(static_cast<std::size_t>(i)).data_dir;
  std::error_code ec;
  std::filesystem::remove_all(data, ec);
  if (!ec && !from.empty()) {
    std::filesystem::copy(from, data, std::filesystem::copy_options::recursive, ec);
  }
  if (ec) return Status(Code::kUnavailable, "cannot replace the data directory: " + ec.message());
  if (const Status s = spawn(i); !s.is_ok()) return s;
  return wait_ready(i, 20s);
}

Result<std::string> EtcdCluster::post(int i, const std::string& path) const {
  const Member& m = members_.at(static_cast<std::size_t>(i));
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return Status(Code::kUnavailable, "curl_easy_init failed");
  std::string body;
  const std::string url = m.client_url + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{}");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 1000L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_to_string);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  if (options_.tls) {
    curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file_.c_str());
    if (options_.client_cert_auth) {
      curl_easy_setopt(curl, CURLOPT_SSLCERT, client_cert_.c_str());
      curl_easy_setopt(curl, CURLOPT_SSLKEY, client_key_.c_str());
    }
  }
  const CURLcode rc = curl_easy_perform(curl);
  long http = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK || http != 200) {
    return Status(Code::kUnavailable,
                  m.name + " does not answer: " +
                      (rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP " + std::to_string(http)));
  }
  return body;
}

Result<bool> EtcdCluster::answers_as_ours(int i) const {
  Result<std::string> body = post(i, "/v3/cluster/member/list");
  if (!body.is_ok()) return body.status();
  const std::string& peer = members_.at(static_cast<std::size_t>(i)).peer_url;
  try {
    const nlohmann::json doc = nlohmann::json::parse(body.value());
    for (const nlohmann::json& member : doc.value("members", nlohmann::json::array())) {
      for (const nlohmann::json& url : member.value("peerURLs", nlohmann::json::array())) {
        if (url.is_string() && url.get<std::string>() == peer) return true;
      }
    }
    return false;
  } catch (const std::exception& e) {
    return Status(Code::kUnavailable, "an unreadable member list: " + std::string(e.what()));
  }
}

Result<std::pair<std::uint64_t, std::uint64_t>> EtcdCluster::status_of(int i) const {
  const Member& m = members_.at(static_cast<std::size_t>(i));
  Result<std::string> fetched = post(i, "/v3/maintenance/status");
  if (!fetched.is_ok()) return fetched.status();
  const std::string& body = fetched.value();
  try {
    const nlohmann::json doc = nlohmann::json::parse(body);
    const auto header = doc.find("header");
    const std::uint64_t member = header != doc.end() ? id_field(*header, "member_id") : 0;
    return std::make_pair(member, id_field(doc, "leader"));
  } catch (const std::exception& e) {
    return Status(Code::kUnavailable, m.name + " sent an unreadable status: " + e.what());
  }
}

Result<std::string> EtcdCluster::version(int i) const {
  Result<std::string> fetched = post(i, "/v3/maintenance/status");
  if (!fetched.is_ok()) return fetched.status();
  try {
    const nlohmann::json doc = nlohmann::json::parse(fetched.value());
    return doc.value("version", std::string());
  } catch (const std::exception& e) {
    return Status(Code::kUnavailable, "an unreadable status: " + std::string(e.what()));
  }
}

Status EtcdCluster::wait_ready(int i, Duration timeout) {
  Member& m = members_.at(static_cast<std::size_t>(i));
  const auto deadline = Steady::now() + timeout;
  Status last(Code::kUnavailable, m.name + " did not start");
  while (Steady::now() < deadline) {
    int status = 0;
    if (::waitpid(m.pid, &status, WNOHANG) == m.pid) {
      m.running = false;
      return Status(Code::kUnavailable, m.name + " exited at start:\n" + log_tail(i));
    }
    Result<std::pair<std::uint64_t, std::uint64_t>> s = status_of(i);
    if (s.is_ok() && s->second != 0) {
      // Ports are picked before etcd binds them: the answer may come from
      // another test's etcd that took this client port (and this member then
      // fails to bind and exits). Only one that lists this member's own peer
      // URL is ours.
      Result<bool> ours = answers_as_ours(i);
      if (ours.is_ok() && ours.value()) return Status::ok();
      last = ours.is_ok() ? Status(Code::kUnavailable, "another etcd answers on " + m.client_url)
                          : ours.status();
    }
    if (!s.is_ok()) last = s.status();
    std::this_thread::sleep_for(50ms);
  }
  return Status(Code::kUnavailable,
                "etcd member " + m.name + " not ready: " + last.message() + "\n" + log_tail(i));
}

Result<int> EtcdCluster::leader_index(Duration timeout) const {
  const auto deadline = Steady::now() + timeout;
  while (true) {
    std::vector<std::uint64_t> ids(members_.size(), 0);
    std::uint64_t leader = 0;
    for (int i = 0; i < size(); ++i) {
      if (!members_[static_cast<std::size_t>(i)].running) continue;
      Result<std::pair<std::uint64_t, std::uint64_t>> s = status_of(i);
      if (!s.is_ok()) continue;
      ids[static_cast<std::size_t>(i)] = s->first;
      if (s->second != 0) leader = s->second;
    }
    for (int i = 0; i < size() && leader != 0; ++i) {
      if (ids[static_cast<std::size_t>(i)] == leader) return i;
    }
    if (Steady::now() > deadline) return Status(Code::kUnavailable, "no leader among the members");
    std::this_thread::sleep_for(50ms);
  }
}

Status EtcdCluster::enable_auth(const std::string& password) {
  const std::string etcdctl = env_or("SNOWID_ETCDCTL_BIN", "etcdctl");
  std::vector<std::string> common = {"--endpoints=" + endpoint(0)};
  if (options_.tls) {
    common.push_back("--cacert=" + ca_file_);
    if (options_.client_cert_auth) {
      common.push_back("--cert=" + client_cert_);
      common.push_back("--key=" + client_key_);
    }
  }
  const std::string log = dir_ + "/etcdctl.log";
  const std::vector<std::vector<std::string>> steps = {
      {"user", "add", "root:" + password},
      {"user", "grant-role", "root", "root"},
      {"auth", "enable"},
  };
  for (const std::vector<std::string>& step : steps) {
    std::vector<std::string> args = common;
    args.insert(args.end(), step.begin(), step.end());
    if (const Status s = run(etcdctl, args, log); !s.is_ok()) {
      return Status(s.code(), s.message() + "\n" + tail_of_file(log, 2000));
    }
  }
  return Status::ok();
}

std::string EtcdCluster::log_tail(int i) const {
  return tail_of_file(members_.at(static_cast<std::size_t>(i)).log_file, 3000);
}

}  // namespace snowid::etcd::testing
