#include "settings.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "setting_values.h"
#include "settings_toml.h"
#include "snowid/layout.h"

namespace snowid::daemon {
namespace {

// One value found for a setting, and where.
struct Found {
  std::string source;  // "--region", "SNOWID_REGION", "snowidd.toml:3"
  SettingValue value;
};

// Indexed as settings_table().
using FoundTable = std::vector<std::optional<Found>>;

std::size_t index_of(const SettingInfo& e) {
  return static_cast<std::size_t>(&e - settings_table().data());
}

Status record(FoundTable& found, const SettingInfo& e, std::string source, std::string_view text) {
  Result<SettingValue> v = parse_value(e, text);
  if (!v.is_ok()) return invalid(source + ": " + v.status().message());
  found[index_of(e)] = Found{std::move(source), std::move(v).value()};
  return Status::ok();
}

FoundTable empty_found() { return FoundTable(settings_table().size()); }

// The source of a setting's value, for messages about combinations.
std::string source_of(const FoundTable& found, std::string_view name) {
  const std::optional<Found>& f = found[index_of(*find_setting(&SettingInfo::name, name))];
  return f ? f->source : "default";
}

Status check_combinations(const Settings& s, const FoundTable& found) {
  if (s.lease_ttl % std::chrono::seconds(1) != Duration::zero()) {
    return invalid(source_of(found, "lease_ttl") + ": lease_ttl must be whole seconds, not " +
                   format_duration(s.lease_ttl));
  }
  if (!(s.lease_renew < s.lease_stop)) {
    return invalid(source_of(found, "lease_renew") + ": lease_renew (" +
                   format_duration(s.lease_renew) + ") must be less than lease_stop (" +
                   format_duration(s.lease_stop) + ")");
  }
  if (!(s.lease_stop < s.lease_ttl)) {
    return invalid(source_of(found, "lease_stop") + ": lease_stop (" +
                   format_duration(s.lease_stop) + ") must be less than lease_ttl (" +
                   format_duration(s.lease_ttl) + ")");
  }
  if (s.host_name.size() > 253 || s.host_name.find('/') != std::string::npos) {
    return invalid(source_of(found, "host_name") +
                   ": host_name must be 1 to 253 bytes without '/' (it names etcd keys), not \"" +
                   s.host_name + "\"");
  }
  if (s.monitor_only) {
    if (s.registry.etcd_endpoints.empty()) {
      return invalid(source_of(found, "monitor_only") +
                     ": monitor_only needs etcd (the monitor's peers and votes live there)");
    }
    if (!s.skew_monitor) {
      return invalid(source_of(found, "monitor_only") +
                     ": monitor_only runs nothing but the skew monitor; skew_monitor is false");
    }
    if (!s.tcp && !s.probe_address) {
      return invalid(source_of(found, "monitor_only") +
                     ": monitor_only needs tcp or probe_address, where peers probe its clock");
    }
  }
  if (s.sequence_min_step > s.sequence_max_step) {
    return invalid(source_of(found, "sequence_min_step") + ": sequence_min_step (" +
                   std::to_string(s.sequence_min_step) + ") must be at most sequence_max_step (" +
                   std::to_string(s.sequence_max_step) + ")");
  }
  // A layout file is checked when the daemon reads it; a preset here.
  if (Result<Layout> layout = preset(s.layout); layout.is_ok()) {
    const std::uint64_t regions = layout->regions();
    if (s.region >= regions) {
      return invalid(source_of(found, "region") + ": region must be 0.." +
                     std::to_string(regions - 1) + " (layout " + s.layout + "), not " +
                     std::to_string(s.region));
    }
    const std::uint64_t hosts = layout->workers_per_region();
    if (s.host && *s.host >= hosts) {
      return invalid(source_of(found, "host") + ": host must be 0.." + std::to_string(hosts - 1) +
                     " (layout " + s.layout + "), not " + std::to_string(*s.host));
    }
  }
  return Status::ok();
}

// A password in a PostgreSQL URL: postgresql://user:password@host/... or a
// password=... parameter.
bool has_password(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme != std::string_view::npos) {
    const std::string_view rest = url.substr(scheme + 3);
    const std::size_t at = rest.find('@');
    if (at != std::string_view::npos && rest.substr(0, at).find(':') != std::string_view::npos) {
      return true;
    }
  }
  return url.find("password=") != std::string_view::npos;
}

void add_warnings(Settings& s, const FoundTable& found) {
  auto open = [&](const std::optional<Address>& a, std::string_view name, std::string_view why) {
    if (a && !a->is_loopback()) {
      s.warnings.push_back(std::string(name) + " listens on " + a->to_string() + ", not loopback" +
                           std::string(why));
    }
  };
  if (s.http_token.empty())
    open(s.http, "http", " and without http_token: anyone reaching it can take ids");
  open(s.tcp, "tcp", ": RESP has no authentication, anyone reaching it can take ids");
  for (std::string_view secret : {"http_token", "etcd_password"}) {
    if (source_of(found, secret).starts_with("--")) {
      s.warnings.push_back(std::string(secret) +
                           " given as a flag is visible in the process list; prefer the "
                           "environment or the file");
    }
  }
  if (source_of(found, "sequences").starts_with("--") && has_password(s.sequences)) {
    s.warnings.push_back(
        "sequences given as a flag with a password is visible in the process list; prefer the "
        "environment, the file, or a password file (PGPASSFILE)");
  }
}

}  // namespace

