// Shared by the RESP session's tests: a small RESP reply reader,
// independent of RespWriter (so that a bug shared by the writer and the
// checks cannot hide), and helpers to talk to a session.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resp_session.h"

namespace snowid::daemon::test_support {

struct Reply {
  char type = 0;             // '+', '-', ':', '$', '*', '%', '_' or '('
  std::string text;          // simple string, error, bulk string, big number digits
  std::int64_t number = 0;   // integer
  bool null = false;         // $-1, *-1 or _
  std::vector<Reply> items;  // array elements; map keys and values alternately
};

inline bool read_line(std::string_view in, std::size_t& pos, std::string_view& line) {
  const std::size_t end = in.find("\r\n", pos);
  if (end == std::string_view::npos) return false;
  line = in.substr(pos, end - pos);
  pos = end + 2;
  return true;
}

inline bool to_int(std::string_view s, std::int64_t& v) {
  if (s.empty()) return false;
  const bool negative = s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty()) return false;
  v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (negative) v = -v;
  return true;
}

// One reply starting at `pos`, or nullopt if the bytes are incomplete or not
// RESP.
inline std::optional<Reply> read_reply(std::string_view in, std::size_t& pos) {
  if (pos >= in.size()) return std::nullopt;
  Reply r;
  r.type = in[pos++];
  std::string_view line;
  if (!read_line(in, pos, line)) return std::nullopt;
  switch (r.type) {
    case '+':
    case '-':
    case '(':
      r.text = line;
      return r;
    case ':':
      if (!to_int(line, r.number)) return std::nullopt;
      return r;
    case '_':
      r.null = true;
      return r;
    case '$': {
      std::int64_t n = 0;
      if (!to_int(line, n)) return std::nullopt;
      if (n < 0) {
        r.null = true;
        return r;
      }
      const auto len = static_cast<std::size_t>(n);
      if (in.size() - pos < len + 2 || in.substr(pos + len, 2) != "\r\n") return std::nullopt;
      r.text = in.substr(pos, len);
      pos += len + 2;
      return r;
    }
    case '*':
    case '%': {
      std::int64_t n = 0;
      if (!to_int(line, n)) return std::nullopt;
      if (n < 0) {
        r.null = true;
        return r;
      }
      const std::int64_t elements = r.type == '%' ? 2 * n : n;
      for (std::int64_t i = 0; i < elements; ++i) {
        std::optional<Reply> item = read_reply(in, pos);
        if (!item) return std::nullopt;
        r.items.push_back(std::move(*item));
      }
      return r;
    }
    default:
      return std::nullopt;
  }
}

// Every reply in `in`, which must hold nothing else.
inline std::vector<Reply> read_all(std::string_view in) {
  std::vector<Reply> replies;
  std::size_t pos = 0;
  while (pos < in.size()) {
    std::optional<Reply> r = read_reply(in, pos);
    EXPECT_TRUE(r.has_value()) << "not RESP at byte " << pos << " of: " << in;
    if (!r) break;
    replies.push_back(std::move(*r));
  }
  return replies;
}

inline Reply read_one(std::string_view in) {
  std::vector<Reply> all = read_all(in);
  EXPECT_EQ(all.size(), 1u) << in;
  return all.empty() ? Reply{} : all.front();
}

// A RESP3 map, or the flat key-value array RESP2 gives instead, by key.
inline std::map<std::string, Reply> as_map(const Reply& r) {
  std::map<std::string, Reply> m;
  EXPECT_TRUE(r.type == '%' || r.type == '*') << r.type;
  EXPECT_EQ(r.items.size() % 2, 0u);
  for (std::size_t i = 0; i + 1 < r.items.size(); i += 2) {
    EXPECT_TRUE(m.emplace(r.items[i].text, r.items[i + 1]).second)
        << "repeated key " << r.items[i].text;
  }
  return m;
}

// The multibulk form of a command, as client libraries send it.
inline std::string cmd(std::initializer_list<std::string_view> args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string_view a : args) {
    s += "$" + std::to_string(a.size()) + "\r\n";
    s += a;
    s += "\r\n";
  }
  return s;
}

// Feeds `in` and returns the replies; `open` says whether the session stays.
// Feeds `in` and collects every reply, calling again while answers are
// pending (past the output budget), as the server does.
inline std::string talk(RespSession& s, std::string_view in, bool* open = nullptr) {
  std::string out;
  bool keep = s.on_bytes(in, out);
  while (keep && s.pending()) keep = s.on_bytes({}, out);
  if (open != nullptr) *open = keep;
  return out;
}

// An id or sequence number as the daemon sends it by default: a bulk string
// of decimal digits (a leading '-' for a negative number), nothing else.
inline std::int64_t decimal_of(const Reply& r) {
  EXPECT_EQ(r.type, '$') << r.text;
  const std::string& t = r.text;
  const bool negative = !t.empty() && t[0] == '-';
  EXPECT_FALSE(t.empty() || t.size() == (negative ? 1u : 0u)) << "empty number";
  for (std::size_t i = negative ? 1 : 0; i < t.size(); ++i) {
    EXPECT_TRUE(t[i] >= '0' && t[i] <= '9') << "not a decimal number: " << t;
  }
  return r.type == '$' && !t.empty() ? std::stoll(t) : 0;
}

inline std::uint64_t id_of(const Reply& r) { return static_cast<std::uint64_t>(decimal_of(r)); }

// An id after IDFORMAT INTEGER: a RESP integer.
inline std::uint64_t integer_id_of(const Reply& r) {
  EXPECT_EQ(r.type, ':') << r.text;
  return static_cast<std::uint64_t>(r.number);
}

// The first word of an error reply.
inline std::string word_of(const Reply& r) {
  EXPECT_EQ(r.type, '-');
  return r.text.substr(0, r.text.find(' '));
}

}  // namespace snowid::daemon::test_support
