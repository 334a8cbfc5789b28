#include "registry_setup.h"

#include <utility>

namespace snowid::daemon {
namespace {

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

}  // namespace

std::string_view registry_kind(const Settings& settings) noexcept {
  if (settings.registry.choice == host::RegistryChoice::kFile) return "file";
  return settings.registry.etcd_endpoints.empty() ? "file" : "etcd";
}

host::RegistryConfig registry_config(const Settings& s, const host::Environment& env) {
  host::RegistryConfig c = s.registry;
  host::read_host_lock_settings(c, env);
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

Result<RegistrySetup> setup_registry(const Settings& settings, const host::Environment& env,
                                     const Clock& clock) {
  RegistrySetup out;
  Result<host::LayoutInEffect> layout = host::layout_in_effect(settings.layout, clock.wall_now());
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
  if (!settings.registry.etcd_endpoints.empty() && !host::etcd_supported()) {
    return Status(Code::kFailedPrecondition,
                  "etcd: this snowidd was built without etcd support (SNOWID_BUILD_ETCD=OFF); "
                  "unset etcd to use the file registry");
  }
  const host::RegistryConfig config = registry_config(settings, env);
  const host::HostSharing sharing =
      host::detect_host_sharing([&env](std::string_view name) { return env.get(name); });
  if (Status s = host::check_registry_choice(config, sharing, out.warning); !s.is_ok()) return s;
  // The fences live in state_dir with either registry.
  if (Status s = host::make_dirs(settings.registry.state_dir); !s.is_ok()) return s;
  Result<std::unique_ptr<WorkerRegistry>> registry = host::open_registry(config, l, clock);
  if (!registry.is_ok()) return registry.status();
  out.registry = std::move(registry).value();
  out.kind = registry_kind(settings);
  out.fences = std::make_shared<host::FenceStores>(settings.registry.state_dir);

  LeasedGeneratorOptions& o = out.options;
  o.generator.layout = l;
  o.generator.not_before = out.layout.not_before;
  // Past the next era's cut-over this layout's ids would read as the next
  // layout's: refused (OUT_OF_RANGE) until the daemon restarts into it.
  o.generator.not_after = out.layout.not_after;
  o.generator.max_backward = settings.max_backward;
  o.lease.region = settings.region;
  o.lease.host = settings.host;
  o.lease.timing = lease_timing(settings);
  o.fence_store_for = [fences = out.fences](WorkerId w) { return fences->store_for(w); };
  return out;
}

}  // namespace snowid::daemon
