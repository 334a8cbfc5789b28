// A FenceStore in memory for tests, with injectable failures. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>

#include "snowid/fence.h"

namespace snowid::testing {

class MemoryFenceStore final : public FenceStore {
 public:
  Result<std::optional<WallTime>> load() override;
  Status store(WallTime fence) override;

  // While set, store() fails with kUnavailable and changes nothing.
  void set_fail_stores(bool fail);
  // While set, load() fails with kDataLoss, as a corrupt file would.
  void set_corrupt(bool corrupt);
  std::optional<WallTime> stored() const;
  std::uint64_t stores() const;

 private:
  mutable std::mutex mu_;
  std::optional<WallTime> fence_;
  bool fail_stores_ = false;
  bool corrupt_ = false;
  std::uint64_t stores_ = 0;
};

}  // namespace snowid::testing
