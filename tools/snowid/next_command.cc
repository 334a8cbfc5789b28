// `snowid next`: lease a worker id from the registry (etcd, or the file
// registry of this host), generate ids under that lease, keep each worker's
// time fence in the state directory so that a later run never reuses time,
// and give the id back at the end.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "diagnostics.h"
#include "issue_ids.h"
#include "layout_describe.h"
#include "layout_option.h"
#include "number_text.h"
#include "registry_option.h"
#include "state_dir.h"

namespace snowid::cli {
namespace {

constexpr std::uint64_t kMaxCount = 1'000'000;

struct NextOptions {
  std::string count = "1";
  std::string region;
  std::string host;
  std::string layout;
  bool follow = false;
  RegistryFlags registry;
  CLI::Option* region_option = nullptr;
  CLI::Option* host_option = nullptr;
};

int run_next(const NextOptions& opt) {
  Result<std::uint64_t> count = parse_number(opt.count, "-n", 1, kMaxCount);
  if (!count.is_ok()) return report(count.status());
  Result<std::optional<std::uint32_t>> region =
      region_setting(opt.region, opt.region_option->count() > 0);
  if (!region.is_ok()) return report(region.status());
  std::optional<std::uint32_t> host;
  if (opt.host_option->count() > 0) {
    Result<std::uint64_t> h = parse_number(opt.host, "--host", 0, UINT32_MAX);
    if (!h.is_ok()) return report(h.status());
    host = static_cast<std::uint32_t>(h.value());
  }
  const WorkerId worker{region.value().value_or(0), host.value_or(0)};

  const WallTime now = system_clock().wall_now();
  Result<host::LayoutFile> file = resolve_layout(opt.layout, now);
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

  Result<host::RegistryConfig> settings = resolve_registry(opt.registry, true);
  if (!settings.is_ok()) return report(settings.status());
  if (Status s = check_registry_choice(settings.value()); !s.is_ok()) return report(s);
  if (Status s = host::make_dirs(settings->state_dir); !s.is_ok()) return report(s);
  IssueRequest request;
  request.history = &file->history;
  request.era = era.value();
  request.region = worker.region;
  request.host = host;
  const host::RegistryConfig registry = settings.value();
  request.open_registry = [registry](const Layout& l) {
    return host::open_registry(registry, l, system_clock());
  };
  request.timing = lease_timing_for(registry);
  request.holder = this_holder(now);
  request.state_dir = registry.state_dir;
  request.count = count.value();
  return opt.follow ? follow_ids(request, STDIN_FILENO, stdout) : issue_ids(request, stdout);
}

}  // namespace

Command add_next_command(CLI::App& root) {
  auto opt = std::make_shared<NextOptions>();
  CLI::App* app = root.add_subcommand(
      "next", "Generate ids, one per line, on a worker id leased from the registry");
  app->add_option("-n,--count", opt->count,
                  "How many ids, 1 to 1000000 (per request with --follow)")
      ->type_name("N")
      ->capture_default_str();
  opt->region_option =
      app->add_option("--region", opt->region, "Region to lease in (env SNOWID_REGION, default 0)")
          ->type_name("R");
  opt->host_option = app->add_option("--host", opt->host,
                                     "Pin this host id of the region instead of leasing any "
                                     "free one; waits up to 10 s while another run holds it")
                         ->type_name("H");
  app->add_flag("--follow", opt->follow,
                "Keep the lease and answer requests from stdin: an empty line prints -n ids, a "
                "number N prints N; ends at end of input or on SIGTERM/SIGINT");
  add_registry_options(*app, opt->registry);
  add_layout_option(*app, opt->layout);
  app->footer(
      "The worker id is leased from etcd (--etcd or SNOWID_ETCD_ENDPOINTS) or, without it, from "
      "the file registry in the state directory, and released at the end.\n"
      "Exit status: 0 ok, 1 the generator refused, no worker id was free, the registry could "
      "not be reached or I/O failed (ids already printed stay valid), 2 bad input.");
  return {app, [opt](const Operands&) { return run_next(*opt); }};
}

}  // namespace snowid::cli
