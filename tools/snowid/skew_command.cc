// `snowid skew`: the clock-skew monitor's view of a region, as one snowidd's
// monitor holds it (GET /v1/skew, docs/skew.md).
//   status [--daemon URL] [--json]            every host: state, offset, RTT, votes; recent fences
//   watch  [--daemon URL] [--interval D] [--count N]   the same, again every interval
// The daemon is --daemon, else $SNOWID_DAEMON_URL, else http://127.0.0.1:7390
// (snowidd's default); its bearer token $SNOWID_HTTP_TOKEN, if set.
#include <curl/curl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "diagnostics.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::cli {
namespace {

using nlohmann::json;

constexpr const char* kDefaultDaemon = "http://127.0.0.1:7390";

struct SkewOptions {
  std::string daemon;
  bool json = false;
  double interval_s = 1.0;
  int count = 0;  // watch: 0 for ever
};

std::string daemon_url(const SkewOptions& o) {
  if (!o.daemon.empty()) return o.daemon;
  if (const char* env = std::getenv("SNOWID_DAEMON_URL"); env != nullptr && *env != '\0') {
    return env;
  }
  return kDefaultDaemon;
}

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* out) {
  auto* body = static_cast<std::string*>(out);
  // The view of a region of a few hundred hosts is well under this.
  if (body->size() + size * count > (16u << 20)) return 0;
  body->append(data, size * count);
  return size * count;
}

// GET <daemon>/v1/skew: the document, or why not (kUnavailable when the
// daemon does not answer, kNotFound when its monitor is off, the daemon's
// own message otherwise).
Result<json> fetch_view(const std::string& daemon) {
  const std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status(Code::kUnavailable, "libcurl could not start");
  std::string url = daemon;
  while (!url.empty() && url.back() == '/') url.pop_back();
  url += "/v1/skew";
  std::string body;
  curl_slist* headers = nullptr;
  std::string auth;
  if (const char* token = std::getenv("SNOWID_HTTP_TOKEN"); token != nullptr && *token != '\0') {
    auth = std::string("Authorization: Bearer ") + token;
    headers = curl_slist_append(headers, auth.c_str());
  }
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl.get(), CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl.get());
  curl_slist_free_all(headers);
  if (rc != CURLE_OK) {
    return Status(Code::kUnavailable,
                  "cannot reach snowidd at " + daemon + ": " + curl_easy_strerror(rc));
  }
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status(Code::kUnavailable,
                  url + " answered HTTP " + std::to_string(status) + " without a JSON object");
  }
  if (status != 200) {
    const std::string message = doc.value("message", "HTTP " + std::to_string(status));
    return Status(status == 404 ? Code::kNotFound : Code::kUnavailable, url + ": " + message);
  }
  return doc;
}

// Signed milliseconds with three decimals, from a JSON string of
// nanoseconds; "-" for null.
std::string millis(const json& ns, bool sign = true) {
  if (!ns.is_string()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, sign ? "%+.3f" : "%.3f",
                std::strtod(ns.get<std::string>().c_str(), nullptr) / 1e6);
  return buf;
}

std::string instant(const json& ns_text) {
  if (!ns_text.is_string()) return "?";
  const std::int64_t ns = std::strtoll(ns_text.get<std::string>().c_str(), nullptr, 10);
  return format_iso8601(WallTime(Duration(ns)));
}

