#include "setting_values.h"

#include <charconv>
#include <cstdio>

#include "snowid/etcd_endpoints.h"

namespace snowid::daemon {
namespace {

constexpr std::int64_t kHourMs = 3600 * 1000;
// An integer setting's unset word, as a value.
constexpr std::int64_t kUnset = -1;

constexpr std::int64_t ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

template <typename T>
T take(SettingValue&& v) {
  return std::get<T>(std::move(v));
}

std::string shown(const SettingInfo& info, std::string_view text) {
  if (info.secret) return "(secret)";
  return "\"" + std::string(text) + "\"";
}

std::optional<Duration> parse_duration_text(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return std::nullopt;
  const std::optional<std::int64_t> n = parse_int(text.substr(0, digits));
  if (!n) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "ms") {
    scale = 1;
  } else if (unit == "s") {
    scale = 1000;
  } else if (unit == "m") {
    scale = 60 * 1000;
  } else if (unit == "h") {
    scale = kHourMs;
  } else {
    return std::nullopt;
  }
  // 100 days in ms fits easily; anything larger is out of every bound anyway.
  if (*n > 100LL * 24 * kHourMs / scale) return std::chrono::hours(24 * 1000);
  return std::chrono::milliseconds(*n * scale);
}

// "off", or the etcd endpoint list by the one parser every front end uses
// (snowid/etcd_endpoints.h), so that a URL the registry could never reach
// (no port, a path, a bad host) is refused here, as a usage error, rather
// than when the daemon starts to connect.
Result<std::vector<std::string>> parse_endpoints(const SettingInfo& info, std::string_view text) {
  if (text == "off") return std::vector<std::string>();
  // Never read as "no etcd": an empty value is most often a variable that a
  // deployment meant to fill, and the file registry in its place would give
  // every pod the same worker id.
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return invalid(std::string(info.name) +
                   " is empty; give etcd member URLs (URL[,URL...]), or off for the file registry");
  }
  return parse_etcd_endpoints(std::string(text));
}

}  // namespace

const SettingInfo* find_setting(std::string_view SettingInfo::*member, std::string_view key) {
  for (const SettingInfo& info : settings_table()) {
    if (info.*member == key) return &info;
  }
  return nullptr;
}

Status invalid(std::string message) { return Status(Code::kInvalidArgument, std::move(message)); }

std::optional<std::int64_t> parse_int(std::string_view text, int base) {
  std::int64_t v = 0;
  if (text.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string format_bounds(const SettingInfo& info) {
  switch (info.type) {
    case SettingType::kInteger:
      return std::to_string(info.min) + ".." + std::to_string(info.max);
    case SettingType::kDuration:
      return format_duration(std::chrono::milliseconds(info.min)) + ".." +
             format_duration(std::chrono::milliseconds(info.max));
    case SettingType::kMode: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0%llo..0%llo", static_cast<unsigned long long>(info.min),
                    static_cast<unsigned long long>(info.max));
      return buf;
    }
    case SettingType::kEnum: {
      std::string out;
      for (std::string_view c : info.choices) out += (out.empty() ? "" : "|") + std::string(c);
      return out;
    }
    default:
      return "";
  }
}