Result<Settings> load_settings(int argc, const char* const* argv, const host::Environment& env) {
  Settings settings;
  FoundTable flags = empty_found();
  std::optional<std::string> config_flag;

  // 1. Flags, checked first so that --help works whatever else is broken.
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      settings.action = Action::kHelp;
      return settings;
    }
    if (arg == "--help-settings") {
      settings.action = Action::kHelpSettings;
      return settings;
    }
    if (!arg.starts_with("--")) return invalid("unexpected argument \"" + std::string(arg) + "\"");
    const std::size_t eq = arg.find('=');
    const std::string_view flag = arg.substr(0, eq);
    std::optional<std::string_view> value;
    if (eq != std::string_view::npos) value = arg.substr(eq + 1);
    const SettingInfo* e = find_setting(&SettingInfo::flag, flag);
    if (e == nullptr && flag != "--config") {
      return invalid("unknown flag " + std::string(flag) + " (snowidd --help-settings lists them)");
    }
    if (!value) {
      if (e != nullptr && e->type == SettingType::kBool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return invalid(std::string(flag) + " needs a value");
      }
    }
    if (e == nullptr) {
      if (value->empty()) return invalid("--config needs a file name");
      config_flag = std::string(*value);
      continue;
    }
    if (Status s = record(flags, *e, std::string(flag), *value); !s.is_ok()) return s;
  }

  // 2. The environment. An empty variable counts as unset, except where the
  // setting says it is a value.
  FoundTable vars = empty_found();
  for (const SettingInfo& e : settings_table()) {
    if (std::optional<std::string> v =
            e.empty_env_is_value ? env.get(e.env) : host::nonempty(env, e.env)) {
      if (Status s = record(vars, e, std::string(e.env), *v); !s.is_ok()) return s;
    } else if (!e.env_alias.empty()) {
      if (std::optional<std::string> alias = env.get(e.env_alias)) {
        if (Status s = record(vars, e, std::string(e.env_alias), *alias); !s.is_ok()) return s;
      }
    }
  }

  // 3. The TOML file.
  FoundTable file = empty_found();
  if (!config_flag) config_flag = host::nonempty(env, "SNOWID_CONFIG");
  if (config_flag) {
    const auto take = [&file](const SettingInfo& e, std::string source, std::string_view text) {
      return record(file, e, std::move(source), text);
    };
    if (Status s = read_toml(*config_flag, env, take); !s.is_ok()) return s;
    settings.config_file = *config_flag;
  }

  // Merge, highest precedence first; then apply (4) the defaults, the
  // computed ones last, in list order.
  const std::span<const SettingInfo> table = settings_table();
  FoundTable found = empty_found();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (flags[i]) {
      found[i] = std::move(flags[i]);
    } else if (vars[i]) {
      found[i] = std::move(vars[i]);
    } else if (file[i]) {
      found[i] = std::move(file[i]);
    }
  }
  for (std::size_t i = 0; i < table.size(); ++i) {
    const SettingInfo& e = table[i];
    if (found[i]) {
      e.field.store(settings, std::move(found[i]->value));
    } else if (!e.computed_default()) {
      Result<SettingValue> v = parse_value(e, e.default_text);
      assert(v.is_ok());  // the list's own defaults are tested
      if (v.is_ok()) e.field.store(settings, std::move(v).value());
    }
  }
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (found[i] || !table[i].computed_default()) continue;
    if (Status s = table[i].compute_default(settings, env); !s.is_ok()) return s;
  }

  if (Status s = check_combinations(settings, found); !s.is_ok()) return s;
  add_warnings(settings, found);
  return settings;
}

std::string describe_settings() {
  std::string out =
      "snowidd settings. Precedence, highest first: flags, SNOWID_* environment variables,\n"
      "the TOML file (--config FILE or SNOWID_CONFIG), the defaults below. Durations take\n"
      "ms, s, m or h (a bare number is milliseconds). \"runtime\" settings may change while\n"
      "the daemon runs; the others, the layout above all, are fixed at start.\n";
  for (const SettingInfo& info : settings_table()) {
    out += "\n" + std::string(info.name) + "  " + std::string(info.flag) + "  " +
           std::string(info.env) + "\n";
    out += "    " + std::string(setting_type_name(info.type));
    if (const std::string bounds = format_bounds(info); !bounds.empty()) out += " " + bounds;
    out += "; default: ";
    out += info.default_text.empty() ? "(empty)" : std::string(info.default_text);
    out += info.runtime() ? "; runtime\n" : "; fixed\n";
    out += "    " + std::string(info.description) + "\n";
  }
  return out;
}

std::string apply_runtime(Settings& running, const Settings& fresh, const RuntimeTargets& targets) {
  std::vector<std::string_view> names;
  for (const SettingInfo& info : settings_table()) {
    if (!info.runtime() || info.field.same(running, fresh)) continue;
    info.field.copy(running, fresh);
    info.apply(running, targets);
    names.push_back(info.name);
  }
  // In name order, as the "reloaded" log line has always listed them.
  std::sort(names.begin(), names.end());
  std::string changed;
  for (std::string_view n : names) changed += (changed.empty() ? "" : ",") + std::string(n);
  return changed;
}

std::string fixed_differences(const Settings& a, const Settings& b) {
  std::string out;
  for (const SettingInfo& info : settings_table()) {
    if (info.runtime() || info.field.same(a, b)) continue;
    out += (out.empty() ? "" : ",") + std::string(info.name);
  }
  return out;
}

}  // namespace snowid::daemon