void print_view(const json& v) {
  std::printf("region %lld, seen from %s: %s%s, round %lld\n",
              static_cast<long long>(v.value("region", 0)), v.value("self", "?").c_str(),
              v.value("state", "?").c_str(), v.value("held", false) ? ", HELD" : "",
              static_cast<long long>(v.value("rounds", 0)));
  if (v.value("held", false)) std::printf("  held: %s\n", v.value("hold_reason", "").c_str());
  if (v.value("dry_run", false)) std::printf("  dry run: fences are counted, not made\n");
  if (const json& ref = v["reference"]; ref.is_object()) {
    std::printf("  reference %s: %s ms +- %s\n", ref.value("server", "?").c_str(),
                millis(ref["offset_ns"]).c_str(), millis(ref["uncertainty_ns"], false).c_str());
  }
  std::printf("%-20s %-13s %12s %9s %9s %9s  %-14s %s\n", "HOST", "STATE", "OFFSET_MS", "+-MS",
              "RTT_MS", "OBSERVERS", "VOTED_AGAINST", "WORKERS");
  for (const json& h : v.value("hosts", json::array())) {
    std::string votes;
    for (const json& voter : h.value("votes_against", json::array())) {
      votes += (votes.empty() ? "" : ",") + voter.get<std::string>();
    }
    std::string workers;
    for (const json& w : h.value("workers", json::array())) {
      workers += (workers.empty() ? "" : " ") + std::to_string(w.value("region", 0)) + "/" +
                 std::to_string(w.value("host", 0));
    }
    const std::string name = h.value("host", "?") + (h.value("self", false) ? " (self)" : "");
    std::printf("%-20s %-13s %12s %9s %9s %9lld  %-14s %s\n", name.c_str(),
                h.value("state", "?").c_str(), millis(h["offset_ns"]).c_str(),
                millis(h["uncertainty_ns"], false).c_str(), millis(h["rtt_ns"], false).c_str(),
                static_cast<long long>(h.value("observers", 0)),
                votes.empty() ? "-" : votes.c_str(), workers.empty() ? "-" : workers.c_str());
  }
  const json fences = v.value("fences", json::array());
  std::printf("fences: %lld made here, %lld vetoes, %lld mass-skew alarms%s\n",
              static_cast<long long>(v.value("fences_total", 0)),
              static_cast<long long>(v.value("vetoes_total", 0)),
              static_cast<long long>(v.value("mass_skew_total", 0)),
              fences.empty() ? "; none recorded" : "; recent:");
  for (const json& f : fences) {
    std::string voters;
    for (const json& voter : f.value("voters", json::array())) {
      voters += (voters.empty() ? "" : ",") + voter.get<std::string>();
    }
    std::printf("  %s %s by %s%s\n    %s\n", instant(f["at_ns"]).c_str(),
                f.value("target", "?").c_str(), f.value("fencer", "?").c_str(),
                voters.empty() ? " (itself)" : (" on the votes of " + voters).c_str(),
                f.value("reason", "").c_str());
  }
}

int run_status(const SkewOptions& o) {
  const Result<json> view = fetch_view(daemon_url(o));
  if (!view.is_ok()) {
    print_error(view.status().message());
    return kExitFailure;
  }
  if (o.json) {
    std::printf("%s\n", view->dump().c_str());
  } else {
    print_view(view.value());
  }
  return kExitOk;
}

int run_watch(const SkewOptions& o) {
  if (!(o.interval_s >= 0.1 && o.interval_s <= 3600)) {
    print_error("--interval must be 0.1 to 3600 seconds");
    return kExitUsage;
  }
  const bool tty = ::isatty(STDOUT_FILENO) != 0;
  for (int shown = 0; o.count == 0 || shown < o.count; ++shown) {
    if (shown > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.interval_s));
    }
    const Result<json> view = fetch_view(daemon_url(o));
    // Clear the screen between views only on a terminal.
    if (tty) std::printf("\x1b[H\x1b[2J");
    if (!view.is_ok()) {
      if (view.status().code() == Code::kNotFound) {
        print_error(view.status().message());
        return kExitFailure;
      }
      print_warning(view.status().message());
      continue;
    }
    print_view(view.value());
    if (!tty) std::printf("\n");
    std::fflush(stdout);
  }
  return kExitOk;
}

void add_daemon_option(CLI::App& app, std::string& daemon) {
  app.add_option("--daemon", daemon,
                 "snowidd's HTTP address (default $SNOWID_DAEMON_URL, else "
                 "http://127.0.0.1:7390); its token from $SNOWID_HTTP_TOKEN")
      ->type_name("URL");
}

}  // namespace

Command add_skew_command(CLI::App& root) {
  CLI::App* app = root.add_subcommand(
      "skew", "The clock-skew monitor's view of a region, from one snowidd (GET /v1/skew)");
  app->require_subcommand(1);
  auto status = std::make_shared<SkewOptions>();
  CLI::App* status_app = app->add_subcommand(
      "status",
      "Every host: state, offset from this one +- uncertainty, RTT, observers, votes; "
      "the recent fences with their reasons");
  add_daemon_option(*status_app, status->daemon);
  status_app->add_flag("--json", status->json, "The daemon's JSON document as it is");
  auto watch = std::make_shared<SkewOptions>();
  CLI::App* watch_app = app->add_subcommand("watch", "status, again every --interval");
  add_daemon_option(*watch_app, watch->daemon);
  watch_app->add_option("--interval", watch->interval_s, "Seconds between views, 0.1 to 3600")
      ->type_name("S")
      ->capture_default_str();
  watch_app->add_option("--count", watch->count, "Views to show, then exit (0: until stopped)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  app->footer(
      "Offsets are each host's clock minus the daemon's, as its monitor holds them.\n"
      "Exit status: 0 ok, 1 the daemon did not answer or its monitor is off (etcd is not its "
      "registry), 2 bad input.");
  return {app, [status_app, status, watch](const Operands&) {
            if (status_app->parsed()) return run_status(*status);
            return run_watch(*watch);
          }};
}

}  // namespace snowid::cli
