#include "gateway_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "gateway_json.h"

namespace snowid::etcd {
namespace {

// A reply larger than this is not one the registry asks for.
constexpr std::size_t kMaxReplyBytes = std::size_t{64} << 20;
// How often a stream looks at its cancel flag and deadlines.
constexpr auto kStreamPoll = std::chrono::milliseconds(20);

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

long to_ms(Duration d) {
  return static_cast<long>(
      std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(d).count()));
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A token that etcd no longer accepts, or none where one is needed.
bool is_auth_error(const GatewayError& e) {
  return e.code == kGrpcUnauthenticated ||
         (e.code == kGrpcInvalidArgument && contains(e.message, "user name is empty"));
}

// Errors about the member (it cannot serve now) rather than the request: the
// next member may answer. etcd reports no leader, a changed leader and a
// proposal that timed out as Unavailable; the last may still be applied.
bool try_elsewhere(const GatewayError& e) {
  switch (e.code) {
    case kGrpcInvalidArgument:
    case kGrpcNotFound:
    case kGrpcPermissionDenied:
    case kGrpcFailedPrecondition:
      return false;
    default:
      return true;
  }
}

Status etcd_status(const GatewayError& e) {
  switch (e.code) {
    case kGrpcNotFound:
      return Status(Code::kNotFound, e.message);
    case kGrpcInvalidArgument:
      return Status(Code::kInvalidArgument, e.message);
    default:
      return Status(Code::kFailedPrecondition, e.message);
  }
}

struct Headers {
  curl_slist* list = nullptr;
  ~Headers() { curl_slist_free_all(list); }
  void add(const std::string& line) { list = curl_slist_append(list, line.c_str()); }
};

}  // namespace

class GatewayClient::Handle {
 public:
  Handle() : curl_(curl_easy_init()) {}
  ~Handle() {
    if (curl_ != nullptr) curl_easy_cleanup(curl_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  CURL* get() const noexcept { return curl_; }

 private:
  CURL* curl_;
};

struct GatewayClient::Attempt {
  enum class Kind { kOk, kEtcdError, kAuth, kElsewhere };
  Kind kind = Kind::kElsewhere;
  std::string body;  // kOk: the reply
  Status status;     // kEtcdError
  std::string why;   // kAuth, kElsewhere
};

namespace {

struct Sink {
  std::string data;
  bool overflow = false;
};

// libcurl callbacks are called from C: nothing may be thrown through them.
size_t write_to_sink(char* ptr, size_t size, size_t nmemb, void* user) noexcept {
  auto* sink = static_cast<Sink*>(user);
  const size_t n = size * nmemb;
  if (sink->data.size() + n > kMaxReplyBytes) {
    sink->overflow = true;
    return 0;
  }
  try {
    sink->data.append(ptr, n);
  } catch (...) {
    sink->overflow = true;
    return 0;
  }
  return n;
}

// Options shared by unary calls and streams. `connect_timeout` bounds the
// connection (TCP and TLS) alone.
void set_common(CURL* curl, const GatewayOptions& o, const std::string& url,
                const std::string& body, const Headers& headers, char* errbuf,
                Duration connect_timeout) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, to_ms(connect_timeout));
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!o.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, o.ca_file.c_str());
  if (!o.cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, o.cert_file.c_str());
  if (!o.key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, o.key_file.c_str());
}

void fill_headers(Headers& h, const std::string& token) {
  h.add("Content-Type: application/json");
  h.add("Expect:");  // no 100-continue round trip before larger bodies
  if (!token.empty()) h.add("Authorization: " + token);
}

std::string curl_error(CURLcode rc, const char* errbuf) {
  std::string why = errbuf[0] != '\0' ? std::string(errbuf) : curl_easy_strerror(rc);
  while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
  return why;
}

int poll_ms(Duration d) {
  return static_cast<int>(
      std::max<std::int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(d).count()));
}

