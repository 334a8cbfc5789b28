// RespParser on arbitrary bytes, fed whole and in fuzzer-chosen pieces. Both
// must give the same commands and the same error; every command must respect
// the limits and must come back unchanged when encoded as a multibulk request
// and parsed again; the parser must hold no more than its limits allow.
//
// Input: a control byte, then up to 15 piece lengths, then the request bytes.
//   control bits 0-3: how many piece-length bytes follow (none, or all of them
//                     0: feed byte by byte)
//   control bits 4-5: which limits (the defaults, or small ones that the
//                     fuzzer can reach)
// The pieces cycle through the lengths until the request bytes run out; a
// length of 0 feeds nothing before the next call to next().
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "resp_parser.h"

namespace {

using snowid::daemon::RespCommand;
using snowid::daemon::RespLimits;
using snowid::daemon::RespParser;

RespLimits limits_for(unsigned profile) {
  switch (profile) {
    case 1:
      return RespLimits{.max_arguments = 4,
                        .max_bulk_length = 16,
                        .max_inline_length = 12,
                        .max_buffered_bytes = 24};
    case 2:
      return RespLimits{.max_arguments = 2,
                        .max_bulk_length = 3,
                        .max_inline_length = 3,
                        .max_buffered_bytes = 5};
    case 3:
      return RespLimits{.max_arguments = 64,
                        .max_bulk_length = 200,
                        .max_inline_length = 100,
                        .max_buffered_bytes = 300};
    default:
      return RespLimits{};
  }
}

struct Outcome {
  std::vector<RespCommand> commands;
  std::string error;
  bool operator==(const Outcome&) const = default;
};

// Drains the parser into `out` and checks what it may hold while it waits.
void drain(RespParser& parser, Outcome& out) {
  RespCommand command;
  for (;;) {
    const RespParser::Status s = parser.next(command);
    if (s == RespParser::Status::kNeedMore) {
      FUZZ_CHECK(!parser.failed());
      // An incomplete inline line (it may not reach max_inline_length + 2
      // bytes without its \n), bulk (its data and a \r), or count or length
      // line (the type byte, up to 20 characters and a \r).
      const RespLimits& l = parser.limits();
      const std::size_t bound =
          std::max({l.max_inline_length + 1, l.max_bulk_length + 1, std::size_t{22}});
      FUZZ_CHECK(parser.buffered() <= bound);
      return;
    }
    if (s == RespParser::Status::kError) {
      FUZZ_CHECK(parser.failed());
      FUZZ_CHECK(!parser.error().empty());
      FUZZ_CHECK(parser.error().find_first_of("\r\n") == std::string::npos);
      FUZZ_CHECK(parser.buffered() == 0);
      out.error = parser.error();
      // Failed for good.
      parser.feed("*1\r\n$4\r\nPING\r\n");
      FUZZ_CHECK(parser.next(command) == RespParser::Status::kError);
      FUZZ_CHECK(parser.error() == out.error);
      return;
    }
    FUZZ_CHECK(s == RespParser::Status::kCommand);
    out.commands.push_back(command);
  }
}

// The multibulk encoding every client library sends.
std::string encode(const RespCommand& command) {
  std::string s = "*" + std::to_string(command.size()) + "\r\n";
  for (const std::string& a : command) {
    s += "$" + std::to_string(a.size()) + "\r\n";
    s += a;
    s += "\r\n";
  }
  return s;
}

void check_command(const RespCommand& command, const RespLimits& l) {
  FUZZ_CHECK(!command.empty());
  FUZZ_CHECK(command.size() <= l.max_arguments);
  std::size_t bytes = 0;
  for (const std::string& a : command) {
    // From a bulk or from an inline line.
    FUZZ_CHECK(a.size() <= std::max(l.max_bulk_length, l.max_inline_length));
    bytes += a.size();
  }
  FUZZ_CHECK(bytes <= std::max(l.max_buffered_bytes, l.max_inline_length));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned control = data[0];
  const std::size_t piece_count = std::min<std::size_t>(control & 0xf, size - 1);
  std::vector<std::uint8_t> pieces(data + 1, data + 1 + piece_count);
  if (std::all_of(pieces.begin(), pieces.end(), [](std::uint8_t n) { return n == 0; })) {
    pieces.clear();  // no progress otherwise
  }
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1 + piece_count,
                               size - 1 - piece_count);
  const RespLimits limits = limits_for((control >> 4) & 3);

  Outcome whole;
  {
    RespParser parser(limits);
    parser.feed(bytes);
    drain(parser, whole);
  }

  Outcome split;
  {
    RespParser parser(limits);
    std::size_t at = 0;
    for (std::size_t i = 0; at < bytes.size(); ++i) {
      const std::size_t n = pieces.empty() ? 1 : pieces[i % pieces.size()];
      const std::string_view piece = bytes.substr(at, n);
      at += piece.size();
      parser.feed(piece);
      drain(parser, split);
      if (!split.error.empty()) break;
    }
  }
  FUZZ_CHECK(split == whole);

  // Each command, encoded as a client would, parses back to itself, alone and
  // as one pipeline. Inline arguments may exceed the bulk limits, so those are
  // widened to the inline one.
  RespLimits wide = limits;
  wide.max_bulk_length = std::max(limits.max_bulk_length, limits.max_inline_length);
  wide.max_buffered_bytes = std::max(limits.max_buffered_bytes, limits.max_inline_length);
  std::string pipeline;
  for (const RespCommand& command : whole.commands) {
    check_command(command, limits);
    const std::string encoded = encode(command);
    pipeline += encoded;
    RespParser again(wide);
    again.feed(encoded);
    RespCommand parsed;
    FUZZ_CHECK(again.next(parsed) == RespParser::Status::kCommand);
    FUZZ_CHECK(parsed == command);
    FUZZ_CHECK(again.next(parsed) == RespParser::Status::kNeedMore);
    FUZZ_CHECK(again.buffered() == 0);
  }
  Outcome replayed;
  {
    RespParser again(wide);
    again.feed(pipeline);
    drain(again, replayed);
  }
  FUZZ_CHECK(replayed.error.empty());
  FUZZ_CHECK(replayed.commands == whole.commands);
  return 0;
}