// Parses `text` for `info`'s type and bounds; the error names the setting.
Result<SettingValue> parse_value(const SettingInfo& info, std::string_view text) {
  auto fail = [&](std::string problem) -> Result<SettingValue> {
    return invalid(std::string(info.name) + " " + problem);
  };
  switch (info.type) {
    case SettingType::kString:
      if (text.find('\0') != std::string_view::npos) return fail("must not contain NUL");
      if (info.check != nullptr) {
        // The problem never echoes the value: it may hold a password.
        if (const std::string_view problem = info.check(text); !problem.empty()) {
          return fail(std::string(problem));
        }
      }
      return SettingValue(std::string(text));
    case SettingType::kInteger: {
      if (!info.unset_word.empty() && text == info.unset_word) return SettingValue(kUnset);
      const std::optional<std::int64_t> v = parse_int(text);
      if (!v || *v < info.min || *v > info.max) {
        const std::string unset =
            info.unset_word.empty() ? "" : std::string(info.unset_word) + " or ";
        return fail("must be " + unset + format_bounds(info) + ", not " + shown(info, text));
      }
      return SettingValue(*v);
    }
    case SettingType::kDuration: {
      const std::optional<Duration> d = parse_duration_text(text);
      if (!d) {
        return fail("must be a duration such as 250ms, 10s or 2m (a bare number is ms), not " +
                    shown(info, text));
      }
      if (ms(*d) < info.min || ms(*d) > info.max) {
        return fail("must be " + format_bounds(info) + ", not " + format_duration(*d));
      }
      return SettingValue(*d);
    }
    case SettingType::kAddress: {
      if (text == "off") return SettingValue(std::optional<Address>());
      Result<Address> a = parse_address(text);
      if (!a.is_ok()) return fail(a.status().message());
      return SettingValue(std::optional<Address>(std::move(a).value()));
    }
    case SettingType::kMode: {
      std::string_view digits = text;
      if (digits.starts_with("0o")) digits.remove_prefix(2);
      const std::optional<std::int64_t> v = parse_int(digits, 8);
      if (!v || *v < info.min || *v > info.max) {
        return fail("must be an octal mode " + format_bounds(info) + ", not " + shown(info, text));
      }
      return SettingValue(*v);
    }
    case SettingType::kEnum:
      for (std::string_view c : info.choices) {
        if (c == text) return SettingValue(std::string(text));
      }
      return fail("must be one of " + format_bounds(info) + ", not " + shown(info, text));
    case SettingType::kBool:
      if (text == "true") return SettingValue(true);
      if (text == "false") return SettingValue(false);
      return fail("must be true or false, not " + shown(info, text));
    case SettingType::kEndpoints: {
      // The parser's message names the bad URL and says "etcd endpoint", in
      // the words the `snowid` tool uses for the same text.
      Result<std::vector<std::string>> urls = parse_endpoints(info, text);
      if (!urls.is_ok()) return urls.status();
      return SettingValue(std::move(urls).value());
    }
    case SettingType::kAddresses: {
      std::vector<Address> list;
      if (text.empty() || text == "off") return SettingValue(std::move(list));
      for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        Result<Address> a = parse_address(text.substr(start, comma - start));
        if (!a.is_ok()) return fail(a.status().message());
        list.push_back(std::move(a).value());
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return SettingValue(std::move(list));
    }
  }
  return fail("has an unknown type");
}

void assign(std::string& field, SettingValue&& v) { field = take<std::string>(std::move(v)); }
void assign(std::int64_t& field, SettingValue&& v) { field = take<std::int64_t>(std::move(v)); }
void assign(std::uint32_t& field, SettingValue&& v) {
  field = static_cast<std::uint32_t>(take<std::int64_t>(std::move(v)));
}
void assign(std::optional<std::uint32_t>& field, SettingValue&& v) {
  const std::int64_t n = take<std::int64_t>(std::move(v));
  field = n == kUnset ? std::nullopt : std::optional<std::uint32_t>(static_cast<std::uint32_t>(n));
}
void assign(Duration& field, SettingValue&& v) { field = take<Duration>(std::move(v)); }
void assign(std::optional<Address>& field, SettingValue&& v) {
  field = take<std::optional<Address>>(std::move(v));
}
void assign(bool& field, SettingValue&& v) { field = take<bool>(std::move(v)); }
void assign(std::vector<Address>& field, SettingValue&& v) {
  field = take<std::vector<Address>>(std::move(v));
}
void assign(std::vector<std::string>& field, SettingValue&& v) {
  field = take<std::vector<std::string>>(std::move(v));
}
void assign(std::optional<Duration>& field, SettingValue&& v) {
  field = take<Duration>(std::move(v));
}
void assign(host::RegistryChoice& field, SettingValue&& v) {
  const std::string name = take<std::string>(std::move(v));
  for (const host::RegistryChoice c :
       {host::RegistryChoice::kAuto, host::RegistryChoice::kFile, host::RegistryChoice::kEtcd}) {
    if (host::registry_choice_name(c) == name) field = c;
  }
}
void assign(LogLevel& field, SettingValue&& v) {
  const std::string name = take<std::string>(std::move(v));
  for (std::size_t i = 0; i < kLogLevelNames.size(); ++i) {
    if (kLogLevelNames[i] == name) field = static_cast<LogLevel>(i);
  }
}

std::string_view setting_type_name(SettingType type) noexcept {
  switch (type) {
    case SettingType::kString:
      return "string";
    case SettingType::kInteger:
      return "integer";
    case SettingType::kDuration:
      return "duration";
    case SettingType::kAddress:
      return "address";
    case SettingType::kMode:
      return "mode";
    case SettingType::kEnum:
      return "enum";
    case SettingType::kBool:
      return "bool";
    case SettingType::kEndpoints:
      return "urls";
    case SettingType::kAddresses:
      return "addresses";
  }
  return "?";
}

std::string format_duration(Duration d) {
  const std::int64_t n = ms(d);
  if (n != 0 && n % kHourMs == 0) return std::to_string(n / kHourMs) + "h";
  if (n != 0 && n % 60000 == 0) return std::to_string(n / 60000) + "m";
  if (n != 0 && n % 1000 == 0) return std::to_string(n / 1000) + "s";
  return std::to_string(n) + "ms";
}

}  // namespace snowid::daemon
