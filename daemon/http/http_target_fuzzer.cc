// parse_target() and HttpHandler::handle() on arbitrary targets and methods,
// against a real IdService (a leased generator on a simulated clock and the
// in-memory registry) and a real SequenceService (the in-memory ticket
// table, with "orders" made beforehand), so every route runs for real.
//
// Input: a control byte, then the target.
//   control bits 0-2: the method (GET, HEAD, POST, PUT, DELETE, OPTIONS,
//                     get, and the empty string)
//   control bit 3:    the handler with a token configured
//   control bit 4:    with a token: send the right "Bearer" credentials
//   control bit 5:    pad the target with 'x' to 8 KiB, the length limit ...
//   control bit 6:    ... plus one byte
//
// Checks: a parsed target has a path starting with '/' and no NUL anywhere,
// and comes back unchanged when re-encoded and parsed again; a target made of
// plain characters always parses. Every response has a status from the
// contract, Cache-Control: no-store, and (unless it is /metrics) a body of
// valid JSON in valid UTF-8; 405 carries Allow, 401 WWW-Authenticate, only
// 201 Location, and only 503 may carry Retry-After.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fleet_page.h"
#include "fuzz_check.h"
#include "http_handler.h"
#include "id_service.h"
#include "json_test_support.h"
#include "sequence_service.h"
#include "snowid/layout.h"
#include "snowid/leased_generator.h"
#include "snowid/testing/memory_registry.h"
#include "snowid/testing/memory_ticket_store.h"
#include "snowid/testing/simulated_clock.h"
#include "snowid/ticket_store.h"

namespace {

using snowid::daemon::HttpHandler;
using snowid::daemon::HttpRequest;
using snowid::daemon::HttpResponse;
using snowid::daemon::IdService;
using snowid::daemon::parse_target;
using snowid::daemon::ParsedTarget;
using snowid::daemon::test_support::parse_json;
using snowid::daemon::test_support::valid_utf8;

constexpr std::string_view kToken = "fuzz-token";
constexpr std::string_view kMetrics = "# TYPE snowid_up gauge\nsnowid_up 1\n";
constexpr std::size_t kMaxTargetLength = 8 * 1024;
// Sequences the fuzzed PUTs may create: each one served gets a buffer and a
// fetcher thread, so they must not add up without bound.
constexpr int kMaxSequences = 16;

// The memory table, refusing creates beyond kMaxSequences (kUnavailable,
// which the routes answer 503 like a table that is down).
class CappedStore final : public snowid::TicketStore {
 public:
  explicit CappedStore(const snowid::Clock& clock) : inner_(clock) {}
  snowid::Status migrate() override { return inner_.migrate(); }
  snowid::Status create(std::string_view name, std::int64_t start, std::int64_t step) override {
    if (created_.load() >= kMaxSequences) {
      return snowid::Status(snowid::Code::kUnavailable, "the fuzzer's table is full");
    }
    snowid::Status s = inner_.create(name, start, step);
    if (s.is_ok()) created_.fetch_add(1);
    return s;
  }
  snowid::Result<snowid::SequenceRange> take(std::string_view name, std::int64_t size) override {
    return inner_.take(name, size);
  }
  snowid::Result<snowid::SequenceInfo> get(std::string_view name) override {
    return inner_.get(name);
  }
  snowid::Result<std::vector<snowid::SequenceInfo>> list() override { return inner_.list(); }
  std::string_view kind() const noexcept override { return inner_.kind(); }

 private:
  snowid::testing::MemoryTicketStore inner_;
  std::atomic<int> created_{0};
};

// The service the handlers call, built once and never destroyed (the
// generator's threads live as long as the process). The clock advances
// itself whenever the generator waits, so a single thread never blocks.
struct Fixture {
  snowid::testing::SimulatedClock clock{snowid::wall_from_unix_ms(1780272000000)};
  snowid::testing::MemoryRegistry registry{clock, snowid::Layout::snowid_default(),
                                           std::chrono::seconds(5)};
  std::unique_ptr<snowid::LeasedGenerator> generator;
  std::unique_ptr<IdService> service;
  std::unique_ptr<snowid::daemon::SequenceService> sequences;
  std::unique_ptr<HttpHandler> open;
  std::unique_ptr<HttpHandler> guarded;

