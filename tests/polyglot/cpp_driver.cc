// The C++ driver of the cross-language harness: one JSON request per line on
// stdin, one JSON reply per line on stdout (tests/polyglot/README.md). It
// holds one LeasedGenerator on etcd, on a clock the harness can offset.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cpp_holder.h"

namespace snowid::polyglot {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

json error_reply(const Status& s) {
  return {{"ok", false},
          {"code", std::string(code_name(s.code()))},
          {"retryable", s.retryable()},
          {"message", s.message()}};
}

json invalid(const std::string& message) {
  return error_reply(Status(Code::kInvalidArgument, message));
}

const std::set<std::string> kTimingMembers = {
    "ttl_ms",        "renew_ms",           "stop_ms",  "max_clock_skew_ms",
    "quarantine_ms", "request_timeout_ms", "retry_ms", "reacquire_ms"};

json worker_json(WorkerId w) { return json::array({w.region, w.host}); }

// A member of `obj` in ms, if present; fills `out`.
bool read_ms(const json& obj, const char* name, Duration& out, std::string& error) {
  if (!obj.contains(name) || obj[name].is_null()) return true;
  if (!obj[name].is_number_integer()) {
    error = std::string(name) + " must be an integer of ms";
    return false;
  }
  out = milliseconds(obj[name].get<std::int64_t>());
  return true;
}

class Driver {
 public:
  json handle(const json& req) {
    if (!req.is_object() || !req.contains("op") || !req["op"].is_string()) {
      return invalid("a request is an object with a string member \"op\"");
    }
    const std::string op = req["op"];
    if (op == "start") return start(req);
    if (op == "clock") return clock_op(req);
    if (op == "next") return next(req);
    if (op == "state") return state();
    if (op == "close") return close();
    return invalid("unknown op \"" + op + "\"");
  }

 private:
  json start(const json& req) {
    if (holder_) return error_reply(Status(Code::kFailedPrecondition, "already started"));
    HolderSettings s;
    if (!req.contains("endpoints") || !req["endpoints"].is_array()) {
      return invalid("endpoints must be an array of URLs");
    }
    for (const json& e : req["endpoints"]) {
      if (!e.is_string()) return invalid("endpoints must be an array of URLs");
      s.etcd.endpoints.push_back(e.get<std::string>());
    }
    if (req.contains("prefix")) s.etcd.prefix = req["prefix"].get<std::string>();
    if (req.contains("cluster")) s.etcd.cluster = req["cluster"].get<std::string>();
    s.region = req.value("region", 0u);
    if (req.contains("host") && !req["host"].is_null()) s.host = req["host"].get<std::uint32_t>();
    const json timing = req.value("timing", json::object());
    if (!timing.is_object()) return invalid("timing must be an object");
    json ignored = json::array();
    for (const auto& [name, value] : timing.items()) {
      if (!kTimingMembers.contains(name)) ignored.push_back(name);
    }
    const json options = req.value("options", json::object());
    if (!options.is_object()) return invalid("options must be an object");
    for (const auto& [name, value] : options.items()) {
      if (name != "unsafe_skip_mark") return invalid("unknown option \"" + name + "\"");
    }
    std::string error;
    Duration quarantine = s.etcd.quarantine, timeout = s.etcd.request_timeout;
    if (!read_ms(timing, "ttl_ms", s.timing.ttl, error) ||
        !read_ms(timing, "renew_ms", s.timing.renew_every, error) ||
        !read_ms(timing, "stop_ms", s.timing.stop_after, error) ||
        !read_ms(timing, "max_clock_skew_ms", s.timing.max_clock_skew, error) ||
        !read_ms(timing, "quarantine_ms", quarantine, error) ||
        !read_ms(timing, "request_timeout_ms", timeout, error) ||
        !read_ms(timing, "retry_ms", s.retry_every, error) ||
        !read_ms(timing, "reacquire_ms", s.reacquire_every, error)) {
      return invalid(error);
    }
    s.etcd.quarantine = quarantine;
    s.etcd.request_timeout = timeout;
    s.skip_mark = options.value("unsafe_skip_mark", false);
    clock_.set_offset(milliseconds(req.value("clock_offset_ms", std::int64_t{0})));
    auto h = Holder::start(clock_, std::move(s));
    if (!h.is_ok()) return error_reply(h.status());
    holder_ = std::move(h.value());
    json reply = {{"ok", true},
                  {"worker", worker_json(holder_->worker())},
                  {"pid", static_cast<long long>(::getpid())}};
    if (!ignored.empty()) reply["ignored"] = std::move(ignored);
    return reply;
  }

  json clock_op(const json& req) {
    if (!req.contains("offset_ms") || !req["offset_ms"].is_number_integer()) {
      return invalid("offset_ms must be an integer");
    }
    clock_.set_offset(milliseconds(req["offset_ms"].get<std::int64_t>()));
    return {{"ok", true}};
  }

  json next(const json& req) {
    if (!holder_) return error_reply(Status(Code::kFailedPrecondition, "not started"));
    const std::int64_t count = req.value("count", std::int64_t{1});
    if (count < 1 || count > 100000) return invalid("count must be 1 to 100000");
    std::vector<std::uint64_t> ids;
    const Status s = holder_->next(static_cast<std::uint32_t>(count), ids);
    json texts = json::array();
    for (const std::uint64_t id : ids) texts.push_back(std::to_string(id));
    json reply = s.is_ok() ? json{{"ok", true}} : error_reply(s);
    reply["ids"] = std::move(texts);
    return reply;
  }

  json state() {
    if (!holder_) return error_reply(Status(Code::kFailedPrecondition, "not started"));
    const HolderState s = holder_->state();
    return {{"ok", true},
            {"state", s.lease_state},
            {"ready", s.ready},
            {"healthy", s.healthy},
            {"worker", worker_json(s.worker)},
            {"reacquisitions", s.reacquisitions},
            {"wall_ms", unix_ms(clock_.wall_now())}};
  }

  json close() {
    if (!holder_) return error_reply(Status(Code::kFailedPrecondition, "not started"));
    const Status s = holder_->close();
    holder_.reset();
    return s.is_ok() ? json{{"ok", true}} : error_reply(s);
  }

  OffsetClock clock_;
  std::unique_ptr<Holder> holder_;
};

}  // namespace
}  // namespace snowid::polyglot

int main() {
  snowid::polyglot::Driver driver;
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json reply;
    const nlohmann::json req = nlohmann::json::parse(line, nullptr, false);
    if (req.is_discarded()) {
      reply = snowid::polyglot::invalid("not a JSON line");
    } else {
      try {
        reply = driver.handle(req);
      } catch (const nlohmann::json::exception& e) {
        reply = snowid::polyglot::invalid(std::string("bad request: ") + e.what());
      }
    }
    std::cout << reply.dump() << '\n' << std::flush;
    if (req.is_object() && req.value("op", "") == "close") break;
  }
  return 0;
}
