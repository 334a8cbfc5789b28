// Test support for what snowidd writes as JSON (HTTP bodies, JSON log
// lines): a strict reader and a UTF-8 check, kept independent of json_text.cc
// so that a bug there is not repeated here. Used by the unit tests and by the
// fuzzers, hence no gtest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace snowid::daemon::test_support {

// True if `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
inline bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n = 0;  // continuation bytes
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07u;
    } else {
      return false;
    }
    if (s.size() - i <= n) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (b & 0x3fu);
    }
    const std::uint32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}

// One JSON value: strings decoded (escapes and surrogate pairs), numbers
// kept as their text.
struct Json {
  struct Member;
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // a string's value or a number's text
  std::vector<Json> items;
  std::vector<Member> members;  // in order

  // The member `key`, or null.
  const Json* find(std::string_view key) const;
  // The member `key` as a string; "<missing>" if absent or not a string.
  std::string str(std::string_view key) const;
  // The member `key` as a number's text; "<missing>" if absent or not a number.
  std::string num(std::string_view key) const;
};

struct Json::Member {
  std::string key;
  Json value;
};

inline const Json* Json::find(std::string_view key) const {
  for (const Member& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

inline std::string Json::str(std::string_view key) const {
  const Json* v = find(key);
  return v != nullptr && v->type == Type::kString ? v->text : "<missing>";
}

inline std::string Json::num(std::string_view key) const {
  const Json* v = find(key);
  return v != nullptr && v->type == Type::kNumber ? v->text : "<missing>";
}

namespace json_detail {

// RFC 8259's grammar and nothing more, with values nested at most 32 deep.
// Raw bytes inside strings are copied unchecked: valid_utf8() checks those.
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  std::optional<Json> document() {
    Json v;
    if (!value(v, 0)) return std::nullopt;
    skip_space();
    if (at_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip_space() {
    while (at_ < s_.size() &&
           (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\r' || s_[at_] == '\t')) {
      ++at_;
    }
  }
  bool eat(char c) {
    skip_space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  bool literal(std::string_view word) {
    if (s_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  bool hex4(unsigned& out) {
    if (s_.size() - at_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[at_++];
      unsigned d = 0;
      if (c >= '0' && c <= '9') {
        d = static_cast<unsigned>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        d = static_cast<unsigned>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        d = static_cast<unsigned>(c - 'A' + 10);
      } else {
        return false;
      }
      out = out * 16 + d;
    }
    return true;
  }
  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (at_ < s_.size()) {
      const char c = s_[at_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= s_.size()) return false;
      const char e = s_[at_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          unsigned cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xd800 && cp <= 0xdbff) {
            unsigned low = 0;
            if (!literal("\\u") || !hex4(low) || low < 0xdc00 || low > 0xdfff) return false;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return false;
          }
          put_utf8(out, cp);
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }
  bool number(std::string& out) {
    const std::size_t start = at_;
    if (at_ < s_.size() && s_[at_] == '-') ++at_;
    const auto digits = [&] {
      const std::size_t from = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      return at_ - from;
    };
    const std::size_t int_start = at_;
    const std::size_t n = digits();
    if (n == 0 || (n > 1 && s_[int_start] == '0')) return false;
    if (at_ < s_.size() && s_[at_] == '.') {
      ++at_;
      if (digits() == 0) return false;
    }
    if (at_ < s_.size() && (s_[at_] == 'e' || s_[at_] == 'E')) {
      ++at_;
      if (at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-')) ++at_;
      if (digits() == 0) return false;
    }
    out = std::string(s_.substr(start, at_ - start));
    return true;
  }
  bool value(Json& v, int depth) {
    if (depth > 32) return false;
    skip_space();
    if (at_ >= s_.size()) return false;
    const char c = s_[at_];
    if (c == '{') {
      v.type = Json::Type::kObject;
      ++at_;
      if (eat('}')) return true;
      do {
        std::string key;
        Json member;
        skip_space();
        if (!string(key) || !eat(':') || !value(member, depth + 1)) return false;
        v.members.push_back({std::move(key), std::move(member)});
      } while (eat(','));
      return eat('}');
    }
    if (c == '[') {
      v.type = Json::Type::kArray;
      ++at_;
      if (eat(']')) return true;
      do {
        Json item;
        if (!value(item, depth + 1)) return false;
        v.items.push_back(std::move(item));
      } while (eat(','));
      return eat(']');
    }
    if (c == '"') {
      v.type = Json::Type::kString;
      return string(v.text);
    }
    if (literal("true")) {
      v.type = Json::Type::kBool;
      v.boolean = true;
      return true;
    }
    if (literal("false")) {
      v.type = Json::Type::kBool;
      return true;
    }
    if (literal("null")) return true;
    v.type = Json::Type::kNumber;
    return number(v.text);
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

}  // namespace json_detail

// `text` as exactly one JSON value (white space around it allowed), or
// nullopt if it is not one.
inline std::optional<Json> parse_json(std::string_view text) {
  return json_detail::Reader(text).document();
}

}  // namespace snowid::daemon::test_support
