// Setting values as text: parsing against a setting's type and bounds,
// formatting for messages and help, and storing into a field of Settings.
// Private to the settings library.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "settings.h"
#include "snowid/status.h"
#include "snowid/time.h"

namespace snowid::daemon {

struct SettingValue : std::variant<std::string, std::int64_t, Duration, std::optional<Address>,
                                   bool, std::vector<std::string>, std::vector<Address>> {
  using variant::variant;
};

// The setting whose `member` (&SettingInfo::name, ::flag or ::env) is
// `key`, or null.
const SettingInfo* find_setting(std::string_view SettingInfo::*member, std::string_view key);

// kInvalidArgument with `message`.
Status invalid(std::string message);

// Parses `text` for `info`'s type, bounds and check; the error names the
// setting (without the source).
Result<SettingValue> parse_value(const SettingInfo& info, std::string_view text);

// "1..64", "100ms..1h", "00..0777", "debug|info|warn|error"; empty for types
// without bounds.
std::string format_bounds(const SettingInfo& info);

std::optional<std::int64_t> parse_int(std::string_view text, int base = 10);

// Stores a value parsed for the field's type. An integer field takes an
// integer value; an optional host takes -1 (the unset word) as nullopt; a
// log level takes its name.
void assign(std::string& field, SettingValue&& v);
void assign(std::int64_t& field, SettingValue&& v);
void assign(std::uint32_t& field, SettingValue&& v);
void assign(std::optional<std::uint32_t>& field, SettingValue&& v);
void assign(Duration& field, SettingValue&& v);
void assign(std::optional<Address>& field, SettingValue&& v);
void assign(bool& field, SettingValue&& v);
void assign(std::vector<std::string>& field, SettingValue&& v);
void assign(std::vector<Address>& field, SettingValue&& v);
void assign(LogLevel& field, SettingValue&& v);
void assign(std::optional<Duration>& field, SettingValue&& v);
void assign(host::RegistryChoice& field, SettingValue&& v);

// The member of `s` that the member pointers `M, Ms...` lead to, in turn.
template <auto M, auto... Ms>
constexpr decltype(auto) member_at(auto& s) noexcept {
  if constexpr (sizeof...(Ms) == 0) {
    return (s.*M);
  } else {
    return member_at<Ms...>(s.*M);
  }
}

// The SettingField of the member of Settings that `Path` leads to: a field
// (field_of<&Settings::socket>) or a field of one
// (field_of<&Settings::registry, &host::RegistryConfig::state_dir>).
template <auto... Path>
inline constexpr SettingField field_of = {
    [](Settings& s, SettingValue&& v) { assign(member_at<Path...>(s), std::move(v)); },
    [](const Settings& a, const Settings& b) {
      return member_at<Path...>(a) == member_at<Path...>(b);
    },
    [](Settings& to, const Settings& from) { member_at<Path...>(to) = member_at<Path...>(from); },
};

}  // namespace snowid::daemon
