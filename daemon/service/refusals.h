// How the daemon's refusals read on the wire, for ids and sequences alike.
//
// Every refusal is a Code; error_word() and http_status() turn it into what
// each protocol says, so RESP and HTTP clients see the same word. The same
// code can mean different things for ids, for an id the client gave, and for
// a sequence (sequence_service.h), hence the Refusing argument:
//
//   code                 word                 retry?  HTTP
//   kSequenceExhausted   SEQUENCE_EXHAUSTED   yes     503 + Retry-After
//   kClockBehind         CLOCK_BEHIND         yes     503 + Retry-After
//   kUnavailable         UNAVAILABLE          yes     503 + Retry-After (ids: the fence;
//                                                     sequences: the ticket table)
//   kLeaseUncertain      LEASE_UNCERTAIN      yes     503 + Retry-After
//   kClockMovedBack      CLOCK_MOVED_BACK     no      503
//   kUnhealthy           UNHEALTHY            no      503
//   kLeaseLost           LEASE_LOST           no      503
//   kFailedPrecondition  SHUTTING_DOWN        no      503 (ids, once shutting down)
//                        FAILED_PRECONDITION  no      503 (sequences: the ticket table's
//                                                     schema is missing or newer)
//   kInvalidArgument     INVALID_ARGUMENT     no      400
//   kOutOfRange          OUT_OF_RANGE         no      503 issuing (the clock is past the
//                                                     layout), 400 decoding or unwrapping,
//                                                     409 a spent sequence (its state
//                                                     forbids it)
//   kNotFound            NOT_FOUND            no      404 (a sequence that does not exist)
//   kAlreadyExists       ALREADY_EXISTS       no      409 (creating one that exists)
//   kResourceExhausted   RESOURCE_EXHAUSTED   no      503 (sequences: max_sequences are
//                                                     served already)
//   other                code_name(code)      no      500
//
//
// A public id's refusal is answered with the keyring's reason word
// (UNKNOWN_KEY, FORGED, IMPLAUSIBLE, AMBIGUOUS_SYMBOL...; docs/public-id.md)
// in place of the code's, with the code's HTTP status.
//
// Shutting down is answered differently by the two services, and clients
// rely on both: ids and decoding refuse for good (kFailedPrecondition,
// SHUTTING_DOWN), a sequence's request is kUnavailable (UNAVAILABLE, retry
// after), as a failed ticket table is.
#pragma once

#include <cstdint>
#include <string_view>

#include "snowid/status.h"

namespace snowid::daemon {

// What a refused request was doing.
enum class Refusing : std::uint8_t {
  kIssue,     // issuing ids: NEXTID, NEXTIDS, /v1/ids
  kDecode,    // decoding an id the client gave: DECODE, /v1/ids/{id}
  kSequence,  // a sequence: NEXTSEQ, SEQRANGE, SEQCREATE, SEQINFO, SEQLIST, /v1/sequences...
  kPublicId,  // wrapping or unwrapping what the client gave: WRAP, UNWRAP, /v1/public-ids...
};

// The word a client acts on for `code` (the table above).
std::string_view error_word(Code code, Refusing what = Refusing::kIssue) noexcept;
// The HTTP status for a refusal of `code` (the table above).
unsigned http_status(Code code, Refusing what) noexcept;

inline constexpr std::string_view kShuttingDownMessage = "the daemon is shutting down";
// The code of a refusal because the daemon is shutting down.
Code shutdown_code(Refusing what) noexcept;
// That refusal, with kShuttingDownMessage.
Status shutting_down(Refusing what);

}  // namespace snowid::daemon
