// The generating half of `snowid next`: leases a worker id for each layout
// era it runs in, issues ids under that lease and writes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "snowid/layout.h"
#include "snowid/layout_history.h"
#include "snowid/lease.h"
#include "snowid/time.h"

namespace snowid::cli {

struct IssueRequest {
  const LayoutHistory* history = nullptr;
  std::size_t era = 0;  // the era in effect when the run starts
  std::uint32_t region = 0;
  // Pin this host id (an operator's choice); nullopt: lease any free one.
  std::optional<std::uint32_t> host;
  // Opens the registry for an era's layout (its region and host widths).
  std::function<Result<std::unique_ptr<WorkerRegistry>>(const Layout&)> open_registry;
  LeaseTiming timing;
  HolderInfo holder;
  // Each worker's time fence lives in this directory (fence_file.h).
  std::string state_dir;
  std::uint64_t count = 1;
  // How long retryable refusals (clock behind the restored fence, sequence
  // used up, fence write failing) are retried before giving up. After an
  // unclean stop the clock may trail the fence by its 1 s window.
  Duration retry_budget = std::chrono::seconds(3);
  // How long a pinned id that someone else holds (or that rests after its
  // last use) is waited for before giving up: two runs for the same worker
  // take turns.
  Duration pinned_wait = std::chrono::seconds(10);
};

// Writes `count` ids to `out`, one per line, in increasing order, then closes
// the generator, which records the exact last instant and releases the lease.
// If the next era's cut-over arrives during the run, ids at or past it are
// dropped and generation continues in that era, under a lease taken with its
// layout. Reports failures on stderr and returns the exit code; after a
// failure `out` may hold fewer ids, each still unique.
int issue_ids(const IssueRequest& request, std::FILE* out);

// `next --follow`: takes the lease, then for each line read from `in_fd`
// writes ids to `out` and flushes: an empty line asks for `count` ids, a line
// with a number N for N ids. Ends, releasing the lease, at the end of input
// or on SIGTERM or SIGINT. Lease events (lost, re-acquired) are reported on
// stderr as they happen. Exit code as issue_ids; 2 for a bad request line.
int follow_ids(const IssueRequest& request, int in_fd, std::FILE* out);

}  // namespace snowid::cli
