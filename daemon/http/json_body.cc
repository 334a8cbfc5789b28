#include "json_body.h"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

namespace snowid::daemon {
namespace {

using json = nlohmann::json;

// Client text echoed in a message is cut to this many bytes.
constexpr std::size_t kMaxEchoed = 64;

// `text` quoted for a message: control and non-ASCII bytes as '?', cut short.
std::string shown(std::string_view text) {
  std::string out = "\"";
  for (const char c : text.substr(0, kMaxEchoed)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7f || c == '"' || c == '\\') ? '?' : c;
  }
  if (text.size() > kMaxEchoed) out += "...";
  return out + "\"";
}

// The SAX events of nlohmann's strict parser. Parsing stops at the first
// thing that is not wanted (an event returns false), with what was wrong in
// `error`. Every value wanted is a scalar in the top-level object, so any
// container inside it is refused as soon as it opens.
class IntegerFields {
 public:
  explicit IntegerFields(std::span<const std::string_view> allowed) : allowed_(allowed) {}

  std::vector<std::pair<std::string, std::string>> fields;
  std::string error;

  bool null() { return wrong_value("null"); }
  bool boolean(bool) { return wrong_value("a boolean"); }
  bool number_integer(json::number_integer_t v) { return value(std::to_string(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(std::to_string(v)); }
  bool number_float(json::number_float_t, const std::string& text) {
    // An integer too long for 64 bits is read as a double: passed on as
    // written, for the caller's bounds to refuse.
    if (text.find_first_of(".eE") == std::string::npos) return value(text);
    return fail(member_name() + " must be an integer (no fraction or exponent), not " +
                shown(text));
  }
  bool string(std::string& s) { return value(s); }
  bool binary(json::binary_t&) { return wrong_value("binary"); }

  bool start_object(std::size_t) {
    if (depth_ > 0) return wrong_value("an object");
    ++depth_;
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 0) return fail("the request body must be a JSON object, not an array");
    return wrong_value("an array");
  }
  bool end_array() { return true; }

  bool key(std::string& k) {
    bool known = false;
    for (const std::string_view a : allowed_) known = known || a == k;
    if (!known) return fail("unknown field " + shown(k) + " in the request body");
    for (const auto& f : fields) {
      if (f.first == k) return fail("field " + shown(k) + " given more than once");
    }
    key_ = k;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const std::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string what = e.what();
    if (const std::size_t end = what.find("] "); what.starts_with("[json.") && end != what.npos) {
      what.erase(0, end + 2);
    }
    return fail("the request body is not valid JSON: " + what);
  }

 private:
  std::string member_name() const { return "field " + shown(key_); }

  bool value(std::string text) {
    if (depth_ == 0) return fail("the request body must be a JSON object");
    fields.emplace_back(key_, std::move(text));
    return true;
  }
  bool wrong_value(std::string_view what) {
    if (depth_ == 0) return fail("the request body must be a JSON object");
    return fail(member_name() + " must be an integer or a decimal string, not " +
                std::string(what));
  }
  bool fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }

  std::span<const std::string_view> allowed_;
  std::string key_;
  int depth_ = 0;
};

}  // namespace

Result<std::vector<std::pair<std::string, std::string>>> parse_integer_fields(
    std::string_view body, std::span<const std::string_view> allowed) {
  IntegerFields sax(allowed);
  bool ok = false;
  try {
    ok = json::sax_parse(body.begin(), body.end(), &sax);
  } catch (const std::exception& e) {
    // The parser reports through parse_error(); this is only a guard.
    return Status(Code::kInvalidArgument,
                  std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!ok || !sax.error.empty()) {
    return Status(Code::kInvalidArgument,
                  sax.error.empty() ? "the request body is not valid JSON" : sax.error);
  }
  return std::move(sax.fields);
}

}  // namespace snowid::daemon
