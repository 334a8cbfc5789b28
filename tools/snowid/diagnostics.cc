#include "diagnostics.h"

#include <cstdio>
#include <string>

namespace snowid::cli {
namespace {

void print_line(std::string_view prefix, std::string_view message) {
  std::string line(prefix);
  for (char c : message) {
    const auto u = static_cast<unsigned char>(c);
    line += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

int exit_code_for(const Status& status) noexcept {
  switch (status.code()) {
    case Code::kOk:
      return kExitOk;
    case Code::kInvalidArgument:
    case Code::kOutOfRange:
    case Code::kNotFound:
      return kExitUsage;
    default:
      return kExitFailure;
  }
}

void print_error(std::string_view message) { print_line("snowid: ", message); }

void print_warning(std::string_view message) { print_line("snowid: warning: ", message); }

void print_info(std::string_view message) { print_line("snowid: ", message); }

int report(const Status& status) {
  const int code = exit_code_for(status);
  // A failure names its code (e.g. DATA_LOSS) so that operators can tell
  // refusals apart; bad input needs only the reason.
  if (code == kExitFailure || status.message().empty()) {
    print_error(status.to_string());
  } else {
    print_error(status.message());
  }
  return code;
}

}  // namespace snowid::cli
