// A real etcd for integration tests: one member or a 3-member cluster, each a
// child process on free loopback ports, in a fresh temporary directory that
// is removed afterwards. The binaries are $SNOWID_ETCD_BIN and
// $SNOWID_ETCDCTL_BIN, or `etcd` and `etcdctl` on PATH; scripts/test sets
// both to the release that scripts/install-etcd installs. The flags used work
// with etcd 3.4, 3.5, 3.6 and 3.7. Without the binaries start() fails; tests
// that need etcd then fail rather than skip.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::etcd::testing {

struct EtcdClusterOptions {
  int members = 1;  // 1 or 3 (any odd number works)
  // Serve clients over https with a CA and certificates made in the
  // cluster's directory with the openssl command-line tool.
  bool tls = false;
  // With tls: members also require a client certificate signed by the CA.
  bool client_cert_auth = false;
  // Further etcd flags for every member, e.g. "--auth-token-ttl=2".
  std::vector<std::string> extra_args;
};

// Not thread-safe; used from the test's main thread.
class EtcdCluster {
 public:
  // Starts every member and waits until each one answers and knows a leader
  // (at most about 20 s). kNotFound if etcd is not installed.
  static Result<std::unique_ptr<EtcdCluster>> start(EtcdClusterOptions options = {});
  // Stops every member (SIGCONT, SIGTERM, then SIGKILL after 5 s) and removes
  // the directory.
  ~EtcdCluster();
  EtcdCluster(const EtcdCluster&) = delete;
  EtcdCluster& operator=(const EtcdCluster&) = delete;

  int size() const noexcept { return static_cast<int>(members_.size()); }
  // Client URLs, member 0 first.
  std::vector<std::string> endpoints() const;
  const std::string& endpoint(int i) const;

  // Sends `sig` to member i. SIGKILL also reaps it (restart() brings it back).
  Status signal(int i, int sig);
  // Stops member i if it runs, starts it again on its data and ports, and
  // waits until it answers.
  Status restart(int i);
  // Stops member i, copies its data directory to `to` (a cold backup), and
  // starts it again on its data.
  Status back_up(int i, const std::string& to);
  // Stops member i and starts it again on a copy of `from` (an earlier
  // back_up: a restore from the past), or on an empty data directory when
  // `from` is empty (a lost disk, a pod on ephemeral storage): with one
  // member, a new cluster.
  Status restart_on(int i, const std::string& from);
  // Declares the namespace <prefix>/<cluster> new (initialize_etcd_namespace),
  // so that its first holders do not wait out a stop deadline as after a
  // loss of etcd's data.
  Status initialize_namespace(const std::string& cluster, const std::string& prefix = "/snowid");
  // The index of the member that leads now, as the running members report it.
  Result<int> leader_index(Duration timeout = std::chrono::seconds(10)) const;
  // The server version that member i reports, e.g. "3.6.16".
  Result<std::string> version(int i) const;

  // Adds user root with `password`, grants it the root role and enables
  // authentication, with etcdctl.
  Status enable_auth(const std::string& password);

  // With tls: the CA, and a client certificate and key signed by it.
  const std::string& ca_file() const noexcept { return ca_file_; }
  const std::string& client_cert_file() const noexcept { return client_cert_; }
  const std::string& client_key_file() const noexcept { return client_key_; }
  const std::string& dir() const noexcept { return dir_; }
  // The last lines of member i's log, for failure messages.
  std::string log_tail(int i) const;
  // The file member i logs to (etcd's JSON lines).
  const std::string& log_file(int i) const {
    return members_.at(static_cast<std::size_t>(i)).log_file;
  }

 private:
  struct Member {
    std::string name;
    std::string client_url;
    std::string peer_url;
    std::string data_dir;
    std::string log_file;
    pid_t pid = -1;
    bool running = false;
  };

  EtcdCluster() = default;
  Status make_certificates();
  Status spawn(int i);
  void stop(int i);
  // OK once member i answers a status request and names a leader.
  Status wait_ready(int i, Duration timeout);
  // The member id and the leader it reports; kUnavailable if it does not answer.
  Result<std::pair<std::uint64_t, std::uint64_t>> status_of(int i) const;
  // POSTs "{}" to member i's client URL + `path`: the body of a 200 answer.
  Result<std::string> post(int i, const std::string& path) const;
  // Whether the etcd answering on member i's client URL lists member i's
  // peer URL, i.e. is this cluster's member and not another's on that port.
  Result<bool> answers_as_ours(int i) const;

  EtcdClusterOptions options_;
  std::string dir_;
  std::string etcd_bin_;
  std::string ca_file_, ca_key_, server_cert_, server_key_, client_cert_, client_key_;
  std::vector<Member> members_;
  std::vector<std::string> cluster_args_;
};

}  // namespace snowid::etcd::testing
