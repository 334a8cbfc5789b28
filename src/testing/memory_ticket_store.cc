#include "snowid/testing/memory_ticket_store.h"

#include <limits>
#include <string>

namespace snowid::testing {
namespace {

std::string quoted(std::string_view name) { return "'" + std::string(name) + "'"; }

}  // namespace

MemoryTicketStore::MemoryTicketStore(const Clock& clock) : clock_(clock) {}

// Nothing to migrate: the rows are the schema.
Status MemoryTicketStore::migrate() { return Status::ok(); }

Status MemoryTicketStore::create(std::string_view name, std::int64_t start, std::int64_t step) {
  if (Status s = validate_sequence_create(name, start, step); !s.is_ok()) return s;
  const WallTime now = clock_.wall_now();
  std::lock_guard<std::mutex> lock(mu_);
  if (rows_.find(name) != rows_.end()) {
    return Status(Code::kAlreadyExists, "sequence " + quoted(name) + " exists already");
  }
  SequenceInfo row;
  row.name = std::string(name);
  row.next_value = start;
  row.step = step;
  row.created = now;
  row.updated = now;
  rows_.emplace(row.name, std::move(row));
  return Status::ok();
}

Result<SequenceRange> MemoryTicketStore::take(std::string_view name, std::int64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  ++takes_;
  if (Status s = validate_sequence_take(name, size); !s.is_ok()) return s;
  const auto it = rows_.find(name);
  if (it == rows_.end()) return Status(Code::kNotFound, "no sequence " + quoted(name));
  SequenceInfo& row = it->second;
  const std::int64_t n = size == 0 ? row.step : size;
  // next_value + n must not pass INT64_MAX; written so that it cannot overflow.
  if (n > std::numeric_limits<std::int64_t>::max() - row.next_value) {
    return Status(Code::kOutOfRange, "sequence " + quoted(name) +
                                         " is spent: " + std::to_string(n) + " numbers from " +
                                         std::to_string(row.next_value) + " would pass INT64_MAX");
  }
  const SequenceRange range{row.next_value, row.next_value + n};
  row.next_value = range.end;
  row.updated = clock_.wall_now();
  return range;
}

Result<SequenceInfo> MemoryTicketStore::get(std::string_view name) {
  if (Status s = validate_sequence_name(name); !s.is_ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = rows_.find(name);
  if (it == rows_.end()) return Status(Code::kNotFound, "no sequence " + quoted(name));
  return it->second;
}

Result<std::vector<SequenceInfo>> MemoryTicketStore::list() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SequenceInfo> out;
  out.reserve(rows_.size());
  for (const auto& [name, row] : rows_) out.push_back(row);
  return out;
}

std::uint64_t MemoryTicketStore::takes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return takes_;
}

}  // namespace snowid::testing
