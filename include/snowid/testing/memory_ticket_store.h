// A TicketStore in memory for tests, keeping the whole contract of
// ticket_store.h (the same conformance suite runs against it, SQLite and
// PostgreSQL). Link snowid::testing. Thread-safe: one mutex guards the rows.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "snowid/ticket_store.h"
#include "snowid/time.h"

namespace snowid::testing {

class MemoryTicketStore final : public TicketStore {
 public:
  // `clock` stamps created/updated and must outlive the store.
  explicit MemoryTicketStore(const Clock& clock);

  Status migrate() override;
  Status create(std::string_view name, std::int64_t start, std::int64_t step) override;
  Result<SequenceRange> take(std::string_view name, std::int64_t size) override;
  Result<SequenceInfo> get(std::string_view name) override;
  Result<std::vector<SequenceInfo>> list() override;
  std::string_view kind() const noexcept override { return "memory"; }

  // take() calls so far, failed ones included.
  std::uint64_t takes() const;

 private:
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, SequenceInfo, std::less<>> rows_;
  std::uint64_t takes_ = 0;
};

}  // namespace snowid::testing
