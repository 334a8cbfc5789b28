// A hook told about every id a generator issues (GeneratorOptions::observer),
// for checks that run beside the generator: the uniqueness canary
// (snowid/postgres_canary.h) is one.
#pragma once

#include <cstdint>

#include "snowid/layout.h"

namespace snowid {

class IssueObserver {
 public:
  virtual ~IssueObserver() = default;

  // `count` consecutive ids from `first` were issued by the generator of
  // `worker` and are about to be returned to its caller. Called on the
  // issuing thread after each successful next(), try_next(), reserve() and
  // try_reserve(), and never for a refusal. It runs on the hot path: it must
  // return at once, never block, and never call back into the generator.
  virtual void issued(std::uint64_t first, std::uint32_t count, WorkerId worker) noexcept = 0;
};

}  // namespace snowid
