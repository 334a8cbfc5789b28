// The words both SQL stores use for the contract's errors, the same as the
// memory store's, so that a library caller sees one message whatever the
// database. snowidd does not pass these on: its sequence service words
// kNotFound and kAlreadyExists for its own clients, where the transports add
// a hint.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "snowid/status.h"
#include "snowid/ticket_store.h"

namespace snowid::sequences {

inline std::string quoted_name(std::string_view name) { return "'" + std::string(name) + "'"; }

inline Status no_sequence_error(std::string_view name) {
  return Status(Code::kNotFound, "no sequence " + quoted_name(name));
}

inline Status sequence_exists_error(std::string_view name) {
  return Status(Code::kAlreadyExists, "sequence " + quoted_name(name) + " exists already");
}

inline Status sequence_spent_error(std::string_view name, std::int64_t size,
                                   std::int64_t next_value) {
  return Status(Code::kOutOfRange, "sequence " + quoted_name(name) +
                                       " is spent: " + std::to_string(size) + " numbers from " +
                                       std::to_string(next_value) + " would pass INT64_MAX");
}

// A row that breaks the table's own rules (someone wrote it by hand).
inline Status bad_row_error(std::string_view name, std::string_view what) {
  return Status(Code::kDataLoss, "the ticket table's row " + quoted_name(name) +
                                     " is invalid: " + std::string(what));
}

// OK when a row read back keeps the table's rules: next_value in
// [0, INT64_MAX], step in [1, kMaxSequenceRange].
inline Status check_sequence_row(const SequenceInfo& row) {
  if (row.next_value < 0) return bad_row_error(row.name, "next_value is negative");
  if (row.step < 1 || row.step > kMaxSequenceRange) {
    return bad_row_error(row.name, "step " + std::to_string(row.step) + " is out of bounds");
  }
  return Status::ok();
}

}  // namespace snowid::sequences