  Fixture() {
    clock.set_auto_advance(true);
    snowid::LeasedGeneratorOptions o;
    o.generator.random_start_bound = 0;
    o.lease.region = 1;
    o.lease.holder.host = "fuzz-host";
    auto created = snowid::LeasedGenerator::create(clock, registry, std::move(o));
    FUZZ_CHECK(created.is_ok());
    generator = std::move(created).value();
    service = std::make_unique<IdService>(*generator, clock, 1000);
    auto table = std::make_unique<CappedStore>(clock);
    FUZZ_CHECK(table->create("orders", 1, 100).is_ok());
    snowid::daemon::SequenceServiceOptions so;
    so.max_range = 1000;
    sequences =
        std::make_unique<snowid::daemon::SequenceService>(std::move(table), clock, std::move(so));
    const auto metrics = [] { return std::string(kMetrics); };
    open = std::make_unique<HttpHandler>(*service, metrics, "", sequences.get());
    guarded =
        std::make_unique<HttpHandler>(*service, metrics, std::string(kToken), sequences.get());
  }
};

Fixture& fixture() {
  static Fixture* f = new Fixture();
  return *f;
}

// ------------------------------------------------------------ round trip

bool unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

void encode(std::string& out, std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (const char c : s) {
    if (unreserved(c) || (keep_slash && c == '/')) {
      out += c;
    } else {
      const auto u = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
}

// What a client would send for `t`: every byte but the unreserved ones (and
// the path's separators) escaped.
std::string encode(const ParsedTarget& t) {
  std::string out;
  encode(out, t.path, true);
  for (std::size_t i = 0; i < t.query.size(); ++i) {
    out += i == 0 ? '?' : '&';
    encode(out, t.query[i].first, false);
    out += '=';
    encode(out, t.query[i].second, false);
  }
  return out;
}

bool plain(std::string_view target) {
  if (target.empty() || target.front() != '/') return false;
  for (const char c : target) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f || c == '#' || c == '%') return false;
  }
  return true;
}

void check_parse(std::string_view target) {
  const std::optional<ParsedTarget> t = parse_target(target);
  if (!t) {
    FUZZ_CHECK(!plain(target));
    return;
  }
  FUZZ_CHECK(!target.empty() && target.front() == '/');
  FUZZ_CHECK(target.find('#') == std::string_view::npos);
  FUZZ_CHECK(!t->path.empty() && t->path.front() == '/');
  FUZZ_CHECK(t->path.find('\0') == std::string::npos);
  for (const auto& [name, value] : t->query) {
    FUZZ_CHECK(name.find('\0') == std::string::npos);
    FUZZ_CHECK(value.find('\0') == std::string::npos);
  }
  const std::optional<ParsedTarget> again = parse_target(encode(*t));
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(again->path == t->path);
  FUZZ_CHECK(again->query == t->query);
}

std::optional<std::string_view> header(const HttpResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return std::string_view(v);
  }
  return std::nullopt;
}

void check_response(const HttpRequest& request, const HttpResponse& r, bool guarded,
                    bool authorized) {
  const unsigned s = r.status;
  FUZZ_CHECK(s == 200 || s == 201 || s == 400 || s == 401 || s == 404 || s == 405 || s == 409 ||
             s == 414 || s == 503);
  FUZZ_CHECK(header(r, "Cache-Control") == "no-store");
  FUZZ_CHECK((s == 405) == header(r, "Allow").has_value());
  FUZZ_CHECK((s == 201) == header(r, "Location").has_value());
  if (s == 201) FUZZ_CHECK(request.method == "PUT");
  FUZZ_CHECK((s == 401) == header(r, "WWW-Authenticate").has_value());
  if (header(r, "Retry-After")) FUZZ_CHECK(s == 503);
  if (s == 401) FUZZ_CHECK(guarded && !authorized);
  FUZZ_CHECK((s == 414) == (request.target.size() > kMaxTargetLength));
  if (s != 414 && !parse_target(request.target)) FUZZ_CHECK(s == 400);
  if (s == 200 && r.content_type == "text/html; charset=utf-8") {
    // The fleet page, and nothing else: a fixed document.
    FUZZ_CHECK(parse_target(request.target) && parse_target(request.target)->path == "/fleet");
    FUZZ_CHECK(r.body == snowid::daemon::kFleetPage);
    return;
  }
  if (s == 200 && r.content_type != "application/json") {
    FUZZ_CHECK(r.content_type == "text/plain; version=0.0.4; charset=utf-8");
    FUZZ_CHECK(r.body == kMetrics);
    return;
  }
  FUZZ_CHECK(r.content_type == "application/json");
  FUZZ_CHECK(valid_utf8(r.body));
  FUZZ_CHECK(parse_json(r.body).has_value());
  if (s != 200 && s != 201 && s != 503) FUZZ_CHECK(r.body.rfind("{\"error\":", 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static constexpr std::string_view kMethods[] = {"GET",    "HEAD",    "POST", "PUT",
                                                  "DELETE", "OPTIONS", "get",  ""};
  const unsigned control = data[0];
  std::string target(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((control & 0x20) != 0) {
    const std::size_t length = kMaxTargetLength + ((control & 0x40) != 0 ? 1 : 0);
    if (target.size() < length) target.resize(length, 'x');
  }

  check_parse(target);

  Fixture& f = fixture();
  const bool guarded = (control & 0x08) != 0;
  const bool authorized = !guarded || (control & 0x10) != 0;
  const std::string credentials = "Bearer " + std::string(kToken);
  const HttpRequest request{
      .method = kMethods[control & 7],
      .target = target,
      .authorization = guarded && authorized ? std::string_view(credentials) : std::string_view(),
  };
  const HttpResponse r = (guarded ? f.guarded : f.open)->handle(request);
  check_response(request, r, guarded, authorized);
  return 0;
}
