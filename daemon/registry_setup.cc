#include "registry_setup.h"

#include <utility>

#ifdef SNOWID_DAEMON_LAYOUT_FILE
#include "layout_file.h"
#endif

namespace snowid::daemon {
namespace {

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

bool is_layout_file(std::string_view value) {
  return value.find('/') != std::string_view::npos || value.ends_with(".json");
}

Result<DaemonLayout> layout_from_file(const std::string& path, WallTime now) {
#ifdef SNOWID_DAEMON_LAYOUT_FILE
  Result<cli::LayoutFile> file = cli::read_layout_file(path);
  if (!file.is_ok()) return Status(file.status().code(), "layout: " + file.status().message());
  // The era in effect now: the last whose cut-over has come.
  const std::vector<LayoutEra>& eras = file->history.eras();
  const LayoutEra* current = nullptr;
  for (const LayoutEra& era : eras) {
    if (era.cutover <= now) current = &era;
  }
  if (current == nullptr) {
    return invalid("layout: " + path + " starts in the future (its first cut-over is " +
                   format_iso8601(eras.front().cutover) + "); no id of it can be made yet");
  }
  return DaemonLayout{current->layout, current->cutover};
#else
  (void)now;
  return Status(Code::kFailedPrecondition,
                "layout: " + path +
                    " is a layout file, and this snowidd was built without the layout-file "
                    "reader (it comes with the snowid tool: SNOWID_BUILD_TOOLS=ON); use a preset");
#endif
}

}  // namespace

Result<DaemonLayout> resolve_layout(const std::string& name_or_path, WallTime now) {
  DaemonLayout out;
  if (is_layout_file(name_or_path)) {
    Result<DaemonLayout> file = layout_from_file(name_or_path, now);
    if (!file.is_ok()) return file.status();
    out = std::move(file).value();
  } else {
    Result<Layout> named = preset(name_or_path);
    if (!named.is_ok()) {
      std::string names;
      for (std::string_view n : preset_names())
        names += (names.empty() ? "" : ", ") + std::string(n);
      return invalid("layout: unknown preset \"" + name_or_path + "\" (presets: " + names +
                     "; a layout file's name contains '/' or ends with .json)");
    }
    out.layout = std::move(named).value();
  }
  if (!out.layout.can_generate()) {
    return invalid("layout: " + out.layout.name() +
                   " is decode-only; snowidd needs a layout it can generate with");
  }
  return out;
}

std::string_view registry_kind(const Settings& settings) noexcept {
  if (settings.registry == "file") return "file";
  return settings.etcd.empty() ? "file" : "etcd";
}

common::RegistryConfig registry_config(const Settings& s, const Environment& env) {
  common::RegistryConfig c;
  c.choice = s.registry == "file"   ? common::RegistryChoice::kFile
             : s.registry == "etcd" ? common::RegistryChoice::kEtcd
                                    : common::RegistryChoice::kAuto;
  c.state_dir = s.state_dir;
  c.etcd_endpoints = s.etcd;
  common::copy_etcd_access(s, c);
  c.quarantine = s.quarantine;
  c.host_lock = env.get("SNOWID_HOST_LOCK").value_or("");
  c.host_dir = env.get("SNOWID_HOST_DIR").value_or("");
  return c;
}

LeaseTiming lease_timing(const Settings& s) {
  LeaseTiming t;
  t.ttl = s.lease_ttl;
  t.renew_every = s.lease_renew;
  t.stop_after = s.lease_stop;
  t.max_clock_skew = s.max_clock_skew;
  return t;
}

FenceStores::FenceStores(std::string state_dir) : dir_(std::move(state_dir)) {}

std::shared_ptr<FenceStore> FenceStores::store_for(WorkerId worker) {
  auto store = std::make_shared<common::RecordingFenceStore>(common::fence_path(dir_, worker));
  std::lock_guard<std::mutex> lock(mu_);
  stores_.push_back(store);
  return store;
}

Status FenceStores::last_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = stores_.rbegin(); it != stores_.rend(); ++it) {
    if (!(*it)->last_failure().is_ok()) return (*it)->last_failure();
  }
  return Status::ok();
}

Result<RegistrySetup> setup_registry(const Settings& settings, const Environment& env,
                                     const Clock& clock) {
  RegistrySetup out;
  Result<DaemonLayout> layout = resolve_layout(settings.layout, clock.wall_now());
  if (!layout.is_ok()) return layout.status();
  out.layout = std::move(layout).value();
  const Layout& l = out.layout.layout;
  // Settings checks these against a preset; a layout file is known only now.
  if (settings.region >= l.regions()) {
    return invalid("region must be 0.." + std::to_string(l.regions() - 1) + " (layout " + l.name() +
                   "), not " + std::to_string(settings.region));
  }
  if (settings.host && *settings.host >= l.workers_per_region()) {
    return invalid("host must be 0.." + std::to_string(l.workers_per_region() - 1) + " (layout " +
                   l.name() + "), not " + std::to_string(*settings.host));
  }
  if (!settings.etcd.empty() && !common::etcd_supported()) {
    return Status(Code::kFailedPrecondition,
                  "etcd: this snowidd was built without etcd support (SNOWID_BUILD_ETCD=OFF); "
                  "unset etcd to use the file registry");
  }
  const common::RegistryConfig config = registry_config(settings, env);
  const common::HostSharing sharing =
      common::detect_host_sharing([&env](std::string_view name) { return env.get(name); });
  if (Status s = common::check_registry_choice(config, sharing, out.warning); !s.is_ok()) return s;
  // The fences live in state_dir with either registry.
  if (Status s = common::make_dirs(settings.state_dir); !s.is_ok()) return s;
  Result<std::unique_ptr<WorkerRegistry>> registry = common::open_registry(config, l, clock);
  if (!registry.is_ok()) return registry.status();
  out.registry = std::move(registry).value();
  out.kind = registry_kind(settings);
  out.fences = std::make_shared<FenceStores>(settings.state_dir);

  LeasedGeneratorOptions& o = out.options;
  o.generator.layout = l;
  o.generator.not_before = out.layout.not_before;
  o.generator.max_backward = settings.max_backward;
  o.lease.region = settings.region;
  o.lease.host = settings.host;
  o.lease.timing = lease_timing(settings);
  o.fence_store_for = [fences = out.fences](WorkerId w) { return fences->store_for(w); };
  return out;
}

}  // namespace snowid::daemon
