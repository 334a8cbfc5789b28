// Record: an answer of named, typed values in a fixed order, the one answer
// shape that RESP and HTTP each encode once, without knowing the command:
//   RESP  a map (RESP3) or a flat array of name, value, ... (RESP2), each
//         name a bulk string;
//   HTTP  a JSON object, {"name":value,...}, in the same order.
// A command whose answer is a flat record returns one (or builds one when it
// is encoded, as SNOWID.CLOCK does to read its send time last) and needs no
// encoder of its own. Answers whose two wire forms differ by design (a bare
// id over RESP, an object over HTTP; a flattened map against a nested
// object; fields only one protocol shows) keep their own answer types:
// commands.h lists them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace snowid::daemon {

struct RecordField {
  enum class Kind : std::uint8_t {
    kWide,     // an id, a sequence number or a time in ns, which pass 2^53:
               // RESP per the connection's IDFORMAT, JSON a decimal string
    kInteger,  // RESP integer, JSON number
    kText,     // RESP bulk string, JSON string
    kNull,     // RESP null, JSON null
  };
  // A literal: records may outlive the request (deferred work).
  std::string_view name;
  Kind kind = Kind::kNull;
  std::int64_t number = 0;  // kWide, kInteger
  std::string text;         // kText
};

struct Record {
  std::vector<RecordField> fields;

  Record& wide(std::string_view name, std::int64_t value) {
    fields.push_back({name, RecordField::Kind::kWide, value, {}});
    return *this;
  }
  Record& integer(std::string_view name, std::int64_t value) {
    fields.push_back({name, RecordField::Kind::kInteger, value, {}});
    return *this;
  }
  Record& text(std::string_view name, std::string value) {
    fields.push_back({name, RecordField::Kind::kText, 0, std::move(value)});
    return *this;
  }
  Record& null(std::string_view name) {
    fields.push_back({name, RecordField::Kind::kNull, 0, {}});
    return *this;
  }
};

}  // namespace snowid::daemon
