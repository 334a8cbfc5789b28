#include "resp_writer.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <limits>

namespace snowid::daemon {
namespace {

// Longest integer line: type byte, "-9223372036854775808" or
// "18446744073709551615" (20 characters), CR LF.
constexpr std::size_t kMaxIntegerLine = 1 + 20 + 2;

template <typename Int>
void append_number_line(std::string& out, char type, Int value) {
  char buf[kMaxIntegerLine];
  buf[0] = type;
  char* end = std::to_chars(buf + 1, buf + sizeof buf - 2, value).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out.append(buf, static_cast<std::size_t>(end - buf));
}

// Appends `text` with each CR and LF (and space, if `space_too`) replaced.
void append_replacing(std::string& out, std::string_view text, char replacement, bool space_too) {
  const std::size_t start = out.size();
  out.append(text);
  for (std::size_t i = start; i < out.size(); ++i) {
    const char c = out[i];
    if (c == '\r' || c == '\n' || (space_too && c == ' ')) out[i] = replacement;
  }
}

}  // namespace

void RespWriter::reserve_more(std::size_t n) {
  std::string& out = *out_;
  if (out.capacity() - out.size() >= n) return;
  // Grow geometrically: a string's reserve() need not, and replies to a
  // pipeline are appended one after the other.
  out.reserve(std::max(out.size() + n, out.capacity() * 2));
}

void RespWriter::header(char type, std::uint64_t n) { append_number_line(*out_, type, n); }

void RespWriter::simple_string(std::string_view text) {
  std::string& out = *out_;
  out += '+';
  append_replacing(out, text, ' ', false);
  out.append("\r\n");
}

void RespWriter::error(std::string_view code, std::string_view message) {
  std::string& out = *out_;
  out += '-';
  append_replacing(out, code.empty() ? std::string_view("ERR") : code, '_', true);
  if (!message.empty()) {
    out += ' ';
    append_replacing(out, message, ' ', false);
  }
  out.append("\r\n");
}

void RespWriter::protocol_error(std::string_view message) {
  std::string text = "Protocol error: ";
  text.append(message);
  error("ERR", text);
}

void RespWriter::integer(std::int64_t value) { append_number_line(*out_, ':', value); }

void RespWriter::unsigned_integer(std::uint64_t value) {
  if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    append_number_line(*out_, ':', value);
    return;
  }
  if (version_ == RespVersion::kResp3) {
    append_number_line(*out_, '(', value);
    return;
  }
  char digits[20];
  const char* end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  bulk_string(std::string_view(digits, static_cast<std::size_t>(end - digits)));
}

void RespWriter::bulk_string(std::string_view bytes) {
  header('$', bytes.size());
  out_->append(bytes);
  out_->append("\r\n");
}

void RespWriter::null() {
  out_->append(version_ == RespVersion::kResp3 ? std::string_view("_\r\n")
                                               : std::string_view("$-1\r\n"));
}

void RespWriter::array_header(std::size_t count) { header('*', count); }

void RespWriter::map_header(std::size_t pairs) {
  if (version_ == RespVersion::kResp3) {
    header('%', pairs);
  } else {
    header('*', static_cast<std::uint64_t>(pairs) * 2);
  }
}

template <typename Int>
void RespWriter::wide_digits(Int value) {
  // $<1 or 2 digits>\r\n<up to 20 digits>\r\n, built in place.
  char digits[20];
  const char* end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  const auto n = static_cast<std::size_t>(end - digits);
  char buf[kMaxWideBytes];
  char* p = buf;
  *p++ = '$';
  if (n >= 10) *p++ = static_cast<char>('0' + n / 10);
  *p++ = static_cast<char>('0' + n % 10);
  *p++ = '\r';
  *p++ = '\n';
  p = std::copy(digits, digits + n, p);
  *p++ = '\r';
  *p++ = '\n';
  out_->append(buf, static_cast<std::size_t>(p - buf));
}

void RespWriter::wide_integer(std::int64_t value) {
  if (wide_ == WideFormat::kInteger) return integer(value);
  wide_digits(value);
}

void RespWriter::wide_integer(std::uint64_t value) {
  if (wide_ == WideFormat::kInteger) return unsigned_integer(value);
  wide_digits(value);
}

void RespWriter::wide_range(std::uint64_t first, std::size_t count) {
  reserve_more(kMaxWideBytes * (count + 1));
  array_header(count);
  for (std::size_t i = 0; i < count; ++i) wide_integer(first + i);
}

void RespWriter::wide_range(std::int64_t first, std::size_t count) {
  [[maybe_unused]] const auto last_fits = [first, count] {
    constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
    if (count == 0) return true;
    const std::uint64_t steps = count - 1;
    return steps <= static_cast<std::uint64_t>(kMax) &&
           first <= kMax - static_cast<std::int64_t>(steps);
  };
  assert(last_fits());
  reserve_more(kMaxWideBytes * (count + 1));
  array_header(count);
  for (std::size_t i = 0; i < count; ++i) wide_integer(first + static_cast<std::int64_t>(i));
}

}  // namespace snowid::daemon