// curl_easy_perform, or, with `cancel`, the same transfer driven through a
// multi handle that looks at *cancel every kStreamPoll. `canceled` tells
// whether it gave up because of the flag.
CURLcode perform(CURL* curl, const std::atomic<bool>* cancel, bool& canceled) {
  canceled = false;
  if (cancel == nullptr) return curl_easy_perform(curl);
  if (cancel->load()) {
    canceled = true;
    return CURLE_ABORTED_BY_CALLBACK;
  }
  CURLM* multi = curl_multi_init();
  if (multi == nullptr) return CURLE_OUT_OF_MEMORY;
  curl_multi_add_handle(multi, curl);
  CURLcode rc = CURLE_OK;
  while (true) {
    int running = 0;
    if (curl_multi_perform(multi, &running) != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      break;
    }
    bool done = false;
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) {
        done = true;
        rc = msg->data.result;
      }
    }
    if (done) break;
    if (running == 0) {
      rc = CURLE_GOT_NOTHING;
      break;
    }
    if (cancel->load()) {
      canceled = true;
      rc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    curl_multi_poll(multi, nullptr, 0, poll_ms(kStreamPoll), nullptr);
  }
  curl_multi_remove_handle(multi, curl);
  curl_multi_cleanup(multi);
  return rc;
}

}  // namespace

GatewayClient::GatewayClient(GatewayOptions options, FaultHook fault_hook)
    : options_(std::move(options)), fault_hook_(std::move(fault_hook)) {
  global_init();
}

GatewayClient::~GatewayClient() = default;

std::unique_ptr<GatewayClient::Handle> GatewayClient::take_handle() {
  {
    internal::MutexLock lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Handle> h = std::move(idle_.back());
      idle_.pop_back();
      return h;
    }
  }
  return std::make_unique<Handle>();
}

void GatewayClient::give_back(std::unique_ptr<Handle> handle) {
  constexpr std::size_t kMaxIdle = 8;
  internal::MutexLock lock(mu_);
  if (idle_.size() < kMaxIdle) idle_.push_back(std::move(handle));
}

std::string GatewayClient::token() const {
  internal::MutexLock lock(mu_);
  return token_;
}

GatewayClient::Attempt GatewayClient::post(std::size_t endpoint, std::string_view path,
                                           const std::string& body, const std::string& token,
                                           const CallOptions& call) {
  Attempt a;
  const Fault fault = fault_hook_ ? fault_hook_(path, body) : Fault::kNone;
  if (fault == Fault::kDropRequest) {
    a.why = "request dropped (injected fault)";
    return a;
  }
  std::unique_ptr<Handle> h = take_handle();
  if (h->get() == nullptr) {
    a.why = "libcurl could not make a handle";
    return a;
  }
  CURL* curl = h->get();
  curl_easy_reset(curl);
  Headers headers;
  fill_headers(headers, token);
  char errbuf[CURL_ERROR_SIZE] = {};
  Sink sink;
  const std::string url = options_.endpoints[endpoint] + std::string(path);
  Duration timeout = call.timeout > Duration::zero() ? call.timeout : options_.request_timeout;
  if (call.deadline != std::chrono::steady_clock::time_point::max()) {
    // At least a millisecond: libcurl takes 0 as "no timeout".
    timeout = std::max<Duration>(
        std::min<Duration>(timeout, call.deadline - std::chrono::steady_clock::now()),
        std::chrono::milliseconds(1));
  }
  set_common(curl, options_, url, body, headers, errbuf, timeout);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, to_ms(timeout));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_to_sink);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  bool canceled = false;
  const CURLcode rc = perform(curl, call.cancel, canceled);
  long http = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &http);
  give_back(std::move(h));

  if (canceled) {
    a.why = "canceled";
    return a;
  }
  if (rc != CURLE_OK) {
    a.why = sink.overflow ? "reply too large" : curl_error(rc, errbuf);
    return a;
  }
  if (fault == Fault::kDropReply) {
    a.why = "reply dropped (injected fault)";
    return a;
  }
  if (http == 200) {
    a.kind = Attempt::Kind::kOk;
    a.body = std::move(sink.data);
    return a;
  }
  const std::optional<GatewayError> e = parse_error(sink.data);
  if (!e) {
    a.why = "HTTP status " + std::to_string(http);
    return a;
  }
  if (is_auth_error(*e)) {
    a.kind = Attempt::Kind::kAuth;
    a.why = e->message;
  } else if (try_elsewhere(*e)) {
    a.why = e->message;
  } else {
    a.kind = Attempt::Kind::kEtcdError;
    a.status = etcd_status(*e);
  }
  return a;
}

