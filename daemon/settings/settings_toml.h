// The TOML file of snowidd's settings. Private to the settings library; the
// only user of toml++.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "environment.h"
#include "settings.h"
#include "snowid/status.h"

namespace snowid::daemon {

// Takes one value found for a setting: its source ("snowidd.toml:3") and the
// value as text in the setting's syntax.
using TakeText =
    std::function<Status(const SettingInfo& setting, std::string source, std::string_view text)>;

// Reads the file at `path` and hands each key's value to `take`, in file
// order, stopping at the first error. Errors name the file and line: not
// valid TOML, an unknown key, a value of the wrong TOML type, or take's.
Status read_toml(const std::string& path, const host::Environment& env, const TakeText& take);

}  // namespace snowid::daemon
