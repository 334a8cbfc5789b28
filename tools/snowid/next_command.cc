// `snowid next`: generate ids for one worker, keeping its time fence in the
// state directory so that a later run never reuses time.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "diagnostics.h"
#include "fence_file.h"
#include "issue_ids.h"
#include "layout_describe.h"
#include "layout_option.h"
#include "number_text.h"
#include "state_dir.h"
#include "worker_lock.h"

namespace snowid::cli {
namespace {

constexpr std::uint64_t kMaxCount = 1'000'000;
// How long a run waits for another run of the same worker to finish.
constexpr Duration kLockWait = std::chrono::seconds(10);

struct NextOptions {
  std::string count = "1";
  std::string region = "0";
  std::string host;
  std::string state_dir;
  bool state_dir_given = false;
  std::string layout;
};

int run_next(const NextOptions& opt) {
  // An empty --state-dir is most likely an unset shell variable; falling back
  // to the default directory would silently use a different fence.
  if (opt.state_dir_given && opt.state_dir.empty()) {
    return report(Status(Code::kInvalidArgument, "--state-dir is empty"));
  }
  Result<std::uint64_t> count = parse_number(opt.count, "-n", 1, kMaxCount);
  if (!count.is_ok()) return report(count.status());
  Result<WorkerId> parsed_worker = parse_worker(opt.region, opt.host);
  if (!parsed_worker.is_ok()) return report(parsed_worker.status());
  const WorkerId worker = parsed_worker.value();

  const WallTime now = system_clock().wall_now();
  Result<LayoutFile> file = resolve_layout(opt.layout, now);
  if (!file.is_ok()) return report(file.status());
  Result<std::size_t> era = era_at(file->history, now);
  if (!era.is_ok()) return report(era.status());
  const Layout& layout = file->history.eras()[era.value()].layout;
  if (!layout.can_generate()) {
    return report(Status(Code::kInvalidArgument,
                         "layout " + layout.name() + " is decode-only; it cannot generate ids"));
  }
  if (Status s = layout.check_worker(worker); !s.is_ok()) return report(s);
  for (const std::string& w : outlook_of(layout, now).warnings) print_warning(w);

  Result<std::string> dir = find_state_dir(opt.state_dir);
  if (!dir.is_ok()) return report(dir.status());
  if (Status s = make_dirs(dir.value()); !s.is_ok()) return report(s);
  const std::string fence = fence_path(dir.value(), worker);
  Result<WorkerLock> lock = WorkerLock::acquire(fence + ".lock", kLockWait);
  if (!lock.is_ok()) return report(lock.status());

  IssueRequest request;
  request.history = &file->history;
  request.era = era.value();
  request.worker = worker;
  request.fence = std::make_shared<RecordingFenceStore>(fence);
  request.count = count.value();
  return issue_ids(request, stdout);
}

}  // namespace

Command add_next_command(CLI::App& root) {
  auto opt = std::make_shared<NextOptions>();
  CLI::App* app = root.add_subcommand("next", "Generate ids, one per line");
  app->add_option("-n,--count", opt->count, "How many ids, 1 to 1000000")
      ->type_name("N")
      ->capture_default_str();
  app->add_option("--region", opt->region, "Region of this worker")
      ->type_name("R")
      ->capture_default_str();
  app->add_option("--host", opt->host, "Host of this worker within its region")
      ->type_name("H")
      ->required();
  CLI::Option* state_dir =
      app->add_option("--state-dir", opt->state_dir,
                      "Where the time fence is kept (default $SNOWID_STATE_DIR, "
                      "else $XDG_STATE_HOME/snowid, else ~/.local/state/snowid)")
          ->type_name("DIR");
  add_layout_option(*app, opt->layout);
  app->footer(
      "Exit status: 0 ok, 1 the generator refused or I/O failed (ids already printed stay "
      "valid), 2 bad input.");
  return {app, [opt, state_dir](const Operands&) {
            opt->state_dir_given = state_dir->count() > 0;
            return run_next(*opt);
          }};
}

}  // namespace snowid::cli
