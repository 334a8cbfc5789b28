// The shapes every HTTP answer takes: JSON bodies, the JSON error
// {"error":"<WORD>","message":"...","retryable":bool} with Retry-After in
// whole seconds (rounded up, at least 1) when retryable, 405 with Allow, and
// the integers JavaScript can read exactly. Every response carries
// Cache-Control: no-store.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

#include "http_handler.h"
#include "refusals.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

inline constexpr std::string_view kJson = "application/json";

template <typename Int>
void append_decimal(std::string& out, Int value) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, r.ptr);
}

// A JSON number, or a decimal string where a double would lose precision.
void append_json_integer(std::string& out, std::uint64_t value);
void append_json_integer(std::string& out, std::int64_t value);
// A decoded field of `width` bits: a JSON number when every value of that
// width is exact in a double, else always a decimal string, so that the type
// of a key depends on the layout only, never on the value.
void append_json_field(std::string& out, int width, std::uint64_t value);

// `text` (from the client) cut short for a message.
std::string echo(std::string_view text);

HttpResponse json_response(unsigned status, std::string body);
HttpResponse error_response(unsigned status, std::string_view word, std::string_view message,
                            bool retryable = false, Duration retry_after = Duration::zero());
// 400 INVALID_ARGUMENT.
HttpResponse bad_request(std::string_view message);
// A refusal of the service, as refusals.h's table says.
HttpResponse refusal(Code code, std::string_view message, Refusing what, Duration retry_after);
HttpResponse method_not_allowed(std::string_view method, std::string_view allow);

}  // namespace snowid::daemon