Result<std::string> GatewayClient::call(std::string_view path, const std::string& body,
                                        const CallOptions& options) {
  const std::size_t n = options_.endpoints.size();
  const std::size_t start = preferred_.load();
  std::string failures;
  bool refreshed = false;
  auto canceled = [&] { return options.cancel != nullptr && options.cancel->load(); };
  for (std::size_t i = 0; i < n; ++i) {
    if (canceled()) {
      return Status(Code::kUnavailable, std::string(path) + " canceled");
    }
    if (std::chrono::steady_clock::now() >= options.deadline) {
      return Status(Code::kUnavailable,
                    "no etcd member answered " + std::string(path) + " in the time left" +
                        (failures.empty() ? std::string() : " (" + failures + ")"));
    }
    const std::size_t idx = (start + i) % n;
    std::string tok = token();
    Attempt a = post(idx, path, body, tok, options);
    if (a.kind == Attempt::Kind::kAuth) {
      if (options_.user.empty()) {
        return Status(Code::kInvalidArgument,
                      "etcd requires authentication (" + a.why + "); set a user and password");
      }
      if (!refreshed) {
        refreshed = true;
        const Status s = refresh_token(tok, options);
        if (!s.is_ok() && s.code() != Code::kUnavailable) return s;
        if (s.is_ok()) a = post(idx, path, body, token(), options);
      }
      if (a.kind == Attempt::Kind::kAuth) {
        return Status(Code::kInvalidArgument,
                      "etcd refused the credentials of user \"" + options_.user + "\": " + a.why);
      }
    }
    switch (a.kind) {
      case Attempt::Kind::kOk:
        preferred_.store(idx);
        return std::move(a.body);
      case Attempt::Kind::kEtcdError:
        preferred_.store(idx);
        return a.status;
      case Attempt::Kind::kAuth:
      case Attempt::Kind::kElsewhere:
        break;
    }
    if (!failures.empty()) failures += "; ";
    failures += options_.endpoints[idx] + ": " + a.why;
  }
  return Status(Code::kUnavailable,
                "no etcd member answered " + std::string(path) + " (" + failures + ")");
}

Status GatewayClient::authenticate_on(std::size_t endpoint, const CallOptions& call) {
  const Attempt a =
      post(endpoint, "/v3/auth/authenticate", authenticate_body(options_.user, options_.password),
           /*token=*/"", call);
  switch (a.kind) {
    case Attempt::Kind::kOk: {
      Result<std::string> token = parse_authenticate(a.body);
      if (!token.is_ok()) return token.status();
      internal::MutexLock lock(mu_);
      token_ = std::move(token).value();
      return Status::ok();
    }
    case Attempt::Kind::kEtcdError:
      if (contains(a.status.message(), "authentication is not enabled")) {
        // The cluster checks no one: requests go without a token.
        internal::MutexLock lock(mu_);
        token_.clear();
        return Status::ok();
      }
      return Status(Code::kInvalidArgument,
                    "etcd refused user \"" + options_.user + "\": " + a.status.message());
    case Attempt::Kind::kAuth:
      return Status(Code::kInvalidArgument,
                    "etcd refused user \"" + options_.user + "\": " + a.why);
    case Attempt::Kind::kElsewhere:
      break;
  }
  return Status(Code::kUnavailable, options_.endpoints[endpoint] + ": " + a.why);
}

Status GatewayClient::refresh_token(const std::string& stale, const CallOptions& options) {
  if (options_.user.empty()) return Status::ok();
  internal::MutexLock serial(auth_mu_);
  if (token() != stale) return Status::ok();  // another thread already did it
  const std::size_t n = options_.endpoints.size();
  const std::size_t start = preferred_.load();
  std::string failures;
  for (std::size_t i = 0; i < n; ++i) {
    if (options.cancel != nullptr && options.cancel->load()) {
      return Status(Code::kUnavailable, "authentication canceled");
    }
    const std::size_t idx = (start + i) % n;
    const Status s = authenticate_on(idx, options);
    if (s.code() != Code::kUnavailable) {
      if (s.is_ok()) preferred_.store(idx);
      return s;
    }
    if (!failures.empty()) failures += "; ";
    failures += s.message();
  }
  return Status(Code::kUnavailable, "no etcd member answered authentication (" + failures + ")");
}

Status GatewayClient::connect() {
  Result<std::string> status = call("/v3/maintenance/status", "{}");
  if (!status.is_ok()) return status.status();
  Result<StatusReply> parsed = parse_status(status.value());
  if (!parsed.is_ok()) return parsed.status();
  return refresh_token(token());
}

