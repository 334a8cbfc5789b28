#include "http_responses.h"

#include <cstdint>
#include <string>
#include <utility>

#include "json_text.h"

namespace snowid::daemon {
namespace {

// Client text echoed in an error message is cut to this many bytes.
constexpr std::size_t kMaxEchoedBytes = 64;
// Integers beyond this are written as JSON strings: JavaScript's doubles
// lose precision above 2^53 - 1.
constexpr std::uint64_t kMaxSafeJsonInteger = (std::uint64_t{1} << 53) - 1;

// Retry-After in whole seconds, rounded up, at least 1.
std::string retry_after_seconds(Duration d) {
  constexpr std::int64_t kSecond = 1'000'000'000;
  const std::int64_t ns = d.count();
  std::int64_t seconds = ns <= 0 ? 1 : ns / kSecond + (ns % kSecond != 0 ? 1 : 0);
  if (seconds < 1) seconds = 1;
  return std::to_string(seconds);
}

}  // namespace

void append_json_integer(std::string& out, std::uint64_t value) {
  if (value <= kMaxSafeJsonInteger) {
    append_decimal(out, value);
  } else {
    out += '"';
    append_decimal(out, value);
    out += '"';
  }
}

void append_json_integer(std::string& out, std::int64_t value) {
  const std::uint64_t magnitude = value < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(value)
                                            : static_cast<std::uint64_t>(value);
  if (magnitude <= kMaxSafeJsonInteger) {
    append_decimal(out, value);
  } else {
    out += '"';
    append_decimal(out, value);
    out += '"';
  }
}

// A decoded field of `width` bits: a JSON number when every value of that
// width is exact in a double, else always a decimal string, so that the type
// of a key depends on the layout only, never on the value.
void append_json_field(std::string& out, int width, std::uint64_t value) {
  if (width <= 53) {
    append_decimal(out, value);
    return;
  }
  out += '"';
  append_decimal(out, value);
  out += '"';
}

// `text` (from the client) cut short for a message; append_json_string
// repairs a sequence cut in the middle.
std::string echo(std::string_view text) {
  if (text.size() <= kMaxEchoedBytes) return std::string(text);
  std::string s(text.substr(0, kMaxEchoedBytes));
  s += "...";
  return s;
}

HttpResponse json_response(unsigned status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = std::string(kJson);
  r.body = std::move(body);
  // Every answer is about this moment (or, for errors, this request): ids
  // must never be served twice from a cache.
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

HttpResponse error_response(unsigned status, std::string_view word, std::string_view message,
                            bool retryable, Duration retry_after) {
  std::string body;
  body.reserve(64 + word.size() + message.size());
  body += "{\"error\":";
  append_json_string(body, word);
  body += ",\"message\":";
  append_json_string(body, message);
  body += ",\"retryable\":";
  body += retryable ? "true" : "false";
  body += '}';
  HttpResponse r = json_response(status, std::move(body));
  if (retryable) r.headers.emplace_back("Retry-After", retry_after_seconds(retry_after));
  return r;
}

HttpResponse bad_request(std::string_view message) {
  return error_response(400, error_word(Code::kInvalidArgument), message);
}

// A refusal of the service, as refusals.h's table says.
HttpResponse refusal(Code code, std::string_view message, Refusing what, Duration retry_after) {
  const std::string_view word = error_word(code, what);
  std::string fallback;
  if (message.empty()) {
    fallback = std::string(what == Refusing::kIssue    ? "not issuing: "
                           : what == Refusing::kDecode ? "cannot decode: "
                                                       : "sequence refused: ") +
               std::string(word);
    message = fallback;
  }
  const bool retryable = is_retryable(code);
  return error_response(http_status(code, what), word, message, retryable, retry_after);
}

HttpResponse method_not_allowed(std::string_view method, std::string_view allow) {
  HttpResponse r =
      error_response(405, "METHOD_NOT_ALLOWED",
                     "method " + echo(method) + " not allowed; use " + std::string(allow));
  r.headers.emplace_back("Allow", std::string(allow));
  return r;
}

}  // namespace snowid::daemon
