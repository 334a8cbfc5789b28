// `snowid workers`: what operators see of the worker-id registry.
//   list [--region R] [--json]   every worker id with a record
//   fence REGION HOST            revoke a lease: its holder stops issuing
//   init                         etcd: declare a namespace new (no first wait)
//   restored [--in-flight-ms N]  etcd: declare its data restored or lost
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "diagnostics.h"
#include "layout_option.h"
#include "number_text.h"
#include "registry_option.h"
#include "snowid/lease_rules.h"

namespace snowid::cli {
namespace {

struct WorkersOptions {
  std::string layout;
  RegistryFlags registry;
};

struct ListOptions {
  WorkersOptions common;
  std::string region;
  CLI::Option* region_option = nullptr;
  bool json = false;
};

struct FenceOptions {
  WorkersOptions common;
  std::string region;
  std::string host;
};

struct RestoredOptions {
  WorkersOptions common;
  std::string in_flight_ms = "8000";
};

// The layout in effect now, which must have worker ids.
Result<const Layout*> layout_now(const WorkersOptions& opt, host::LayoutFile& file) {
  const WallTime now = system_clock().wall_now();
  Result<host::LayoutFile> read = resolve_layout(opt.layout, now);
  if (!read.is_ok()) return read.status();
  file = std::move(read).value();
  Result<std::size_t> era = era_at(file.history, now);
  if (!era.is_ok()) return era.status();
  const Layout* layout = &file.history.eras()[era.value()].layout;
  if (!layout->can_generate()) {
    return Status(Code::kInvalidArgument,
                  "layout " + layout->name() + " is decode-only; it has no worker ids");
  }
  return layout;
}

// The registry for the layout in effect now.
Result<std::unique_ptr<WorkerRegistry>> open_for(const WorkersOptions& opt, const Layout** layout,
                                                 host::LayoutFile& file) {
  Result<const Layout*> now = layout_now(opt, file);
  if (!now.is_ok()) return now.status();
  *layout = now.value();
  Result<host::RegistryConfig> config = resolve_registry(opt.registry, false);
  if (!config.is_ok()) return config.status();
  return host::open_registry(config.value(), **layout, system_clock());
}

int write_out(const std::string& text);

// The registry settings of a store-record command, with the layout in effect.
Result<host::RegistryConfig> store_config(const WorkersOptions& opt, const Layout** layout,
                                          host::LayoutFile& file) {
  Result<const Layout*> now = layout_now(opt, file);
  if (!now.is_ok()) return now.status();
  *layout = now.value();
  return resolve_registry(opt.registry, false);
}

int run_init(const WorkersOptions& opt) {
  host::LayoutFile file;
  const Layout* layout = nullptr;
  Result<host::RegistryConfig> config = store_config(opt, &layout, file);
  if (!config.is_ok()) return report(config.status());
  const Status s = host::initialize_etcd_namespace(config.value(), *layout, system_clock());
  if (s.code() == Code::kAlreadyExists) {
    // Not bad input, and nothing was changed.
    print_error(s.message() + "; nothing changed");
    return kExitFailure;
  }
  if (!s.is_ok()) return report(s);
  return write_out(
      "initialized the namespace: its first holders issue at once, without waiting out what a "
      "lost store's holders may have issued\n");
}

int run_restored(const RestoredOptions& opt) {
  Result<std::uint64_t> ms = parse_number(opt.in_flight_ms, "--in-flight-ms", 0, 3'600'000);
  if (!ms.is_ok()) return report(ms.status());
  host::LayoutFile file;
  const Layout* layout = nullptr;
  Result<host::RegistryConfig> config = store_config(opt.common, &layout, file);
  if (!config.is_ok()) return report(config.status());
  const Result<WallTime> until = host::declare_etcd_data_lost(
      config.value(), *layout, system_clock(),
      std::chrono::milliseconds(static_cast<std::int64_t>(ms.value())));
  if (!until.is_ok()) return report(until.status());
  return write_out("every worker id now counts as used until " + format_iso8601(until.value()) +
                   ": acquirers wait past it, so nothing issued under the old store is issued "
                   "again\n");
}

std::string state_of(const WorkerRecord& r) {
  if (r.holder) return "held";
  if (r.quarantined_until) return "quarantined until " + format_iso8601(*r.quarantined_until);
  return "free";
}

std::string ttl_text(const std::optional<Duration>& ttl) {
  if (!ttl) return "-";
  const auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(*ttl).count() / 100;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "s";
}

std::string optional_time(const std::optional<WallTime>& t) { return t ? format_iso8601(*t) : "-"; }

std::string records_table(const std::vector<WorkerRecord>& records) {
  std::vector<std::vector<std::string>> rows = {{"WORKER", "HOLDER", "TTL", "HIGH-WATER", "STATE"}};
  for (const WorkerRecord& r : records) {
    rows.push_back({to_string(r.worker),
                    r.holder ? r.holder->host + ":" + std::to_string(r.holder->pid) : "-",
                    ttl_text(r.ttl_left), optional_time(r.high_water), state_of(r)});
  }
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::ordered_json time_or_null(const std::optional<WallTime>& t) {
  return t ? nlohmann::ordered_json(format_iso8601(*t)) : nlohmann::ordered_json(nullptr);
}

std::string records_json(const std::vector<WorkerRecord>& records) {
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  for (const WorkerRecord& r : records) {
    nlohmann::ordered_json j;
    j["region"] = r.worker.region;
    j["host"] = r.worker.host;
    j["state"] = r.holder ? "held" : r.quarantined_until ? "quarantined" : "free";
    if (r.holder) {
      j["holder"] = {{"host", r.holder->host},
                     {"pid", r.holder->pid},
                     {"started", format_iso8601(r.holder->started)},
                     {"address", r.holder->address}};
    } else {
      j["holder"] = nullptr;
    }
    j["ttl_left_ms"] =
        r.ttl_left ? nlohmann::ordered_json(
                         std::chrono::duration_cast<std::chrono::milliseconds>(*r.ttl_left).count())
                   : nlohmann::ordered_json(nullptr);
    j["high_water"] = time_or_null(r.high_water);
    j["released_at"] = time_or_null(r.released_at);
    j["quarantined_until"] = time_or_null(r.quarantined_until);
    workers.push_back(std::move(j));
  }
  nlohmann::ordered_json doc;
  doc["workers"] = std::move(workers);
  return doc.dump(2) + "\n";
}

int write_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk
                                  : report(Status(Code::kUnavailable, "cannot write the list"));
}

int run_list(const ListOptions& opt) {
  Result<std::optional<std::uint32_t>> region =
      region_setting(opt.region, opt.region_option->count() > 0);
  if (!region.is_ok()) return report(region.status());
  host::LayoutFile file;
  const Layout* layout = nullptr;
  Result<std::unique_ptr<WorkerRegistry>> registry = open_for(opt.common, &layout, file);
  if (!registry.is_ok()) return report(registry.status());
  if (region.value() && *region.value() >= layout->regions()) {
    return report(Status(Code::kInvalidArgument, "region " + std::to_string(*region.value()) +
                                                     " does not fit layout " + layout->name() +
                                                     " (regions 0 to " +
                                                     std::to_string(layout->regions() - 1) + ")"));
  }
  Result<std::vector<WorkerRecord>> records = registry.value()->list(region.value());
  if (!records.is_ok()) return report(records.status());
  return write_out(opt.json ? records_json(records.value()) : records_table(records.value()));
}

int run_fence(const FenceOptions& opt) {
  Result<std::uint64_t> region = parse_number(opt.region, "REGION", 0, UINT32_MAX);
  if (!region.is_ok()) return report(region.status());
  Result<std::uint64_t> host = parse_number(opt.host, "HOST", 0, UINT32_MAX);
  if (!host.is_ok()) return report(host.status());
  const WorkerId worker{static_cast<std::uint32_t>(region.value()),
                        static_cast<std::uint32_t>(host.value())};
  host::LayoutFile file;
  const Layout* layout = nullptr;
  Result<std::unique_ptr<WorkerRegistry>> registry = open_for(opt.common, &layout, file);
  if (!registry.is_ok()) return report(registry.status());
  if (Status s = layout->check_worker(worker); !s.is_ok()) return report(s);

  // Who holds it, for the message; the fence itself decides.
  std::string holder;
  if (Result<std::vector<WorkerRecord>> records = registry.value()->list(worker.region);
      records.is_ok()) {
    for (const WorkerRecord& r : records.value()) {
      if (r.worker == worker && r.holder) {
        holder = " (held by " + r.holder->host + " pid " + std::to_string(r.holder->pid) + ")";
      }
    }
  }
  const Status fenced = registry.value()->fence(worker);
  if (fenced.code() == Code::kNotFound) {
    // Not bad input: the id exists, nobody holds it (any more).
    print_error(fenced.message());
    return kExitFailure;
  }
  if (!fenced.is_ok()) return report(fenced);
  return write_out("fenced worker " + to_string(worker) + holder +
                   ": its holder stops issuing and the id rests until its high-water mark "
                   "has passed\n");
}

}  // namespace

Command add_workers_command(CLI::App& root) {
  CLI::App* app = root.add_subcommand("workers", "See and fence the leased worker ids");
  app->require_subcommand(1);

  auto list = std::make_shared<ListOptions>();
  CLI::App* list_app =
      app->add_subcommand("list", "Worker ids with a record: holder, TTL, high-water mark, state");
  list->region_option =
      list_app
          ->add_option("--region", list->region,
                       "Only this region (env SNOWID_REGION; default all regions)")
          ->type_name("R");
  list_app->add_flag("--json", list->json, "One JSON document instead of a table");
  add_registry_options(*list_app, list->common.registry);
  add_layout_option(*list_app, list->common.layout);

  auto fence = std::make_shared<FenceOptions>();
  CLI::App* fence_app = app->add_subcommand(
      "fence", "Revoke the lease on a worker id: its holder stops issuing within 100 ms");
  fence_app->add_option("region", fence->region, "Region of the worker id")
      ->type_name("REGION")
      ->required();
  fence_app->add_option("host", fence->host, "Host of the worker id")
      ->type_name("HOST")
      ->required();
  add_registry_options(*fence_app, fence->common.registry);
  add_layout_option(*fence_app, fence->common.layout);

  auto init = std::make_shared<WorkersOptions>();
  CLI::App* init_app = app->add_subcommand(
      "init",
      "etcd: declare a namespace that has never issued an id new, so that its first holders "
      "need not wait out a stop deadline (never after etcd lost its data)");
  add_registry_options(*init_app, init->registry);
  add_layout_option(*init_app, init->layout);

  auto restored = std::make_shared<RestoredOptions>();
  CLI::App* restored_app = app->add_subcommand(
      "restored",
      "etcd: declare that its data was restored from a backup or lost; every acquirer waits "
      "until the old store's holders can no longer be issuing");
  restored_app
      ->add_option("--in-flight-ms", restored->in_flight_ms,
                   "How long a holder of the old store may go on issuing: its lease's stop "
                   "deadline (default 8000)")
      ->type_name("MS");
  add_registry_options(*restored_app, restored->common.registry);
  add_layout_option(*restored_app, restored->common.layout);

  app->footer(
      "All use etcd with --etcd or SNOWID_ETCD_ENDPOINTS, else the file registry in the state "
      "directory, like snowid next (init and restored need etcd).\n"
      "Exit status: 0 ok, 1 failure (the registry could not be reached; fence: the id is not "
      "held; init: the namespace has a record already), 2 bad input.");
  return {app, [list_app, list, fence_app, fence, init_app, init, restored](const Operands&) {
            if (list_app->parsed()) return run_list(*list);
            if (fence_app->parsed()) return run_fence(*fence);
            if (init_app->parsed()) return run_init(*init);
            return run_restored(*restored);
          }};
}

}  // namespace snowid::cli