GatewayClient::StreamResult GatewayClient::stream(
    std::size_t endpoint, std::string_view path, const std::string& body, Duration timeout,
    const std::function<bool(std::string_view)>& on_line, const std::atomic<bool>* cancel) {
  using Steady = std::chrono::steady_clock;
  StreamResult result;
  const auto started = Steady::now();
  const auto deadline = started + timeout;
  const auto first_byte_deadline = started + options_.request_timeout;

  struct LineSink {
    const std::function<bool(std::string_view)>* on_line;
    std::string pending;
    bool got_bytes = false;
    bool stopped = false;
    bool overflow = false;
  } sink{&on_line, {}, false, false, false};
  auto write = +[](char* ptr, size_t size, size_t nmemb, void* user) noexcept -> size_t {
    auto* s = static_cast<LineSink*>(user);
    const size_t n = size * nmemb;
    s->got_bytes = true;
    try {
      s->pending.append(ptr, n);
      std::size_t from = 0;
      for (std::size_t nl; (nl = s->pending.find('\n', from)) != std::string::npos; from = nl + 1) {
        const std::string_view line(s->pending.data() + from, nl - from);
        if (line.find_first_not_of(" \r\t") == std::string_view::npos) continue;
        if (!(*s->on_line)(line)) {
          s->stopped = true;
          return 0;  // ends the transfer
        }
      }
      s->pending.erase(0, from);
    } catch (...) {
      s->overflow = true;
      return 0;
    }
    if (s->pending.size() > kMaxReplyBytes) {
      s->overflow = true;
      return 0;
    }
    return n;
  };

  CURL* curl = curl_easy_init();
  CURLM* multi = curl_multi_init();
  if (curl == nullptr || multi == nullptr) {
    if (curl != nullptr) curl_easy_cleanup(curl);
    if (multi != nullptr) curl_multi_cleanup(multi);
    result.error = "libcurl could not make a handle";
    return result;
  }
  Headers headers;
  fill_headers(headers, token());
  // etcd's require-leader metadata (rpctypes.MetadataRequireLeaderKey), which
  // the gateway passes on from a Grpc-Metadata- header: see the header file.
  headers.add("Grpc-Metadata-hasleader: true");
  char errbuf[CURL_ERROR_SIZE] = {};
  const std::string url = options_.endpoints[endpoint] + std::string(path);
  set_common(curl, options_, url, body, headers, errbuf, options_.request_timeout);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_multi_add_handle(multi, curl);

  while (true) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    bool done = false;
    CURLcode rc = CURLE_OK;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) {
        done = true;
        rc = msg->data.result;
      }
    }
    if (sink.stopped) {
      result.end = StreamEnd::kStopped;
      break;
    }
    if (done || running == 0) {
      // The gateway ends a stream with an error object and no newline after
      // it (e.g. "etcdserver: no leader"): the last line, unterminated.
      bool stop = false;
      if (rc == CURLE_OK && !sink.overflow &&
          sink.pending.find_first_not_of(" \r\t") != std::string::npos) {
        try {
          stop = !on_line(sink.pending);
        } catch (...) {
          // As in the write callback: the stream is simply broken.
        }
      }
      if (stop) {
        result.end = StreamEnd::kStopped;
        break;
      }
      result.end = StreamEnd::kBroken;
      result.error = sink.overflow    ? "stream line too long"
                     : rc == CURLE_OK ? "the member ended the stream"
                                      : curl_error(rc, errbuf);
      break;
    }
    if (cancel != nullptr && cancel->load()) {
      result.end = StreamEnd::kCanceled;
      break;
    }
    const auto now = Steady::now();
    if (now >= deadline) {
      result.end = StreamEnd::kTimedOut;
      break;
    }
    if (!sink.got_bytes && now >= first_byte_deadline) {
      result.end = StreamEnd::kBroken;
      result.error = "no answer within the request timeout";
      break;
    }
    curl_multi_poll(multi, nullptr, 0, poll_ms(std::min<Duration>(kStreamPoll, deadline - now)),
                    nullptr);
  }
  curl_multi_remove_handle(multi, curl);
  curl_easy_cleanup(curl);
  curl_multi_cleanup(multi);
  // The endpoint is not preferred for having answered: a member cut off from
  // the leader still accepts a watch (until it notices) and lets it time out
  // quietly, and renewals sent there would fail.
  return result;
}

}  // namespace snowid::etcd
