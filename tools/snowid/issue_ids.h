// The generating half of `snowid next`: runs generators over the layout eras
// and writes the ids they issue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "fence_file.h"
#include "snowid/layout.h"
#include "snowid/layout_history.h"
#include "snowid/time.h"

namespace snowid::cli {

struct IssueRequest {
  const LayoutHistory* history = nullptr;
  std::size_t era = 0;  // the era in effect when the run starts
  WorkerId worker;
  std::shared_ptr<RecordingFenceStore> fence;
  std::uint64_t count = 1;
  // How long retryable refusals (clock behind the restored fence, sequence
  // used up, fence write failing) are retried before giving up. After an
  // unclean stop the clock may trail the fence by its 1 s window.
  Duration retry_budget = std::chrono::seconds(3);
};

// Writes `count` ids to `out`, one per line, in increasing order, and closes
// every generator it made so that the exact last tick is recorded. If the
// next era's cut-over arrives during the run, ids at or past it are dropped
// and generation continues in that era. Reports failures on stderr and returns
// the exit code; after a failure `out` may hold fewer ids, each still unique.
int issue_ids(const IssueRequest& request, std::FILE* out);

}  // namespace snowid::cli
