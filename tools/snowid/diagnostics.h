// How the tool reports: exit codes and one-line messages on stderr.
#pragma once

#include <string_view>

#include "snowid/status.h"

namespace snowid::cli {

// Process exit codes. Scripts depend on them; do not change the values.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work failed: the generator refused, I/O failed
inline constexpr int kExitUsage = 2;    // the input or the command line was wrong

// kExitUsage for statuses that mean the caller's input was wrong
// (kInvalidArgument, kOutOfRange, kNotFound); kExitFailure for the rest.
int exit_code_for(const Status& status) noexcept;

// Writes "snowid: <message>" as exactly one line on stderr: line breaks and
// other control characters in `message` are replaced, so every refusal stays
// one line however odd the input that caused it.
void print_error(std::string_view message);
// Writes "snowid: warning: <message>", one line, on stderr.
void print_warning(std::string_view message);
// Writes "snowid: <message>", one line, on stderr: news that is neither an
// error nor a warning, for modes that run a long time (`next --follow`).
void print_info(std::string_view message);

// Prints the status (its message for bad input, "CODE: message" for a
// failure) and returns exit_code_for(status).
int report(const Status& status);

}  // namespace snowid::cli
