// HTTP/1.1 POSTs of JSON to etcd v3's gateway, over libcurl, with failover
// between the cluster's members, TLS and user/password authentication.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mutex.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::etcd {

struct GatewayOptions {
  std::vector<std::string> endpoints;  // at least one, already validated
  Duration request_timeout = std::chrono::seconds(2);
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string user;  // empty: no authentication
  std::string password;
};

// A fault to inject into one request, for tests of what the registry does
// when a reply is lost. Both look to the caller like a request that timed out.
enum class Fault {
  kNone,
  kDropRequest,  // the request is never sent
  kDropReply,    // the request is sent and answered; the answer is thrown away
};
// Called before each unary request with its path and body.
using FaultHook = std::function<Fault(std::string_view path, std::string_view body)>;

// Thread-safe. Each call tries the members in order, starting with the one
// that last answered, and moves on when one cannot be reached, does not answer
// within request_timeout, or says it cannot serve (no leader, leader changed,
// request timed out). A request that timed out may still have been applied:
// callers treat kUnavailable from a write as an unknown outcome.
class GatewayClient {
 public:
  explicit GatewayClient(GatewayOptions options, FaultHook fault_hook = nullptr);
  ~GatewayClient();
  GatewayClient(const GatewayClient&) = delete;
  GatewayClient& operator=(const GatewayClient&) = delete;

  // Checks that some member answers, and authenticates when a user is set.
  // kUnavailable if no member answers; kInvalidArgument if etcd refuses the
  // user or password.
  Status connect();

  // How one call() (and the authentication it may need) is bounded.
  struct CallOptions {
    // The deadline of each attempt on one member; zero: request_timeout.
    Duration timeout = Duration::zero();
    // When the whole call must be over (steady clock): each attempt is
    // bounded by the earlier of its timeout and what is left until then,
    // and no attempt starts once it has passed (kUnavailable: the outcome
    // of a write is then unknown). max(): none.
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    // May be null. Once it is true the call gives up within about 20 ms
    // with kUnavailable; the outcome of a write is then unknown.
    const std::atomic<bool>* cancel = nullptr;
  };

  // POSTs `body` to `path` (e.g. "/v3/kv/range") and returns the body of the
  // reply. An error that etcd reports for the request itself (not for the
  // member) is returned at once: kNotFound (e.g. no such lease),
  // kInvalidArgument, kFailedPrecondition (e.g. permission denied). When the
  // token has expired, authenticates again and repeats the request once.
  // kUnavailable when no member gave an answer, naming each one's failure.
  // Makes at most one pass over the members (plus that one repeat).
  Result<std::string> call(std::string_view path, const std::string& body,
                           const CallOptions& options);
  Result<std::string> call(std::string_view path, const std::string& body) {
    return call(path, body, CallOptions{});
  }

  // How a stream ended.
  enum class StreamEnd {
    kStopped,   // on_line returned false
    kTimedOut,  // `timeout` passed
    kCanceled,  // *cancel became true
    kBroken,    // the member could not be reached, did not start answering
                // within request_timeout, or ended the stream
  };
  struct StreamResult {
    StreamEnd end = StreamEnd::kBroken;
    std::string error;  // why, for kBroken
  };
  // POSTs `body` to `path` on member `endpoint` only and hands each line of
  // the streamed reply to `on_line` as it arrives, until on_line returns
  // false, `timeout` passes or *cancel (may be null) becomes true. Noticed
  // within about 20 ms. A last line the member sends as it ends the stream
  // is handed over even without a newline after it (the gateway ends
  // streams with an error object written that way).
  //
  // Streams require a leader (gRPC metadata hasleader=true, sent as the
  // gateway header Grpc-Metadata-hasleader): a member that knows no leader
  // refuses the stream with an error line ("etcdserver: no leader"), and
  // one that loses its leader for three election timeouts ends it with
  // that line. Without it, a member cut off from the others would keep a
  // watch open that never sees a write made on the majority side.
  //
  // A stream never makes `endpoint` the preferred member: that it answered
  // says nothing about whether it still follows the leader (see prefer()).
  StreamResult stream(std::size_t endpoint, std::string_view path, const std::string& body,
                      Duration timeout, const std::function<bool(std::string_view)>& on_line,
                      const std::atomic<bool>* cancel);

  std::size_t endpoint_count() const noexcept { return options_.endpoints.size(); }
  const std::string& endpoint(std::size_t i) const { return options_.endpoints[i]; }
  // Where calls and streams start: the member that last completed a unary
  // call (those that write or read linearizably need a leader), or the one
  // last passed to prefer().
  std::size_t preferred_endpoint() const noexcept { return preferred_.load(); }
  // Makes member `endpoint` the preferred one, for a caller that has proof
  // it serves (e.g. a watch on it delivered an event).
  void prefer(std::size_t endpoint) noexcept {
    if (endpoint < options_.endpoints.size()) preferred_.store(endpoint);
  }

  // Authenticates again unless the token already changed since `stale` was
  // read (another thread did it). OK when no user is set.
  Status refresh_token(const std::string& stale, const CallOptions& options);
  Status refresh_token(const std::string& stale) { return refresh_token(stale, CallOptions{}); }
  std::string token() const;

 private:
  class Handle;
  struct Attempt;

  std::unique_ptr<Handle> take_handle();
  void give_back(std::unique_ptr<Handle> handle);
  Attempt post(std::size_t endpoint, std::string_view path, const std::string& body,
               const std::string& token, const CallOptions& call);
  Status authenticate_on(std::size_t endpoint, const CallOptions& call);

  const GatewayOptions options_;
  const FaultHook fault_hook_;
  std::atomic<std::size_t> preferred_{0};

  mutable internal::Mutex mu_;
  std::string token_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Handle>> idle_ GUARDED_BY(mu_);  // reusable connections
  // One authentication at a time; taken before mu_.
  internal::Mutex auth_mu_ ACQUIRED_BEFORE(mu_);
};

}  // namespace snowid::etcd
